package io.modelgateway.core.limit;

import io.modelgateway.core.exchange.Admission;

import static io.modelgateway.core.limit.LimitFixtures.concurrent;
import static io.modelgateway.core.limit.LimitFixtures.daily;
import static io.modelgateway.core.limit.LimitFixtures.key;
import static io.modelgateway.core.limit.LimitFixtures.model;
import static io.modelgateway.core.limit.LimitFixtures.rpm;
import static io.modelgateway.core.limit.LimitFixtures.tpm;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RateLimiterTest {
    private final LimitFixtures.FakeClock clock = new LimitFixtures.FakeClock("2026-08-21T12:40:00Z");
    private final RateLimiter limiter = clock.limiter();
    private final ModelConfig chat = model("sim-chat");

    @Test
    void admit_noLimitsAnywhere_returnsSharedUnlimited() {
        Admission a = limiter.admit(key("team-a", LimitsConfig.NONE), chat, 500);

        assertThat(a).isSameAs(Admission.UNLIMITED);
        assertThat(a.admitted()).isTrue();
        assertThat(a.error()).isNull();
        assertThat(a.refusedLimit()).isNull();
        HttpHeaders h = new DefaultHttpHeaders();
        a.addHeaders(h, ApiStyle.OPENAI);
        a.settle(10_000);
        assertThat(h.isEmpty()).isTrue();
    }

    @Test
    void admit_keyModelLimitsForOtherModelsOnly_returnsUnlimited() {
        KeyConfig k = key("team-a", LimitsConfig.NONE, Map.of("gpt-*", rpm(1)), true);

        assertThat(limiter.admit(k, chat, 1)).isSameAs(Admission.UNLIMITED);
    }

    @Test
    void admit_requestsPerMinute_admitsExactlyNThenRefuses() {
        KeyConfig k = key("team-a", rpm(10));
        for (int i = 0; i < 10; i++) {
            assertThat(limiter.admit(k, chat, 100).admitted()).as("request %d", i + 1).isTrue();
        }

        Admission refused = limiter.admit(k, chat, 100);

        assertThat(refused.admitted()).isFalse();
        assertThat(refused.refusedLimit()).isEqualTo("requests_per_minute");
        assertThat(refused.retryAfterMillis()).isEqualTo(6000);
        assertThat(refused.error().kind()).isEqualTo(ErrorKind.RATE_LIMIT);
        assertThat(refused.error().kind().openAiType()).isEqualTo("requests");
        assertThat(refused.error().message())
                .isEqualTo("Rate limit reached for requests per minute on key `team-a`. Please try again in 6s.");
    }

    @Test
    void admit_requestsPerMinute_refillsOneRequestEvery60OverNSeconds() {
        KeyConfig k = key("team-a", rpm(10));
        for (int i = 0; i < 10; i++) {
            limiter.admit(k, chat, 1);
        }

        clock.advanceMillis(5999);
        Admission early = limiter.admit(k, chat, 1);
        clock.advanceMillis(1);
        Admission onTime = limiter.admit(k, chat, 1);
        Admission next = limiter.admit(k, chat, 1);

        assertThat(early.admitted()).isFalse();
        assertThat(early.retryAfterMillis()).isEqualTo(1);
        assertThat(onTime.admitted()).isTrue();
        assertThat(next.admitted()).isFalse();
        assertThat(next.retryAfterMillis()).isEqualTo(6000);
    }

    @Test
    void admit_idleForLong_refillsToCapacityOnly() {
        KeyConfig k = key("team-a", rpm(3));
        limiter.admit(k, chat, 1);

        clock.advanceMillis(3_600_000);

        assertThat(admitted(k, chat, 10)).isEqualTo(3);
    }

    @Test
    void admit_pollingFasterThanOneRequestTime_stillRefills() {
        // 7 a minute: one request every 8.571… s. A bucket that restarted its clock on every refused poll,
        // or dropped the fraction of a request on every refill, would never (or too late) admit again.
        KeyConfig k = key("team-a", rpm(7));
        assertThat(admitted(k, chat, 7)).isEqualTo(7);

        int admittedAt = -1;
        for (int second = 1; second <= 30 && admittedAt < 0; second++) {
            clock.advanceMillis(1000);
            if (limiter.admit(k, chat, 1).admitted()) {
                admittedAt = second;
            }
        }
        for (int second = admittedAt + 1; second <= 60; second++) {
            clock.advanceMillis(1000);
            limiter.admit(k, chat, 1);
        }

        assertThat(admittedAt).isEqualTo(9);
        // 60 s after the burst: 7 refilled in total, 1 taken at 9 s, the other 6 by the polls after it.
        assertThat(limiter.admit(k, chat, 1).admitted()).isFalse();
    }

    @Test
    void admit_tokenEstimateAboveWholeBucket_passesOnFullBucketOnly() {
        KeyConfig k = key("team-a", tpm(1000));

        Admission big = limiter.admit(k, chat, 5000);
        Admission small = limiter.admit(k, chat, 1);

        assertThat(big.admitted()).isTrue();
        assertThat(small.admitted()).isFalse();
        assertThat(small.refusedLimit()).isEqualTo("tokens_per_minute");
        assertThat(small.error().kind()).isEqualTo(ErrorKind.RATE_LIMIT_TOKENS);
        assertThat(small.error().kind().openAiType()).isEqualTo("tokens");
        assertThat(small.error().kind().anthropicType()).isEqualTo("rate_limit_error");
        assertThat(small.error().message()).isEqualTo("Rate limit reached for tokens per minute on key `team-a` "
                + "(limit 1000, used 1000, requested 1). Please try again in 60ms.");
    }

    @Test
    void settle_actualBelowEstimate_returnsTheDifference() {
        KeyConfig k = key("team-a", tpm(1000));
        Admission first = limiter.admit(k, chat, 800);

        first.settle(100);

        assertThat(limiter.admit(k, chat, 900).admitted()).isTrue();
        assertThat(limiter.admit(k, chat, 1).admitted()).isFalse();
    }

    @Test
    void settle_actualAboveReserve_chargesUpToTheWholeBucket() {
        KeyConfig k = key("team-a", tpm(1000));
        limiter.admit(k, chat, 100).settle(2500);

        Admission refused = limiter.admit(k, chat, 100);
        // 2500 used, but one exchange empties the bucket at most: 100 wanted refill at 1000 a minute in 6 s.
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.retryAfterMillis()).isEqualTo(6_000);

        clock.advanceMillis(5_999);
        assertThat(limiter.admit(k, chat, 100).admitted()).isFalse();
        clock.advanceMillis(1);
        assertThat(limiter.admit(k, chat, 100).admitted()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(longs = {1_000_000_000_000_000_000L, Long.MAX_VALUE})
    void settle_absurdUsage_locksTheKeyOutForAtMostOneWindow(long used) {
        KeyConfig k = key("team-a", tpm(1000));
        limiter.admit(k, chat, 100).settle(used);

        Admission refused = limiter.admit(k, chat, 1000);
        Admission small = limiter.admit(k, chat, 10);
        HttpHeaders openAi = new DefaultHttpHeaders();
        refused.addHeaders(openAi, ApiStyle.OPENAI);
        HttpHeaders anthropic = new DefaultHttpHeaders();
        refused.addHeaders(anthropic, ApiStyle.ANTHROPIC);

        assertThat(refused.admitted()).isFalse();
        assertThat(refused.retryAfterMillis()).isEqualTo(60_000);
        assertThat(openAi.get("Retry-After")).isEqualTo("60");
        assertThat(openAi.get("retry-after-ms")).isEqualTo("60000");
        assertThat(openAi.get("x-ratelimit-remaining-tokens")).isEqualTo("0");
        assertThat(openAi.get("x-ratelimit-reset-tokens")).isEqualTo("1m0s");
        assertThat(anthropic.get("anthropic-ratelimit-tokens-reset")).isEqualTo("2026-08-21T12:41:00Z");
        assertThat(small.retryAfterMillis()).isEqualTo(600);
        clock.advanceMillis(60_000); // one window later the bucket is full again
        assertThat(limiter.admit(k, chat, 1000).admitted()).isTrue();
    }

    @Test
    void settle_absurdUsageOnTheDailyBudget_refusesOnlyUntilUtcMidnight() {
        LimitFixtures.FakeClock late = new LimitFixtures.FakeClock("2026-08-21T23:00:00Z");
        RateLimiter l = late.limiter();
        KeyConfig k = key("team-a", new LimitsConfig(0, 1000, 0, 1_000_000));
        l.admit(k, chat, 100).settle(Long.MAX_VALUE);

        Admission refused = l.admit(k, chat, 1);
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        // The per-minute bucket refills within a minute; the day's budget is spent until midnight, an hour away.
        assertThat(refused.refusedLimit()).isEqualTo("tokens_per_minute");
        assertThat(refused.retryAfterMillis()).isEqualTo(60);
        late.advanceMillis(60_000);
        Admission daily = l.admit(k, chat, 1);
        assertThat(daily.refusedLimit()).isEqualTo("daily_tokens");
        assertThat(daily.retryAfterMillis()).isEqualTo(3_540_000);
        late.advanceMillis(3_540_000);
        assertThat(l.admit(k, chat, 1000).admitted()).isTrue();
    }

    @Test
    void settle_debtAfterLongExchange_isNotPaidOffByTimeBeforeIt() {
        KeyConfig k = key("team-a", tpm(1000));
        Admission longStream = limiter.admit(k, chat, 100);

        clock.advanceMillis(120_000); // two minutes of refill while the exchange ran
        longStream.settle(1100);
        Admission next = limiter.admit(k, chat, 1);

        // The 1000 tokens over the reservation were used by now, so they are owed from now: 1 more fits in 60 ms.
        assertThat(next.admitted()).isFalse();
        assertThat(next.retryAfterMillis()).isEqualTo(60);
    }

    @Test
    void settle_belowEstimateAfterPartialRefill_neverGoesBelowEmpty() {
        KeyConfig k = key("team-a", tpm(1000));
        Admission a = limiter.admit(k, chat, 800);

        clock.advanceMillis(30_000); // 500 refilled: 300 of the reservation still in use
        a.settle(100);

        assertThat(limiter.admit(k, chat, 1000).admitted()).isTrue();
        assertThat(limiter.admit(k, chat, 1).admitted()).isFalse();
    }

    @Test
    void admit_concurrencyLimitReached_refusesUntilSettleFreesASlot() {
        KeyConfig k = key("team-a", concurrent(2));
        Admission first = limiter.admit(k, chat, 1);
        Admission second = limiter.admit(k, chat, 1);

        Admission third = limiter.admit(k, chat, 1);
        first.settle(1);
        Admission fourth = limiter.admit(k, chat, 1);

        assertThat(first.admitted()).isTrue();
        assertThat(second.admitted()).isTrue();
        assertThat(third.admitted()).isFalse();
        assertThat(third.refusedLimit()).isEqualTo("concurrent_requests");
        assertThat(third.retryAfterMillis()).isEqualTo(1000);
        assertThat(third.error().kind()).isEqualTo(ErrorKind.RATE_LIMIT);
        assertThat(third.error().message()).isEqualTo("Rate limit reached for concurrent requests on key `team-a` "
                + "(limit 2 in flight). Please try again in 1s.");
        assertThat(fourth.admitted()).isTrue();
    }

    @Test
    void admit_dailyBudgetSpent_refusesUntilUtcMidnightAndSaysDoNotRetry() {
        LimitFixtures.FakeClock late = new LimitFixtures.FakeClock("2026-08-21T23:00:00Z");
        RateLimiter l = late.limiter();
        KeyConfig k = key("team-a", daily(1000));
        l.admit(k, chat, 600).settle(600);
        // Still under budget, so admitted, though the estimate overshoots it.
        Admission last = l.admit(k, chat, 600);
        last.settle(700);

        Admission refused = l.admit(k, chat, 1);

        assertThat(last.admitted()).isTrue();
        assertThat(refused.admitted()).isFalse();
        assertThat(refused.refusedLimit()).isEqualTo("daily_tokens");
        assertThat(refused.retryAfterMillis()).isEqualTo(3_600_000);
        assertThat(refused.error().kind()).isEqualTo(ErrorKind.RATE_LIMIT_TOKENS);
        assertThat(refused.error().message()).isEqualTo("Daily token limit reached on key `team-a` "
                + "(limit 1000 tokens per UTC day). It resets at 00:00 UTC, in 1h0m0s.");
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);
        assertThat(h.get("Retry-After")).isEqualTo("3600");
        assertThat(h.get("retry-after-ms")).isEqualTo("3600000");
        assertThat(h.get("x-should-retry")).isEqualTo("false");

        late.advanceMillis(3_599_999);
        assertThat(l.admit(k, chat, 1).admitted()).isFalse();
        late.advanceMillis(1);
        assertThat(l.admit(k, chat, 999).admitted()).isTrue();
    }

    @Test
    void settle_afterUtcMidnight_doesNotChargeTheNewDay() {
        LimitFixtures.FakeClock late = new LimitFixtures.FakeClock("2026-08-21T23:59:00Z");
        RateLimiter l = late.limiter();
        KeyConfig k = key("team-a", daily(1000));
        Admission overnight = l.admit(k, chat, 500);

        late.advanceMillis(120_000);
        overnight.settle(50_000);

        assertThat(l.admit(k, chat, 999).admitted()).isTrue();
        assertThat(l.admit(k, chat, 1).admitted()).isTrue();
        assertThat(l.admit(k, chat, 1).admitted()).isFalse();
    }

    @Test
    void admit_keyOnModelGlob_givesEachMatchingModelItsOwnBudget() {
        KeyConfig k = key("team-a", LimitsConfig.NONE, Map.of("sim-*", rpm(2)), true);
        ModelConfig a = model("sim-a");
        ModelConfig b = model("sim-b");

        assertThat(admitted(k, a, 5)).isEqualTo(2);
        Admission refused = limiter.admit(k, a, 1);
        assertThat(admitted(k, b, 5)).isEqualTo(2);

        assertThat(refused.error().message()).isEqualTo("Rate limit reached for requests per minute on key `team-a` "
                + "for model `sim-a`. Please try again in 30s.");
        assertThat(limiter.admit(k, model("other"), 1)).isSameAs(Admission.UNLIMITED);
    }

    @Test
    void admit_modelLimit_isSharedAcrossKeys() {
        ModelConfig m = model("sim-chat", rpm(3));
        KeyConfig a = key("team-a", LimitsConfig.NONE);
        KeyConfig b = key("team-b", LimitsConfig.NONE);

        assertThat(admitted(a, m, 2)).isEqualTo(2);
        assertThat(admitted(b, m, 5)).isEqualTo(1);
        Admission refused = limiter.admit(a, m, 1);

        assertThat(refused.error().message())
                .isEqualTo("Rate limit reached for requests per minute on model `sim-chat`. Please try again in 20s.");
    }

    @Test
    void admit_laterScopeRefuses_givesBackWhatEarlierScopesReserved() {
        // The key may make 3 requests, 1000 tokens, 1 at a time; model x only 1 request a minute.
        KeyConfig k = key("team-a", new LimitsConfig(3, 1000, 1, 0));
        ModelConfig x = model("x", rpm(1));
        ModelConfig y = model("y");
        limiter.admit(k, x, 500).settle(500);

        Admission refusedByModel = limiter.admit(k, x, 500);
        // Had the key kept the refused request's reservation, each of these would be refused: the slot would be
        // taken, the 1000 tokens spent, and the third request the key's last.
        Admission onY = limiter.admit(k, y, 500);
        onY.settle(500);
        Admission lastOnY = limiter.admit(k, y, 0);
        lastOnY.settle(0);
        Admission overKey = limiter.admit(k, y, 0);

        assertThat(refusedByModel.refusedLimit()).isEqualTo("requests_per_minute");
        assertThat(refusedByModel.error().message()).contains("on model `x`");
        assertThat(onY.admitted()).isTrue();
        assertThat(lastOnY.admitted()).isTrue();
        assertThat(overKey.refusedLimit()).isEqualTo("requests_per_minute");
        assertThat(overKey.error().message()).contains("on key `team-a`");
    }

    @Test
    void admit_laterLimitOfSameScopeRefuses_givesBackEarlierLimits() {
        KeyConfig k = key("team-a", new LimitsConfig(2, 0, 1, 0));
        Admission holding = limiter.admit(k, chat, 1);

        Admission refused = limiter.admit(k, chat, 1);
        holding.settle(1);

        assertThat(refused.refusedLimit()).isEqualTo("concurrent_requests");
        // The refused request's tick of the requests bucket was given back: one request is left.
        assertThat(limiter.admit(k, chat, 1).admitted()).isTrue();
    }

    @Test
    void admit_limitLoweredByReload_appliesToUsageAlreadyCounted() {
        assertThat(admitted(key("team-a", rpm(100)), chat, 3)).isEqualTo(3);

        Admission afterLowering = limiter.admit(key("team-a", rpm(2)), chat, 1);
        Admission afterRaising = limiter.admit(key("team-a", rpm(5)), chat, 1);

        assertThat(afterLowering.admitted()).isFalse();
        // 3 used under a capacity of 2 reads as a full bucket (never more than one window): 1 request refills
        // at 2 a minute.
        assertThat(afterLowering.retryAfterMillis()).isEqualTo(30_000);
        assertThat(afterRaising.admitted()).isTrue();
        assertThat(admitted(key("team-a", rpm(5)), chat, 5)).isEqualTo(1);
    }

    @Test
    void admit_limitLoweredFarBelowUsage_waitsAtMostOneWindow() {
        assertThat(admitted(key("team-a", rpm(1000)), chat, 1000)).isEqualTo(1000);

        Admission refused = limiter.admit(key("team-a", rpm(2)), chat, 1);
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        assertThat(refused.admitted()).isFalse();
        assertThat(refused.retryAfterMillis()).isEqualTo(30_000);
        assertThat(h.get("Retry-After")).isEqualTo("30");
        assertThat(h.get("x-ratelimit-reset-requests")).isEqualTo("1m0s");
        clock.advanceMillis(30_000);
        assertThat(limiter.admit(key("team-a", rpm(2)), chat, 1).admitted()).isTrue();
    }

    @Test
    void admit_otherKeyName_hasItsOwnState() {
        assertThat(admitted(key("team-a", rpm(2)), chat, 5)).isEqualTo(2);

        assertThat(admitted(key("team-b", rpm(2)), chat, 5)).isEqualTo(2);
    }

    @Test
    void settle_calledTwice_countsOnce() {
        KeyConfig k = key("team-a", new LimitsConfig(0, 1000, 1, 0));
        Admission a = limiter.admit(k, chat, 100);

        a.settle(600);
        a.settle(600);

        Admission b = limiter.admit(k, chat, 400);
        Admission c = limiter.admit(k, chat, 0);
        assertThat(b.admitted()).as("600 of 1000 used, not 1200").isTrue();
        assertThat(c.refusedLimit()).as("one slot, not two").isEqualTo("concurrent_requests");
    }

    @Test
    void settle_refusedAdmission_changesNothing() {
        KeyConfig k = key("team-a", new LimitsConfig(1, 0, 1, 0));
        Admission held = limiter.admit(k, chat, 1);
        Admission refused = limiter.admit(k, chat, 1);

        refused.settle(1);

        assertThat(refused.retryAfterMillis()).isEqualTo(60_000);
        assertThat(limiter.admit(k, chat, 1).refusedLimit()).as("still held").isEqualTo("requests_per_minute");
        held.settle(1);
    }

    @Test
    void addHeaders_openAiStyle_reportsScopeWithFewestRemainingAsGoDurations() {
        KeyConfig k = key("team-a", new LimitsConfig(10, 10_000, 0, 0), Map.of("sim-*", rpm(4)), true);
        Admission a = limiter.admit(k, chat, 1000);

        clock.advanceMillis(2500); // the response head goes out later than the admission
        HttpHeaders h = new DefaultHttpHeaders();
        a.addHeaders(h, ApiStyle.OPENAI);

        assertThat(h.get("x-ratelimit-limit-requests")).isEqualTo("4");
        assertThat(h.get("x-ratelimit-remaining-requests")).isEqualTo("3");
        assertThat(h.get("x-ratelimit-reset-requests")).isEqualTo("12.5s");
        assertThat(h.get("x-ratelimit-limit-tokens")).isEqualTo("10000");
        assertThat(h.get("x-ratelimit-remaining-tokens")).isEqualTo("9000");
        assertThat(h.get("x-ratelimit-reset-tokens")).isEqualTo("3.5s");
        assertThat(h.contains("Retry-After")).isFalse();
        assertThat(h.names()).noneMatch(n -> n.startsWith("anthropic-"));
    }

    @Test
    void addHeaders_anthropicStyle_resetsAreRfc3339Instants() {
        KeyConfig k = key("team-a", new LimitsConfig(60, 1000, 0, 0));
        Admission a = limiter.admit(k, chat, 500);

        HttpHeaders h = new DefaultHttpHeaders();
        a.addHeaders(h, ApiStyle.ANTHROPIC);

        assertThat(h.get("anthropic-ratelimit-requests-limit")).isEqualTo("60");
        assertThat(h.get("anthropic-ratelimit-requests-remaining")).isEqualTo("59");
        assertThat(h.get("anthropic-ratelimit-requests-reset")).isEqualTo("2026-08-21T12:40:01Z");
        assertThat(h.get("anthropic-ratelimit-tokens-limit")).isEqualTo("1000");
        assertThat(h.get("anthropic-ratelimit-tokens-remaining")).isEqualTo("500");
        assertThat(h.get("anthropic-ratelimit-tokens-reset")).isEqualTo("2026-08-21T12:40:30Z");
        assertThat(h.names()).noneMatch(n -> n.startsWith("x-ratelimit-"));
    }

    @Test
    void addHeaders_refusalWithRateLimitHeadersOff_addsRetryHeadersOnly() {
        KeyConfig k = key("team-a", rpm(1), Map.of(), false);
        limiter.admit(k, chat, 1);
        Admission refused = limiter.admit(k, chat, 1);

        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        assertThat(h.get("Retry-After")).isEqualTo("60");
        assertThat(h.get("retry-after-ms")).isEqualTo("60000");
        assertThat(h.contains("x-should-retry")).isFalse();
        assertThat(h.size()).isEqualTo(2);
    }

    @Test
    void addHeaders_admittedWithRateLimitHeadersOff_addsNothing() {
        Admission a = limiter.admit(key("team-a", rpm(5), Map.of(), false), chat, 1);

        HttpHeaders h = new DefaultHttpHeaders();
        a.addHeaders(h, ApiStyle.ANTHROPIC);

        assertThat(a.admitted()).isTrue();
        assertThat(h.isEmpty()).isTrue();
    }

    @Test
    void addHeaders_onlyConcurrencyLimited_addsNothing() {
        Admission a = limiter.admit(key("team-a", concurrent(3)), chat, 1);

        HttpHeaders h = new DefaultHttpHeaders();
        a.addHeaders(h, ApiStyle.OPENAI);

        assertThat(a.admitted()).isTrue();
        assertThat(h.isEmpty()).isTrue();
    }

    @Test
    void addHeaders_refusal_roundsRetryAfterUpAndReportsZeroRemaining() {
        KeyConfig k = key("team-a", rpm(7));
        admitted(k, chat, 7);
        Admission refused = limiter.admit(k, chat, 1);

        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        // One request at 7 a minute: 8571.43 ms, rounded up.
        assertThat(refused.retryAfterMillis()).isEqualTo(8572);
        assertThat(h.get("Retry-After")).isEqualTo("9");
        assertThat(h.get("retry-after-ms")).isEqualTo("8572");
        assertThat(h.get("x-ratelimit-limit-requests")).isEqualTo("7");
        assertThat(h.get("x-ratelimit-remaining-requests")).isEqualTo("0");
        assertThat(h.get("x-ratelimit-reset-requests")).isEqualTo("1m0s");
    }

    @Test
    void addHeaders_tokenDebt_clampsRemainingAtZero() {
        KeyConfig k = key("team-a", tpm(1000));
        limiter.admit(k, chat, 10).settle(6000);
        Admission refused = limiter.admit(k, chat, 10);

        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        assertThat(h.get("x-ratelimit-remaining-tokens")).isEqualTo("0");
        assertThat(h.get("x-ratelimit-reset-tokens")).isEqualTo("1m0s"); // 6000 used, charged up to the 1000 held
        assertThat(h.contains("x-ratelimit-limit-requests")).isFalse();
    }

    /** Against the JDK's own ISO formatter: random instants of years 0–9999, the days around leap days, the edges. */
    @Test
    void rfc3339_printsAsInstantToString_roundedUpToTheSecond() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(5);
        long first = java.time.Instant.parse("0000-01-01T00:00:00Z").toEpochMilli();
        long last = java.time.Instant.parse("9999-12-31T23:59:59Z").toEpochMilli();
        java.util.List<Long> millis = new java.util.ArrayList<>(java.util.List.of(first, last, first - 1000, last + 1,
                0L, -1L, 1L, 999L, 1000L, 1001L, Long.MIN_VALUE / 4, Long.MAX_VALUE / 4));
        for (int year : new int[] {1600, 1700, 1900, 1969, 1970, 2000, 2024, 2026, 2100, 2400, 9996}) {
            long feb28 = java.time.LocalDate.of(year, 2, 28).atStartOfDay(java.time.ZoneOffset.UTC).toInstant()
                    .toEpochMilli();
            for (long d = -1; d <= 3; d++) {
                millis.add(feb28 + d * 86_400_000 - 1);
                millis.add(feb28 + d * 86_400_000);
            }
        }
        for (int n = 0; n < 200_000; n++) {
            millis.add(n % 2 == 0 ? random.nextLong(first, last + 1)
                    : random.nextLong(1_700_000_000_000L, 1_900_000_000_000L));
        }
        for (long ms : millis) {
            long seconds = Math.floorDiv(ms + 999, 1000);
            assertThat(RateLimitHeaders.rfc3339(ms)).as("%d ms", ms)
                    .isEqualTo(java.time.Instant.ofEpochSecond(seconds).toString());
        }
        assertThat(RateLimitHeaders.rfc3339(1_787_316_059_001L)).isEqualTo("2026-08-21T12:41:00Z");
    }

    @Test
    void instantText_kept_orNot_isTheJdksInstantOfTheRoundedUpSecond() {
        // Instants that share kept places and come back to them, in and out of order: each text is its own second's.
        java.util.Random random = new java.util.Random(9);
        long base = 1_787_316_059_001L;
        for (int i = 0; i < 5000; i++) {
            long ms = i % 4 == 0 ? base + random.nextInt(10_000) : base + i * 250L + random.nextInt(3);
            long seconds = Math.floorDiv(ms + 999, 1000);
            assertThat(RateLimitHeaders.instantText(ms).toString()).as("%d ms", ms)
                    .isEqualTo(java.time.Instant.ofEpochSecond(seconds).toString());
        }
    }

    @Test
    void durationText_isGoDuration_keptBelowASecond() {
        for (long ms = -1; ms <= 2500; ms++) {
            assertThat(RateLimitHeaders.durationText(ms).toString()).as("%d ms", ms)
                    .isEqualTo(RateLimitHeaders.goDuration(ms));
        }
        assertThat(RateLimitHeaders.durationText(7)).isSameAs(RateLimitHeaders.durationText(7));
        assertThat(RateLimitHeaders.durationText(3_723_004).toString()).isEqualTo("1h2m3.004s");
    }

    @Test
    void limitText_valuesSharingAPlace_eachPrintedAsItself() {
        // Thousands of values over eight kept places: every text must be its own value's, kept or not.
        java.util.Random random = new java.util.Random(5);
        for (int i = 0; i < 5000; i++) {
            long v = i % 3 == 0 ? random.nextInt(16) : i % 3 == 1 ? random.nextLong() >>> 1 : i;
            assertThat(RateLimitHeaders.limitText(v).toString()).isEqualTo(Long.toString(v));
        }
    }

    @Test
    void goDuration_variousMillis_printsLikeGo() {
        assertThat(RateLimitHeaders.goDuration(0)).isEqualTo("0s");
        assertThat(RateLimitHeaders.goDuration(12)).isEqualTo("12ms");
        assertThat(RateLimitHeaders.goDuration(1000)).isEqualTo("1s");
        assertThat(RateLimitHeaders.goDuration(1500)).isEqualTo("1.5s");
        assertThat(RateLimitHeaders.goDuration(1050)).isEqualTo("1.05s");
        assertThat(RateLimitHeaders.goDuration(1005)).isEqualTo("1.005s");
        assertThat(RateLimitHeaders.goDuration(90_000)).isEqualTo("1m30s");
        assertThat(RateLimitHeaders.goDuration(360_000)).isEqualTo("6m0s");
        assertThat(RateLimitHeaders.goDuration(3_600_000)).isEqualTo("1h0m0s");
        assertThat(RateLimitHeaders.goDuration(3_723_004)).isEqualTo("1h2m3.004s");
    }

    @Test
    void rfc3339_partialSecond_roundsUpToWholeSeconds() {
        assertThat(RateLimitHeaders.rfc3339(0)).isEqualTo("1970-01-01T00:00:00Z");
        assertThat(RateLimitHeaders.rfc3339(1)).isEqualTo("1970-01-01T00:00:01Z");
        assertThat(RateLimitHeaders.rfc3339(1_787_316_060_000L)).isEqualTo("2026-08-21T12:41:00Z");
    }

    // Contention: the clock stands still, so nothing refills and exactly the capacity may be admitted however
    // the threads interleave. More threads than the machine's cores, to force preemption mid-CAS.

    @Test
    void admit_threadsContendingOnOneRequestsBucket_admitExactlyTheLimit() throws Exception {
        KeyConfig k = key("team-a", rpm(20_000));

        long admitted = hammer(4, 10_000, () -> limiter.admit(k, chat, 1), null, 1);

        assertThat(admitted).isEqualTo(20_000);
    }

    @Test
    void admit_threadsContendingOnOneTokensBucket_admitExactlyWhatFits() throws Exception {
        KeyConfig k = key("team-a", tpm(100_000));

        long admitted = hammer(4, 10_000, () -> limiter.admit(k, chat, 7), null, 7);

        assertThat(admitted).isEqualTo(100_000 / 7);
    }

    @Test
    void admit_threadsRefusedByModelScope_giveBackExactlyWhatTheKeyReserved() throws Exception {
        KeyConfig k = key("team-a", rpm(10_000));
        ModelConfig x = model("x", rpm(5_000));

        long admittedOnX = hammer(4, 10_000, () -> limiter.admit(k, x, 1), null, 1);

        assertThat(admittedOnX).isEqualTo(5_000);
        // 35,000 refusals each gave the key's request back: the key has exactly 5,000 left.
        assertThat(admitted(k, model("y"), 6_000)).isEqualTo(5_000);
    }

    @Test
    void admit_threadsUnderConcurrencyLimit_neverHaveMoreInFlight() throws Exception {
        KeyConfig k = key("team-a", concurrent(3));
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();

        long admitted = hammer(4, 20_000, () -> limiter.admit(k, chat, 1), () -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            Thread.onSpinWait();
            inFlight.decrementAndGet();
        }, 1);

        assertThat(admitted).isPositive();
        assertThat(most.get()).isBetween(1, 3);
        // Every slot came back.
        Admission[] held = {limiter.admit(k, chat, 1), limiter.admit(k, chat, 1), limiter.admit(k, chat, 1)};
        assertThat(held).allMatch(Admission::admitted);
        assertThat(limiter.admit(k, chat, 1).admitted()).isFalse();
    }

    /**
     * Runs {@code perThread} admissions on each of {@code threads} threads released together; each admitted one
     * runs {@code whileHeld} (if any) and is settled with {@code actualTokens}. Returns how many were admitted.
     */
    private static long hammer(int threads, int perThread, Supplier<Admission> admit,
            Runnable whileHeld, long actualTokens) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        LongAdder admitted = new LongAdder();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        Admission a = admit.get();
                        if (a.admitted()) {
                            admitted.increment();
                            if (whileHeld != null) {
                                whileHeld.run();
                            }
                            a.settle(actualTokens);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return admitted.sum();
    }

    /** Admits up to {@code attempts} requests, settling each with 1 token; returns how many were admitted. */
    private int admitted(KeyConfig k, ModelConfig m, int attempts) {
        int n = 0;
        for (int i = 0; i < attempts; i++) {
            Admission a = limiter.admit(k, m, 1);
            if (a.admitted()) {
                n++;
                a.settle(1);
            }
        }
        return n;
    }
}
