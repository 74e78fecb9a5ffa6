package io.modelgateway.core.limit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.BudgetConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.Admission;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The spend of every key in US dollars, per UTC day and per UTC month, and its budgets ({@code keys[i].budget_usd}):
 * kept like the daily token budgets ({@link DailyBudget}: usage per period, swapped by compare-and-set, a new period
 * starting from 0), in micro-dollars so that the sums are exact and saturate instead of wrapping. State is kept by key
 * name, so it survives a reload and a changed budget applies to what was spent already.
 *
 * <p>An exchange of a key with a budget is admitted while each budgeted period's spend is under its budget, and then
 * reserves its estimated cost ({@link #reserve}); when it ends, the reservation is settled with the real cost
 * ({@link SpendAdmission}). Exchanges of keys without a budget are counted at their end only (their spend is still
 * reported by the admin listener's {@code /admin/api/keys/NAME/spend}). A refusal is a 429 in the caller's style
 * ({@link ErrorKind#SPEND_BUDGET}) with {@code x-should-retry: false} and a {@code Retry-After} to the end of the
 * period, never past it. With a {@code redis} block, the spend is kept in Redis instead ({@link SharedLimiter}, with
 * the same arithmetic in its scripts) and these counts serve only the report of a replica without one.
 *
 * <p>Thread safety: called on every event loop at once; lock-free.
 */
public final class SpendBudgets {
    /** Micro-dollars per dollar. */
    public static final double MICROS = 1_000_000;
    static final String DAILY_BUDGET = "daily_budget_usd";
    static final String MONTHLY_BUDGET = "monthly_budget_usd";

    private static final Function<String, KeySpend> NEW_SPEND = k -> new KeySpend();

    /** One key's spend: the day's and the month's. */
    static final class KeySpend {
        final DailyBudget day = new DailyBudget();
        final DailyBudget month = new DailyBudget();
    }

    private final LongSupplier epochMillis;
    private final Cache<String, KeySpend> spend = Caffeine.newBuilder().maximumSize(RateLimiter.MAX_SCOPES).build();

    public SpendBudgets() {
        this(System::currentTimeMillis);
    }

    /** @param epochMillis the wall clock of the UTC days and months */
    public SpendBudgets(LongSupplier epochMillis) {
        this.epochMillis = epochMillis;
    }

    /**
     * Checks {@code key}'s budgets and, when every budgeted period is under its budget, reserves {@code estimateUsd} in
     * each. Returns a refusal (a 429 to answer), or a hold that the rate limits' admission is then wrapped in
     * ({@link SpendAdmission#wrap}) or, when they refuse, given back ({@link SpendAdmission#release}). Call only for a
     * key with a budget or a model with a price: everything else skips spend altogether.
     */
    public SpendAdmission admit(KeyConfig key, double estimateUsd) {
        return admit(key, estimateUsd, 1);
    }

    /**
     * As {@link #admit(KeyConfig, double)}, with each budget divided by {@code share}: the shared limits' local
     * fallback, where each of {@code share} replicas enforces its part of a budget.
     */
    public SpendAdmission admit(KeyConfig key, double estimateUsd, int share) {
        BudgetConfig budget = key.budget();
        KeySpend s = spend.get(key.name(), NEW_SPEND);
        long now = epochMillis.getAsLong();
        long day = DailyBudget.dayOf(now);
        long month = monthOf(now);
        long estimate = micros(estimateUsd);
        int parts = Math.max(1, share);
        if (budget.daily() > 0 && !s.day.take(estimate, Math.max(1, micros(budget.daily()) / parts), day)) {
            return new SpendAdmission(refusal(key, true, budget.daily(), now), untilPeriodEnd(true, now),
                    DAILY_BUDGET);
        }
        if (budget.monthly() > 0 && !s.month.take(estimate, Math.max(1, micros(budget.monthly()) / parts), month)) {
            if (budget.daily() > 0) {
                s.day.adjust(day, -estimate);
            }
            return new SpendAdmission(refusal(key, false, budget.monthly(), now), untilPeriodEnd(false, now),
                    MONTHLY_BUDGET);
        }
        // A period without a budget is counted at settlement only: there is nothing to reserve against.
        return new SpendAdmission(s, day, month, budget.daily() > 0 ? estimate : 0,
                budget.monthly() > 0 ? estimate : 0);
    }

    /**
     * The 429 of a used-up budget (daily, else monthly) of {@code key} at {@code epochMillis}: the same words whether
     * this replica's counts or the shared ones refused.
     */
    static GatewayError refusal(KeyConfig key, boolean daily, double budgetUsd, long epochMillis) {
        return GatewayError.of(ErrorKind.SPEND_BUDGET, "The " + (daily ? "daily" : "monthly")
                + " spend budget of key `" + key.name() + "` (" + usd(budgetUsd) + " USD) is used up. It resets at "
                + (daily ? "00:00 UTC" : "00:00 UTC on the first day of the next month") + ", in "
                + RateLimitHeaders.goDuration(untilPeriodEnd(daily, epochMillis)) + ".");
    }

    /** Milliseconds from {@code epochMillis} to the end of its UTC day (daily) or month, at least 1. */
    static long untilPeriodEnd(boolean daily, long epochMillis) {
        long end = daily ? (DailyBudget.dayOf(epochMillis) + 1) * DailyBudget.DAY_MILLIS
                : monthStartMillis(monthOf(epochMillis) + 1);
        return Math.max(1, end - epochMillis);
    }

    /** Corrects the periods' spend from what was reserved to {@code actualMicros}. */
    static void settle(KeySpend s, long day, long month, long dayReserved, long monthReserved, long actualMicros) {
        s.day.add(day, actualMicros - dayReserved);
        s.month.add(month, actualMicros - monthReserved);
    }

    /** Gives back a reservation that was never used (the rate limits refused the request after it). */
    static void release(KeySpend s, long day, long month, long dayReserved, long monthReserved) {
        s.day.adjust(day, -dayReserved);
        s.month.adjust(month, -monthReserved);
    }

    /** {@code key}'s spend now: today's and this month's, in US dollars. */
    public Spend spend(String keyName) {
        KeySpend s = spend.getIfPresent(keyName);
        long now = epochMillis.getAsLong();
        long day = DailyBudget.dayOf(now);
        long month = monthOf(now);
        double today = s == null ? 0 : s.day.used(day) / MICROS;
        double thisMonth = s == null ? 0 : s.month.used(month) / MICROS;
        return new Spend(today, thisMonth, (day + 1) * DailyBudget.DAY_MILLIS, monthStartMillis(month + 1));
    }

    /**
     * One key's spend at a moment.
     *
     * @param todayUsd         spent on the current UTC day (reservations of exchanges still running included)
     * @param monthUsd         spent in the current UTC month
     * @param dayResetMillis   when the day's spend resets (the next UTC midnight)
     * @param monthResetMillis when the month's spend resets
     */
    public record Spend(double todayUsd, double monthUsd, long dayResetMillis, long monthResetMillis) {
    }

    static long micros(double usd) {
        double m = Math.rint(usd * MICROS);
        return m >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, (long) m);
    }

    /** Months since 1970-01 (UTC). */
    static long monthOf(long epochMillis) {
        LocalDate d = Instant.ofEpochMilli(epochMillis).atZone(ZoneOffset.UTC).toLocalDate();
        return (d.getYear() - 1970L) * 12 + d.getMonthValue() - 1;
    }

    /** The first instant of {@code month} (months since 1970-01, UTC). */
    static long monthStartMillis(long month) {
        LocalDate d = LocalDate.of((int) (1970 + Math.floorDiv(month, 12)), (int) Math.floorMod(month, 12) + 1, 1);
        return d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
    }

    static String usd(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
