package io.modelgateway.core.limit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A per-minute bucket (requests or tokens) of one scope. A bucket of capacity C refills C per minute,
 * continuously; a request takes its cost if what is in use, after refilling, leaves room for it.
 *
 * <p>The capacity is not stored: every call passes the limit of the config in force, so a reload that changes
 * a limit applies it to the usage already counted. That is why the level is kept in tokens (or requests)
 * used and not in time (as GCRA does): a level in time units would silently change meaning with the rate.
 *
 * <p>Thread safety: called from every event loop at once. The state is one immutable {@link Level} swapped by
 * compare-and-set, so an update is never lost or torn and nothing blocks; a failed CAS means another loop got
 * there first, and the loop retries on the fresh level.
 */
final class TokenBucket {
    /** The refill period: C per minute. */
    static final long WINDOW_NANOS = 60_000_000_000L;

    /**
     * {@code used} tokens (or requests) were in use at {@code atNanos}; time since then has refilled the bucket
     * but is not applied yet. {@code used} may exceed the capacity: debt, from exchanges that used more than
     * they reserved. When {@code used} is 0, {@code atNanos} means nothing: a full bucket banks no refill.
     */
    record Level(long used, long atNanos) {
    }

    private static final Level FULL = new Level(0, 0);
    private static final VarHandle LEVEL;

    static {
        try {
            LEVEL = MethodHandles.lookup().findVarHandle(TokenBucket.class, "level", Level.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Replaced only by compare-and-set through {@link #LEVEL}. */
    private volatile Level level = FULL;

    /**
     * Takes {@code cost} if, after refilling up to {@code now}, {@code used + cost <= capacity}.
     *
     * @param cost at most {@code capacity}, so a full bucket always admits
     * @return the level after taking (what the rate-limit headers report), or null when refused (nothing taken)
     */
    Level take(long cost, long capacity, long now) {
        for (;;) {
            Level cur = level;
            // The refill is worked out in locals rather than through refill(): one Level per attempt instead of
            // two, since escape analysis does not remove an object that may also be the shared one.
            long used = cur.used;
            long at = now;
            if (used != 0) {
                long elapsed = now - cur.atNanos;
                if (elapsed <= 0) {
                    at = cur.atNanos;
                } else {
                    long refilled = refilled(elapsed, capacity);
                    if (refilled >= used) {
                        used = 0;
                    } else {
                        used -= refilled;
                        at = refilledAt(cur.atNanos, refilled, capacity, now);
                    }
                }
            }
            if (used > capacity - cost) {
                return null;
            }
            Level next = new Level(used + cost, at);
            if (LEVEL.compareAndSet(this, cur, next)) {
                return next;
            }
        }
    }

    /**
     * Adds {@code delta} to what is in use, never going below 0. Debt added now (delta > 0) is added after
     * refilling up to {@code now}, so that time that passed before it existed does not pay it off.
     */
    void add(long delta, long capacity, long now) {
        if (delta < 0) {
            giveBack(-delta);
            return;
        }
        if (delta == 0) {
            return;
        }
        for (;;) {
            Level cur = level;
            Level base = refill(cur, capacity, now);
            Level next = new Level(saturatedAdd(base.used, delta), base.atNanos);
            if (LEVEL.compareAndSet(this, cur, next)) {
                return;
            }
        }
    }

    /**
     * Gives back {@code amount} (> 0) without reading the clock: subtracting commutes with refilling (both only
     * lower the level, clamped at 0), so the refill can wait for the next {@link #take}.
     */
    void giveBack(long amount) {
        for (;;) {
            Level cur = level;
            long used = cur.used - amount;
            Level next = used <= 0 ? FULL : new Level(used, cur.atNanos);
            if (cur.used == 0 || LEVEL.compareAndSet(this, cur, next)) {
                return;
            }
        }
    }

    /** The level refilled up to {@code now}, changing nothing: what a refusal reports and waits out. */
    Level peek(long capacity, long now) {
        return refill(level, capacity, now);
    }

    /** {@code cur} with the refill of the time up to {@code now} applied. */
    private static Level refill(Level cur, long capacity, long now) {
        if (cur.used == 0) {
            return cur.atNanos == now ? cur : new Level(0, now);
        }
        long elapsed = now - cur.atNanos;
        if (elapsed <= 0) {
            return cur; // another loop read the clock a little later than this one
        }
        long refilled = refilled(elapsed, capacity);
        if (refilled >= cur.used) {
            return new Level(0, now);
        }
        if (refilled == 0) {
            return cur;
        }
        return new Level(cur.used - refilled, refilledAt(cur.atNanos, refilled, capacity, now));
    }

    /**
     * The instant a level last exact at {@code at} is exact again after {@code refilled} whole tokens: advanced
     * only by the time those tokens took, so the fraction of the next one carries over. Otherwise callers
     * polling faster than one token's time would never see a refill.
     */
    private static long refilledAt(long at, long refilled, long capacity, long now) {
        return refilled <= Long.MAX_VALUE / WINDOW_NANOS ? at + nanosToRefill(refilled, capacity, false) : now;
    }

    /** Nanoseconds from {@code level} until the bucket is full again (0 when it is). */
    static long nanosUntilFull(Level level, long capacity, long now) {
        if (level.used == 0) {
            return 0;
        }
        return Math.max(0, saturatedAdd(nanosToRefill(level.used, capacity, true), level.atNanos - now));
    }

    /** Nanoseconds from {@code level} until {@code cost} fits under {@code capacity} (0 when it does). */
    static long nanosUntilRoom(Level level, long cost, long capacity, long now) {
        long missing = level.used - (capacity - cost);
        if (missing <= 0) {
            return 0;
        }
        return Math.max(0, saturatedAdd(nanosToRefill(missing, capacity, true), level.atNanos - now));
    }

    /** Whole tokens a bucket of {@code capacity} per minute refills in {@code elapsedNanos} (> 0). */
    static long refilled(long elapsedNanos, long capacity) {
        long minutes = elapsedNanos / WINDOW_NANOS;
        long rest = elapsedNanos % WINDOW_NANOS;
        // Exact integer arithmetic while the product fits in a long (capacities up to ~150 million a minute);
        // beyond that a double is off by far less than one token in a minute's worth.
        long part = capacity <= Long.MAX_VALUE / WINDOW_NANOS ? rest * capacity / WINDOW_NANOS
                : (long) ((double) rest * capacity / WINDOW_NANOS);
        if (minutes == 0) {
            return part;
        }
        long whole = capacity <= Long.MAX_VALUE / minutes ? minutes * capacity : Long.MAX_VALUE;
        return saturatedAdd(whole, part);
    }

    /** Nanoseconds a bucket of {@code capacity} per minute takes to refill {@code tokens} (>= 0). */
    static long nanosToRefill(long tokens, long capacity, boolean roundUp) {
        if (tokens <= Long.MAX_VALUE / WINDOW_NANOS) {
            long product = tokens * WINDOW_NANOS;
            long q = product / capacity;
            return roundUp && q * capacity != product ? q + 1 : q;
        }
        double d = (double) tokens * WINDOW_NANOS / capacity;
        return d >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) (roundUp ? Math.ceil(d) : d);
    }

    static long saturatedAdd(long a, long b) {
        long r = a + b;
        // Overflow iff both operands have the sign opposite to the result's.
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }
}
