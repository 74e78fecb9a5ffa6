package io.modelgateway.core.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.config.BudgetConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.exchange.Admission;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Keys' spend per UTC day and month: reserve, settle, refuse, and the periods' resets, on a hand-driven clock. */
class SpendBudgetsTest {
    private final AtomicLong now = new AtomicLong(Instant.parse("2026-01-31T23:59:00Z").toEpochMilli());
    private final SpendBudgets spend = new SpendBudgets(now::get);

    private static KeyConfig key(double daily, double monthly) {
        return new KeyConfig("k", KeyConfig.sha256("sk-k"), List.of("*"), false, LimitsConfig.NONE, Map.of(), true,
                new BudgetConfig(daily, monthly), false);
    }

    @Test
    void reservedThenSettled_refusedOnceSpent_untilTheNextUtcDay() {
        KeyConfig k = key(1.0, 0);
        SpendAdmission a = spend.admit(k, 0.4);
        assertThat(a.admitted()).isTrue();
        assertThat(spend.spend("k").todayUsd()).as("the estimate is held while it runs").isCloseTo(0.4, within(1e-9));
        SpendBudgets.settle(a.spendOf(), a.dayOf(), a.monthOf(), a.dayReservedMicros(), a.monthReservedMicros(),
                SpendBudgets.micros(0.7));
        assertThat(spend.spend("k").todayUsd()).isCloseTo(0.7, within(1e-9));
        assertThat(spend.admit(k, 0.4).admitted()).as("0.7 < 1: admitted, and it may go past").isTrue();
        SpendAdmission refused = spend.admit(k, 0.1);
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.refusedLimit()).isEqualTo("daily_budget_usd");
        assertThat(refused.retryAfterMillis()).isEqualTo(60_000); // to midnight, never past it
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);
        assertThat(h.get("x-should-retry")).isEqualTo("false");
        assertThat(h.get("retry-after")).isEqualTo("60");
        assertThat(refused.error().message()).contains("daily spend budget", "`k`", "1.00 USD");

        now.addAndGet(60_000); // 2026-02-01T00:00Z: a new day and a new month
        assertThat(spend.spend("k").todayUsd()).isZero();
        assertThat(spend.spend("k").dayResetMillis()).isEqualTo(Instant.parse("2026-02-02T00:00:00Z").toEpochMilli());
        assertThat(spend.spend("k").monthResetMillis()).isEqualTo(Instant.parse("2026-03-01T00:00:00Z").toEpochMilli());
        assertThat(spend.admit(k, 0.1).admitted()).isTrue();
    }

    @Test
    void monthlyBudget_refusesToTheFirstOfTheNextMonth_andGivesTheDaysReservationBack() {
        KeyConfig k = key(10, 1);
        SpendAdmission a = spend.admit(k, 1.5);
        assertThat(a.admitted()).isTrue();
        SpendAdmission refused = spend.admit(k, 0.5);
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.refusedLimit()).isEqualTo("monthly_budget_usd");
        assertThat(refused.retryAfterMillis()).isEqualTo(60_000); // 2026-02-01T00:00Z
        assertThat(spend.spend("k").todayUsd()).as("the refused request holds nothing").isCloseTo(1.5, within(1e-9));
    }

    @Test
    void rateLimitsRefuseAfterTheSpendCheck_theReservationGoesBack() {
        KeyConfig k = key(1, 0);
        SpendAdmission a = spend.admit(k, 0.9);
        a.release();
        assertThat(spend.spend("k").todayUsd()).isZero();
        assertThat(spend.admit(k, 0.9).admitted()).isTrue();
    }

    @Test
    void exchangeEndingAfterMidnight_countsOnNeitherNewDay_butTheMonthIfTheSame() {
        now.set(Instant.parse("2026-03-10T23:59:59Z").toEpochMilli());
        KeyConfig k = key(1, 100);
        SpendAdmission a = spend.admit(k, 0.2);
        now.addAndGet(2_000);
        SpendBudgets.settle(a.spendOf(), a.dayOf(), a.monthOf(), a.dayReservedMicros(), a.monthReservedMicros(),
                SpendBudgets.micros(0.3));
        assertThat(spend.spend("k").todayUsd()).isZero();
        assertThat(spend.spend("k").monthUsd()).isCloseTo(0.3, within(1e-9));
    }

    @Test
    void keyWithoutBudget_countedAtItsEndOnly() {
        KeyConfig k = key(0, 0);
        SpendAdmission a = spend.admit(k, 5);
        assertThat(spend.spend("k").todayUsd()).isZero();
        SpendBudgets.settle(a.spendOf(), a.dayOf(), a.monthOf(), a.dayReservedMicros(), a.monthReservedMicros(),
                SpendBudgets.micros(0.25));
        assertThat(spend.spend("k").todayUsd()).isCloseTo(0.25, within(1e-9));
        assertThat(spend.spend("k").monthUsd()).isCloseTo(0.25, within(1e-9));
        Admission unlimited = a.wrap(Admission.UNLIMITED);
        assertThat(unlimited.admitted()).isTrue();
    }

    @Test
    void micros_saturateAndNeverGoNegative() {
        assertThat(SpendBudgets.micros(1e300)).isEqualTo(Long.MAX_VALUE);
        assertThat(SpendBudgets.micros(-1)).isZero();
        assertThat(SpendBudgets.micros(0.0000015)).isEqualTo(2);
        assertThat(SpendBudgets.monthOf(Instant.parse("1970-01-01T00:00:00Z").toEpochMilli())).isZero();
        assertThat(SpendBudgets.monthStartMillis(SpendBudgets.monthOf(Instant.parse("2026-12-31T12:00:00Z")
                .toEpochMilli()) + 1)).isEqualTo(Instant.parse("2027-01-01T00:00:00Z").toEpochMilli());
    }
}
