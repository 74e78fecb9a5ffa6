package io.modelgateway.core.limit;

import io.modelgateway.codecs.Saturating;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The tokens one scope used on the current UTC day. Like {@link TokenBucket} it stores usage, never the budget,
 * so a reload that changes the budget applies to what the day already used. The sums saturate: an absurd
 * settlement spends the day's budget, and the scope is refused only until the next UTC midnight.
 *
 * <p>Thread safety: one immutable {@link DayUsage} swapped by compare-and-set; lock-free.
 */
final class DailyBudget {
    static final long DAY_MILLIS = 86_400_000L;

    /** {@code used} tokens on {@code day} (days since the epoch, UTC). */
    record DayUsage(long day, long used) {
    }

    private static final DayUsage NONE = new DayUsage(Long.MIN_VALUE, 0);
    private static final VarHandle USAGE;

    static {
        try {
            USAGE = MethodHandles.lookup().findVarHandle(DailyBudget.class, "usage", DayUsage.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Replaced only by compare-and-set through {@link #USAGE}; a new day simply starts from 0. */
    private volatile DayUsage usage = NONE;

    /**
     * Reserves {@code estimate} tokens of {@code today} if the day's usage is still under {@code budget}.
     * "Under budget" rather than "room for the estimate": the last request of a day may overshoot, which
     * costs at most one exchange's tokens, where the alternative would strand a budget's tail that no
     * realistic request fits in.
     *
     * @return false when the budget is spent (nothing reserved)
     */
    boolean take(long estimate, long budget, long today) {
        for (;;) {
            DayUsage cur = usage;
            long used = cur.day == today ? cur.used : 0;
            if (used >= budget) {
                return false;
            }
            if (USAGE.compareAndSet(this, cur, new DayUsage(today, Saturating.add(used, estimate)))) {
                return true;
            }
        }
    }

    /**
     * Corrects the usage of {@code day} by {@code delta}, never below 0. A correction for a day that has ended
     * is dropped: that day's budget no longer matters, and charging the new day for an exchange admitted the
     * day before would be wrong as well.
     */
    void adjust(long day, long delta) {
        if (delta == 0) {
            return;
        }
        for (;;) {
            DayUsage cur = usage;
            if (cur.day != day) {
                return;
            }
            long used = Math.max(0, Saturating.add(cur.used, delta));
            if (USAGE.compareAndSet(this, cur, new DayUsage(day, used))) {
                return;
            }
        }
    }

    /**
     * Adds {@code delta} (never below 0 in all) to the usage of {@code day}, which starts from 0 when the usage held is
     * of an earlier day; dropped when the usage held is of a later day already (an exchange that began before
     * midnight and ended after it counts on neither day's new budget). For what is counted only at the end (a key's
     * spend without a budget for that period).
     */
    void add(long day, long delta) {
        if (delta == 0) {
            return;
        }
        for (;;) {
            DayUsage cur = usage;
            if (cur.day > day) {
                return;
            }
            long used = Math.max(0, Saturating.add(cur.day == day ? cur.used : 0, delta));
            if (USAGE.compareAndSet(this, cur, new DayUsage(day, used))) {
                return;
            }
        }
    }

    /** Tokens used on {@code today} so far. */
    long used(long today) {
        DayUsage cur = usage;
        return cur.day == today ? cur.used : 0;
    }

    static long dayOf(long epochMillis) {
        return Math.floorDiv(epochMillis, DAY_MILLIS);
    }
}
