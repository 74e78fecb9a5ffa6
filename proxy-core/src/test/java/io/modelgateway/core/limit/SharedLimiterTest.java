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
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.RedisConfig;
import io.modelgateway.core.config.RedisConfig.Fallback;
import io.modelgateway.core.observe.GatewayMetrics;
import io.modelgateway.core.exchange.Transport;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RedisServer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.concurrent.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shared limiter against a real Redis ({@link RedisServer}): several limiters on one Redis play the replicas of
 * a gateway. Most tests stop time (the scripts take the test's clock instead of Redis's), so exact counts do not
 * depend on how fast this machine runs them; the lease tests run on Redis's own clock.
 *
 * <p>Timeouts: where a test counts exactly, the limiters wait up to 2 s for Redis, so a busy machine cannot turn
 * a slow answer into a fallback decision; the fault tests use 100 ms.
 */
class SharedLimiterTest {
    private static final Duration UP_WITHIN = Duration.ofSeconds(10);
    private static final int PATIENT_MS = 2000;

    private static RedisServer redis;
    private static EventLoopGroup group;

    private final LimitFixtures.FakeClock clock = new LimitFixtures.FakeClock("2026-08-21T12:40:00Z");
    private final List<SharedLimiter> replicas = new ArrayList<>();
    private final ModelConfig chat = model("sim-chat");
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisServer.start();
        group = Transport.newGroup(2, "shared-limits-test");
    }

    @AfterAll
    static void stopRedis() throws Exception {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        redis.close();
    }

    @BeforeEach
    void emptyRedis() throws Exception {
        redis.thaw(); // in case a test failed while it was frozen
        if (!redis.running()) {
            redis.restart();
        }
        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
        Logger.getLogger(SharedLimiter.class.getName()).addHandler(capture);
    }

    @AfterEach
    void closeReplicas() {
        Logger.getLogger(SharedLimiter.class.getName()).removeHandler(capture);
        replicas.forEach(SharedLimiter::close);
    }

    // ---- exact shared counts

    @Test
    void admit_threeReplicasManyThreads_admitExactlyTheLimit() throws Exception {
        List<SharedLimiter> three = List.of(replica(patient()), replica(patient()), replica(patient()));
        KeyConfig k = key("team-a", rpm(100));
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Admission>> all = new CopyOnWriteArrayList<>();
        ExecutorService callers = Executors.newFixedThreadPool(6);
        try {
            for (int t = 0; t < 6; t++) {
                int thread = t;
                callers.submit(() -> {
                    go.await();
                    for (int i = 0; i < 100; i++) {
                        SharedLimiter replica = three.get((thread + i) % 3);
                        all.add(replica.admit(k, chat, 10, group.next()));
                    }
                    return null;
                });
            }
            go.countDown();
            callers.shutdown();
            assertThat(callers.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        } finally {
            callers.shutdownNow();
        }

        int admitted = 0;
        for (Future<Admission> f : all) {
            Admission a = f.get(10, TimeUnit.SECONDS);
            if (a.admitted()) {
                admitted++;
                assertThat(a).isInstanceOf(SharedAdmission.class);
            } else {
                assertThat(a.refusedLimit()).isEqualTo("requests_per_minute");
            }
        }

        assertThat(all).hasSize(600);
        assertThat(admitted).isEqualTo(100);
        assertThat(three).allSatisfy(r -> assertThat(r.fallbacks()).isZero());
    }

    @Test
    void settle_tokensReservedOnOneReplica_areSettledForAll() throws Exception {
        SharedLimiter a = replica(patient());
        SharedLimiter b = replica(patient());
        KeyConfig k = key("team-a", tpm(1000));

        Admission first = admit(a, k, 800);
        Admission tooMuch = admit(b, k, 300);
        settle(first, 100);
        Admission fits = admit(b, k, 900);
        Admission over = admit(a, k, 1);

        assertThat(first.admitted()).isTrue();
        assertThat(tooMuch.refusedLimit()).isEqualTo("tokens_per_minute");
        assertThat(tooMuch.error().message()).isEqualTo("Rate limit reached for tokens per minute on key `team-a` "
                + "(limit 1000, used 800, requested 300). Please try again in 6s.");
        assertThat(fits.admitted()).as("800 reserved, settled at 100: 900 fit").isTrue();
        assertThat(over.admitted()).isFalse();
    }

    @Test
    void admit_concurrencyAcrossReplicas_fourthRefusedUntilOneEnds() throws Exception {
        List<SharedLimiter> r = List.of(replica(patient()), replica(patient()), replica(patient()));
        KeyConfig k = key("team-a", concurrent(3));

        Admission s1 = admit(r.get(0), k, 1);
        Admission s2 = admit(r.get(1), k, 1);
        Admission s3 = admit(r.get(2), k, 1);
        Admission fourth = admit(r.get(0), k, 1);
        settle(s2, 1);
        Admission afterOneEnded = admit(r.get(2), k, 1);

        assertThat(List.of(s1, s2, s3)).allMatch(Admission::admitted);
        assertThat(fourth.refusedLimit()).isEqualTo("concurrent_requests");
        assertThat(fourth.retryAfterMillis()).isEqualTo(1000);
        assertThat(fourth.error().message()).isEqualTo("Rate limit reached for concurrent requests on key `team-a` "
                + "(limit 3 in flight). Please try again in 1s.");
        assertThat(afterOneEnded.admitted()).isTrue();
    }

    @Test
    void admit_dailyBudgetAcrossReplicas_refusesUntilUtcMidnightAndSaysDoNotRetry() throws Exception {
        clock.advanceMillis(Duration.ofMinutes(620).toMillis()); // 23:00 UTC
        SharedLimiter a = replica(patient());
        SharedLimiter b = replica(patient());
        KeyConfig k = key("team-a", daily(1000));

        settle(admit(a, k, 600), 600);
        Admission last = admit(b, k, 600); // still under budget
        settle(last, 700);
        Admission refused = admit(a, k, 1);
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        assertThat(last.admitted()).isTrue();
        assertThat(refused.refusedLimit()).isEqualTo("daily_tokens");
        assertThat(refused.retryAfterMillis()).isEqualTo(3_600_000);
        assertThat(refused.error().message()).isEqualTo("Daily token limit reached on key `team-a` "
                + "(limit 1000 tokens per UTC day). It resets at 00:00 UTC, in 1h0m0s.");
        assertThat(h.get("Retry-After")).isEqualTo("3600");
        assertThat(h.get("x-should-retry")).isEqualTo("false");
        clock.advanceMillis(3_600_000);
        assertThat(admit(b, k, 999).admitted()).as("a new UTC day").isTrue();
    }

    @Test
    void settle_calledTwice_countsOnce() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", new LimitsConfig(0, 1000, 1, 0));
        Admission first = admit(a, k, 100);

        settle(first, 600);
        first.settle(600);

        Admission b = admit(a, k, 400);
        Admission c = admit(a, k, 0);
        assertThat(b.admitted()).as("600 of 1000 used, not 1200").isTrue();
        assertThat(c.refusedLimit()).as("one slot, not two").isEqualTo("concurrent_requests");
    }

    // ---- the same answers as the local limiter

    /** The same story told to a local limiter and to two replicas on Redis: every answer and header the same. */
    @Test
    void answers_sameAsLocalLimiter_forEveryLimitAndScope() throws Exception {
        KeyConfig headersKey = key("team-a", new LimitsConfig(10, 10_000, 0, 0), Map.of("sim-*", rpm(4)), true);
        ModelConfig x = model("x", rpm(1));
        ModelConfig shared = model("sim-shared", rpm(3));
        Story story = (l, seen) -> {
            KeyConfig k = key("team-a", rpm(10));
            for (int i = 0; i < 11; i++) {
                seen.add(describe(l.admit(k, chat, 100), l));
            }
            l.advance(5999);
            seen.add(describe(l.admit(k, chat, 1), l));
            l.advance(1);
            seen.add(describe(l.admit(k, chat, 1), l));
            seen.add(describe(l.admit(k, chat, 1), l));

            KeyConfig t = key("team-t", tpm(1000));
            seen.add(describe(l.admit(t, chat, 5000), l)); // above the bucket: passes a full one
            seen.add(describe(l.admit(t, chat, 1), l));
            l.advance(60_000);
            Admission debt = l.admit(t, chat, 100);
            l.settle(debt, Long.MAX_VALUE); // absurd usage: one window's worth at most
            seen.add(describe(l.admit(t, chat, 1000), l));
            seen.add(describe(l.admit(t, chat, 10), l));

            Admission slow = l.admit(headersKey, chat, 1000);
            l.advance(2500); // the response head goes out later than the admission
            seen.add(describe(slow, l));

            KeyConfig pair = key("team-p", LimitsConfig.NONE, Map.of("sim-*", rpm(2)), true);
            for (int i = 0; i < 3; i++) {
                seen.add(describe(l.admit(pair, model("sim-a"), 1), l));
            }
            seen.add(describe(l.admit(pair, model("sim-b"), 1), l));

            seen.add(describe(l.admit(key("team-m1", LimitsConfig.NONE), shared, 1), l));
            seen.add(describe(l.admit(key("team-m2", LimitsConfig.NONE), shared, 1), l));
            seen.add(describe(l.admit(key("team-m2", LimitsConfig.NONE), shared, 1), l));
            seen.add(describe(l.admit(key("team-m1", LimitsConfig.NONE), shared, 1), l));

            // A later scope refuses: what the key reserved is given back.
            KeyConfig g = key("team-g", new LimitsConfig(3, 1000, 1, 0));
            l.settle(l.admit(g, x, 500), 500);
            seen.add(describe(l.admit(g, x, 500), l));
            Admission onY = l.admit(g, chat, 500);
            seen.add(describe(onY, l));
            l.settle(onY, 500);
            Admission lastOnY = l.admit(g, chat, 0);
            seen.add(describe(lastOnY, l));
            l.settle(lastOnY, 0);
            seen.add(describe(l.admit(g, chat, 0), l));

            // A reload lowers, then raises a limit: it applies to what was counted.
            KeyConfig r100 = key("team-r", rpm(100));
            for (int i = 0; i < 3; i++) {
                l.settle(l.admit(r100, chat, 1), 1);
            }
            seen.add(describe(l.admit(key("team-r", rpm(2)), chat, 1), l));
            seen.add(describe(l.admit(key("team-r", rpm(5)), chat, 1), l));
            seen.add(describe(l.admit(key("team-r", rpm(5)), chat, 1), l));
            seen.add(describe(l.admit(key("team-r", rpm(5)), chat, 1), l));
        };
        List<String> local = new ArrayList<>();
        LimitFixtures.FakeClock localClock = new LimitFixtures.FakeClock("2026-08-21T12:40:00Z");
        story.tell(new LocalLimits(localClock.limiter(), localClock), local);
        List<String> onRedis = new ArrayList<>();
        story.tell(new SharedLimits(replica(patient()), replica(patient())), onRedis);

        assertThat(onRedis).containsExactlyElementsOf(local);
        assertThat(local).anyMatch(s -> s.contains("retry-after=60,"));
    }

    @Test
    void answers_dailyAfterAbsurdUsage_sameAsLocalLimiter() throws Exception {
        Story story = (l, seen) -> {
            l.advance(Duration.ofMinutes(620).toMillis()); // 23:00 UTC
            KeyConfig k = key("team-a", new LimitsConfig(0, 1000, 0, 1_000_000));
            l.settle(l.admit(k, chat, 100), Long.MAX_VALUE);
            seen.add(describe(l.admit(k, chat, 1), l));
            l.advance(60_000);
            seen.add(describe(l.admit(k, chat, 1), l));
            l.advance(3_540_000);
            seen.add(describe(l.admit(k, chat, 1000), l));
        };
        List<String> local = new ArrayList<>();
        LimitFixtures.FakeClock localClock = new LimitFixtures.FakeClock("2026-08-21T12:40:00Z");
        story.tell(new LocalLimits(localClock.limiter(), localClock), local);
        List<String> onRedis = new ArrayList<>();
        story.tell(new SharedLimits(replica(patient()), replica(patient())), onRedis);

        assertThat(onRedis).containsExactlyElementsOf(local);
        assertThat(local.get(1)).contains("daily_tokens", "3540000");
    }

    // ---- leases

    @Test
    void lease_replicaThatStopsWithoutSettling_freesItsSlotWithinTheTtl() throws Exception {
        RedisConfig c = config(redis.port(), 250, Fallback.LOCAL, 2, 1000);
        SharedLimiter crashing = replicaOnRedisClock(c);
        SharedLimiter other = replicaOnRedisClock(c);
        KeyConfig k = key("team-a", concurrent(1));

        Admission stream = admit(crashing, k, 1);
        Thread.sleep(2500); // 2.5 lease lives: renewed while the stream runs
        Admission whileRunning = admit(other, k, 1);
        crashing.close(); // dies: no settlement, no renewal
        long diedAt = System.nanoTime();
        Eventually.until(Duration.ofSeconds(10), () -> admitQuietly(other, k).admitted());
        long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - diedAt);

        assertThat(stream.admitted()).isTrue();
        assertThat(whileRunning.refusedLimit()).isEqualTo("concurrent_requests");
        assertThat(other.fallbacks()).isZero();
        assertThat(freedAfterMillis).as("freed by the lease's expiry, not by a settlement").isLessThan(10_000);
    }

    // ---- faults

    @Test
    void redisKilledMidRun_fallbackDecidesAtOnce_andSharedCountsReturnAfterRestart() throws Exception {
        RedisConfig c = config(redis.port(), 100, Fallback.LOCAL, 2, 1000);
        SharedLimiter a = replica(c);
        SharedLimiter b = replica(c);
        GatewayMetrics metrics = new GatewayMetrics();
        a.timeChecks(metrics.sharedState(a::up, a::timeouts, a::connectionErrors, a::redisErrors, a::fallbacks,
                a::batched));
        KeyConfig k = key("team-a", rpm(20));
        for (int i = 0; i < 5; i++) {
            assertThat(admit(a, k, 1).admitted()).isTrue();
        }
        assertThat(metrics.scrapeText()).as("each check Redis answered, timed")
                .contains("gateway_shared_state_check_seconds_count 5\n")
                .contains("gateway_shared_state_check_seconds_bucket{le=\"+Inf\"} 5\n");

        redis.kill();
        List<Admission> during = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            long start = System.nanoTime();
            during.add(admit(i % 2 == 0 ? a : b, k, 1));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("does not wait for Redis")
                    .isLessThan(1000);
        }
        Eventually.until(UP_WITHIN, () -> !a.up() && !b.up());
        String scraped = metrics.scrapeText();

        // Local fallback: each replica enforces 20 / 2 on its own.
        long admittedDuring = during.stream().filter(Admission::admitted).count();
        assertThat(admittedDuring).isBetween(10L, 20L);
        assertThat(during).noneMatch(x -> x instanceof SharedAdmission && x.admitted());
        assertThat(a.fallbacks() + b.fallbacks()).isGreaterThanOrEqualTo(30);
        assertThat(scraped).contains("gateway_shared_state_up 0.0")
                .containsPattern("gateway_shared_state_errors_total\\{reason=\"connection\"} [1-9]")
                .as("the fallback's decisions are not Redis round trips")
                .contains("gateway_shared_state_check_seconds_count 5\n");
        assertThat(lines(Level.WARNING, "lost Redis at redis://127.0.0.1:" + redis.port() + "/0")).hasSize(2);

        redis.restart();
        long restartedAt = System.nanoTime();
        Eventually.until(UP_WITHIN, () -> a.up() && b.up());
        long upAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt);
        KeyConfig probe = key("probe", rpm(1000));
        Eventually.until(UP_WITHIN, () -> admitQuietly(a, probe) instanceof SharedAdmission
                && admitQuietly(b, probe) instanceof SharedAdmission);
        a.reconfigure(patient()); // from here on a busy machine must not turn a slow answer into a fallback
        b.reconfigure(patient());

        // Exact again: the restarted Redis kept nothing, so the whole 20 is there, shared by both.
        int admitted = 0;
        for (int i = 0; i < 40; i++) {
            if (admit(i % 2 == 0 ? a : b, k, 1).admitted()) {
                admitted++;
            }
        }
        assertThat(admitted).isEqualTo(20);
        assertThat(upAfterMillis).as("shared counts again soon after Redis returns").isLessThan(5000);
        System.out.println("shared counts in force " + upAfterMillis + " ms after redis-server was restarted");
        assertThat(lines(Level.INFO, "answers again")).hasSize(2);
        assertThat(metrics.scrapeText()).contains("gateway_shared_state_up 1.0");
    }

    @Test
    void redisFrozen_callsEndWithinTheTimeout_andTheSharedCountsStayExact() throws Exception {
        RedisConfig c = config(redis.port(), 100, Fallback.LOCAL, 2, 1000);
        SharedLimiter a = replica(c);
        KeyConfig k = key("team-a", rpm(10));

        redis.freeze();
        List<Admission> during = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            long start = System.nanoTime();
            during.add(admit(a, k, 1));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("does not wait for Redis")
                    .isLessThan(1000);
        }
        redis.thaw();
        Eventually.until(UP_WITHIN, a::up);
        // After the pause Redis ran the check that timed out, then its cancellation (no hold is left).
        Eventually.until(UP_WITHIN, () -> exists("mgw:u:k:team-a") && noHolds());
        a.reconfigure(patient()); // from here on a busy machine must not turn a slow answer into a fallback
        int admitted = 0;
        for (int i = 0; i < 12; i++) {
            Admission x = admit(a, k, 1);
            assertThat(x).isInstanceOf(SharedAdmission.class);
            if (x.admitted()) {
                admitted++;
            }
        }

        assertThat(during).allMatch(Admission::admitted).noneMatch(x -> x instanceof SharedAdmission);
        assertThat(a.timeouts()).isPositive();
        assertThat(admitted).as("the check that timed out was not counted").isEqualTo(10);
        assertThat(lines(Level.WARNING, "no answer from redis://127.0.0.1:" + redis.port() + "/0 within 100 ms"))
                .hasSize(1);
    }

    // ---- batches (redis.batch)

    @Test
    void batch_farFromEveryLimit_oneCheckAdmitsMany_andTheCountsEndAsIfEachWereChecked() throws Exception {
        SharedLimiter a = replica(patient()); // batch 64
        KeyConfig k = key("team-a", new LimitsConfig(1_000_000, 10_000_000, 0, 100_000_000));
        EventLoop loop = group.next();
        redis.command("CONFIG", "RESETSTAT");

        List<Admission> admitted = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Admission one = a.admit(k, chat, 100, loop).get(10, TimeUnit.SECONDS);
            assertThat(one.admitted()).isTrue();
            admitted.add(one);
        }
        for (Admission one : admitted) {
            one.settle(30);
        }
        // The batch still open closes past its time (the monotonic clock only: Redis's stays stopped, no refill).
        clock.nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(2 * SharedLimiter.BATCH_MILLIS));
        Eventually.until(UP_WITHIN, SharedLimiterTest::noHolds);

        long scripts = scriptCalls();
        assertThat(scripts).as("admit.lua and settle.lua calls for 200 requests").isLessThanOrEqualTo(12);
        assertThat(admitted.stream().filter(SharedBatch.Batched.class::isInstance).count()).isGreaterThan(190);
        // 200 requests, 30 tokens each: what 200 checks of their own would have left.
        assertThat(usage("k:team-a", "ru")).isEqualTo("200");
        assertThat(usage("k:team-a", "tu")).isEqualTo("6000");
        assertThat(usage("k:team-a", "du")).isEqualTo("6000");
    }

    @Test
    void batch_ofAKeyThatLimitsRequestsOnly_admitsRequestsOfAnyEstimate() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", rpm(1_000_000));
        EventLoop loop = group.next();
        redis.command("CONFIG", "RESETSTAT");
        for (int i = 0; i < 40; i++) {
            Admission one = a.admit(k, chat, i % 2 == 0 ? 10 : 50_000, loop).get(10, TimeUnit.SECONDS);
            assertThat(one.admitted()).isTrue();
            one.settle(20);
        }
        assertThat(scriptCalls()).as("one check for the 40, no token count to run out").isEqualTo(1);
    }

    @Test
    void batch_takenUnderOtherLimits_isNotUsed_andGoesBackWhenItsRequestsEnd() throws Exception {
        SharedLimiter a = replica(patient());
        EventLoop loop = group.next();
        KeyConfig before = key("team-a", rpm(1_000_000));
        Admission first = a.admit(before, chat, 10, loop).get(10, TimeUnit.SECONDS);
        redis.command("CONFIG", "RESETSTAT");

        KeyConfig reloaded = key("team-a", rpm(2_000_000)); // a reload: the same key, other limits
        Admission next = a.admit(reloaded, chat, 10, loop).get(10, TimeUnit.SECONDS);
        assertThat(next).as("checked in Redis under the new limits").isInstanceOf(SharedAdmission.class);
        assertThat(scriptCalls()).isEqualTo(1);

        // Two batches of 64 counted; the old one's only request ends and its 63 unused requests go back.
        assertThat(usage("k:team-a", "ru")).isEqualTo("128");
        first.settle(10);
        Eventually.until(UP_WITHIN, () -> "65".equals(usageQuietly("k:team-a", "ru")));
        assertThat(exists(((SharedAdmission) first).holdKey())).isFalse();
    }

    @Test
    void batch_requestsArrivingWhileItIsAskedFor_waitForIt_oneCheckForAll() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", rpm(1_000_000));
        EventLoop loop = group.next();
        redis.command("CONFIG", "RESETSTAT");
        // Twenty requests in one turn of the loop: the first asks for a batch, the others wait for its answer.
        List<Future<Admission>> twenty = loop.submit(() -> {
            List<Future<Admission>> l = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                l.add(a.admit(k, chat, 10, loop));
            }
            return l;
        }).get(10, TimeUnit.SECONDS);
        int batched = 0;
        for (Future<Admission> f : twenty) {
            Admission one = f.get(10, TimeUnit.SECONDS);
            assertThat(one.admitted()).isTrue();
            batched += one instanceof SharedBatch.Batched ? 1 : 0;
        }
        assertThat(batched).isEqualTo(19);
        assertThat(scriptCalls()).isEqualTo(1);
    }

    @Test
    void batch_headers_countDownAsIfEachRequestWereChecked() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", new LimitsConfig(1_000_000, 10_000_000, 0, 0), Map.of(), true);
        EventLoop loop = group.next();
        List<String> remaining = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            HttpHeaders h = new DefaultHttpHeaders();
            a.admit(k, chat, 100, loop).get(10, TimeUnit.SECONDS).addHeaders(h, ApiStyle.OPENAI);
            remaining.add(h.get("x-ratelimit-remaining-requests") + "/" + h.get("x-ratelimit-remaining-tokens"));
        }
        assertThat(remaining).containsExactly("999999/9999900", "999998/9999800", "999997/9999700",
                "999996/9999600");
    }

    @Test
    void batch_whereItWouldLeaveLessThanAQuarterFree_everyRequestIsCheckedAlone() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", rpm(6400)); // a batch is at most 100 (1/64) and leaves at least 1,600 free
        EventLoop loop = group.next();
        redis.command("HSET", "mgw:u:k:team-a", "ru", "4799", "ra", Long.toString(clock.millis.get() * 1000));
        redis.command("CONFIG", "RESETSTAT");
        for (int i = 0; i < 5; i++) {
            assertThat(a.admit(k, chat, 1, loop).get(10, TimeUnit.SECONDS)).isInstanceOf(SharedAdmission.class);
        }
        assertThat(scriptCalls()).as("one check per request").isEqualTo(5);
        assertThat(usage("k:team-a", "ru")).isEqualTo("4804");
    }

    @Test
    void batch_checkTimedOut_isCancelledWhole() throws Exception {
        // Redis runs the check late (taking a batch of 64), then its cancellation: nothing is left of either.
        Admission timedOut = timedOutThenCancelled(new LimitsConfig(1_000_000, 10_000_000, 0, 100_000_000));

        assertThat(timedOut).isNotInstanceOf(SharedAdmission.class);
        assertThat(usage("k:team-a", "ru")).isEqualTo("0");
        assertThat(usage("k:team-a", "tu")).isEqualTo("0");
        assertThat(usage("k:team-a", "du")).isEqualTo("0");
    }

    /**
     * An admission of team-a with {@code limits} whose check meets a frozen Redis (a timeout of 100 ms), once Redis
     * has thawed, run the check late and its cancellation, and holds nothing.
     */
    private Admission timedOutThenCancelled(LimitsConfig limits) throws Exception {
        SharedLimiter a = replica(config(redis.port(), 100, Fallback.LOCAL, 2, 1000));
        KeyConfig k = key("team-a", limits);
        redis.freeze();
        Admission timedOut = admit(a, k, 100);
        redis.thaw();
        Eventually.until(UP_WITHIN, a::up);
        Eventually.until(UP_WITHIN, () -> exists("mgw:u:k:team-a") && noHolds());
        return timedOut;
    }

    /** EVALSHA and EVAL calls Redis ran since its last CONFIG RESETSTAT. */
    private static long scriptCalls() throws Exception {
        String info = redis.command("INFO", "commandstats").toString();
        long calls = 0;
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_(evalsha|eval):calls=(\\d+)")
                .matcher(info);
        while (m.find()) {
            calls += Long.parseLong(m.group(2));
        }
        return calls;
    }

    @Test
    void timedOutCheck_isCancelledInRedis_soTheSharedCountsStayExact() throws Exception {
        // After the pause Redis runs the check (admitting it), then its cancellation: nothing is left of it.
        Admission timedOut = timedOutThenCancelled(new LimitsConfig(10, 1000, 2, 1_000_000));

        assertThat(timedOut).isNotInstanceOf(SharedAdmission.class);
        assertThat(usage("k:team-a", "tu")).isEqualTo("0");
        assertThat(usage("k:team-a", "du")).isEqualTo("0");
        assertThat(redis.command("ZCARD", "mgw:c:k:team-a")).isEqualTo(0L);
        assertThat(redis.command("KEYS", "mgw:h:*")).isEqualTo(List.of());
    }

    @Test
    void settlementTimedOut_isSentAgain_andCountedOnce() throws Exception {
        RedisConfig c = config(redis.port(), 100, Fallback.LOCAL, 2, 1000);
        SharedLimiter a = replica(c);
        KeyConfig k = key("team-a", tpm(1000));
        Admission held = admit(a, k, 100);

        redis.freeze();
        held.settle(600); // times out; sent again once Redis answers; the first delivery runs then too
        Eventually.until(UP_WITHIN, () -> a.timeouts() > 0);
        redis.thaw();
        Eventually.until(UP_WITHIN, a::up);
        awaitSettled(held);
        Thread.sleep(500); // room for a second delivery to land, had it been counted

        assertThat(usage("k:team-a", "tu")).as("600 used, not 1100").isEqualTo("600");
        assertThat(admit(a, k, 400).admitted()).isTrue();
        assertThat(admit(a, k, 1).admitted()).isFalse();
    }

    @Test
    void flushAll_scriptsLoadAgain_noErrorToCallers() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", rpm(5));
        assertThat(admit(a, k, 1).admitted()).isTrue();

        assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
        List<Admission> after = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            after.add(admit(a, k, 1));
        }

        assertThat(after).allMatch(x -> x instanceof SharedAdmission);
        assertThat(after.stream().filter(Admission::admitted).count()).as("the counts were flushed too").isEqualTo(5);
        assertThat(a.redisErrors()).isZero();
        assertThat(a.fallbacks()).isZero();
        assertThat(a.up()).isTrue();
        assertThat(redis.command("SCRIPT", "EXISTS", SharedLimiter.ADMIT.shaHex())).isEqualTo(List.of(1L));
    }

    /**
     * A settlement and the admission right after it on the same loop leave in one write, the settlement first: the
     * admission sees the slot it freed.
     */
    @Test
    void settlementThenAdmission_onOneLoop_theAdmissionSeesTheFreedSlot() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", new LimitsConfig(0, 0, 1, 0));
        EventLoop loop = group.next();
        Admission first = a.admit(k, chat, 1, loop).get(10, TimeUnit.SECONDS);
        assertThat(first.admitted()).isTrue();

        Admission next = loop.submit(() -> {
            first.settle(1);
            return a.admit(k, chat, 1, loop);
        }).get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);

        assertThat(next.admitted()).as("the slot was freed before the admission ran").isTrue();
        assertThat(admit(a, k, 1).refusedLimit()).as("and the new one holds it").isEqualTo("concurrent_requests");
    }

    /** The scripts write as few times as they can; still, nothing they leave in Redis lives for ever. */
    @Test
    void everyKeyLeftInRedis_expires_evenWhenFlushedBetweenAdmissionAndSettlement() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig all = key("team-a", new LimitsConfig(10, 1000, 2, 5000));
        settle(admit(a, all, 100), 40); // under the reservation: given back
        settle(admit(a, all, 100), 300); // over it: the bucket refilled, then charged
        Admission open = admit(a, all, 100);
        KeyConfig tokensOnly = key("team-b", tpm(1000));
        Admission flushed = admit(a, tokensOnly, 100);
        assertThat(open.admitted()).isTrue();
        assertThat(flushed.admitted()).isTrue();
        assertEveryKeyExpires();

        // Redis loses everything but the hold of the admission (as if flushed while it ran): its settlement charges
        // a usage hash that no longer exists, so it makes a new one.
        Object holdDay = redis.command("GET", ((SharedAdmission) flushed).holdKey());
        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
        redis.command("SET", ((SharedAdmission) flushed).holdKey(), holdDay.toString(), "PX", "60000");
        settle(flushed, 700);
        assertThat(usage("k:team-b", "tu")).as("the overage charged after the flush").isEqualTo("600");
        assertEveryKeyExpires();
    }

    /**
     * A settlement under the reservation gives tokens back: never below 0 when the bucket holds less than the amount
     * (it refilled since), and, when Redis lost the usage hash since the admission, it leaves no hash behind (one
     * without the expiry the admission gives would live for ever).
     */
    @Test
    void settlementUnderTheReservation_clampsAtZero_andLeavesNoHashAfterAFlush() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("team-a", tpm(1000));
        Admission first = admit(a, k, 300);
        Admission second = admit(a, k, 300);
        assertThat(usage("k:team-a", "tu")).isEqualTo("600");
        // The bucket drained to 100 meanwhile (as a refill would): the second give-back of 250 stops at 0.
        settle(first, 50);
        assertThat(usage("k:team-a", "tu")).isEqualTo("350");
        redis.command("HSET", "mgw:u:k:team-a", "tu", "100");
        settle(second, 50);
        assertThat(redis.command("HGET", "mgw:u:k:team-a", "tu")).isEqualTo("0");
        assertEveryKeyExpires();

        Admission flushed = admit(a, k, 300);
        Object holdDay = redis.command("GET", ((SharedAdmission) flushed).holdKey());
        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
        redis.command("SET", ((SharedAdmission) flushed).holdKey(), holdDay.toString(), "PX", "60000");
        settle(flushed, 50);
        assertThat(redis.command("EXISTS", "mgw:u:k:team-a")).as("no usage hash made by the give-back").isEqualTo(0L);
        assertThat((List<?>) redis.command("KEYS", "mgw:*")).as("nothing left").isEmpty();
    }

    /**
     * An admission pushes its usage hash's expiry back (to two days) only when the last push was an hour ago or more,
     * or the hash has no mark of one (new, or written before the mark existed, or marked in the future): a hash in
     * use never expires, and the other admissions save a call.
     */
    @Test
    void usageHashExpiry_pushedBackHourly_notByEveryAdmission() throws Exception {
        // Every admission a check of its own (no batch), so that each one runs admit.lua.
        SharedLimiter a = replica(patient().withBatch(1));
        KeyConfig k = key("team-a", rpm(1000));
        String usage = "mgw:u:k:team-a";
        long twoDays = 172_800_000L;
        long shortened = 5_000_000L;

        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat((Long) redis.command("PTTL", usage)).as("a new hash").isGreaterThan(twoDays - 60_000);

        redis.command("PEXPIRE", usage, Long.toString(shortened));
        clock.advanceMillis(59 * 60_000);
        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat((Long) redis.command("PTTL", usage)).as("59 min after the push").isLessThanOrEqualTo(shortened);

        clock.advanceMillis(60_000);
        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat((Long) redis.command("PTTL", usage)).as("an hour after it").isGreaterThan(twoDays - 60_000);

        redis.command("HDEL", usage, "x");
        redis.command("PEXPIRE", usage, Long.toString(shortened));
        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat((Long) redis.command("PTTL", usage)).as("no mark").isGreaterThan(twoDays - 60_000);

        redis.command("HSET", usage, "x", Long.toString(clock.millis.get() + 10 * 3_600_000L));
        redis.command("PEXPIRE", usage, Long.toString(shortened));
        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat((Long) redis.command("PTTL", usage)).as("a mark in the future").isGreaterThan(twoDays - 60_000);
    }

    private static void assertEveryKeyExpires() throws Exception {
        @SuppressWarnings("unchecked")
        List<Object> left = (List<Object>) redis.command("KEYS", "mgw:*");
        assertThat(left).isNotEmpty();
        for (Object key : left) {
            assertThat((Long) redis.command("PTTL", key.toString())).as("the expiry of %s", key).isPositive();
        }
    }

    @Test
    void fallbackLocal_withNoRedis_enforcesTheLimitDividedByReplicas() throws Exception {
        SharedLimiter a = replicaNeverUp(config(RedisServer.freePort(), 100, Fallback.LOCAL, 4, 1000));
        KeyConfig k = key("team-a", rpm(100));

        int admitted = 0;
        Admission refused = null;
        for (int i = 0; i < 40; i++) {
            Admission x = admit(a, k, 1);
            if (x.admitted()) {
                admitted++;
            } else {
                refused = x;
            }
        }

        assertThat(admitted).isEqualTo(25);
        assertThat(refused.refusedLimit()).isEqualTo("requests_per_minute");
        assertThat(a.up()).isFalse();
        assertThat(a.connectionErrors()).isPositive();
        assertThat(lines(Level.WARNING, "cannot use Redis at redis://127.0.0.1:")).hasSize(1);
        assertThat(lines(Level.WARNING, "limit / 4")).hasSize(1);
    }

    @Test
    void fallbackDeny_withNoRedis_refusesLimitedRequestsOnly() throws Exception {
        SharedLimiter a = replicaNeverUp(config(RedisServer.freePort(), 100, Fallback.DENY, 2, 1000));

        Admission refused = admit(a, key("team-a", rpm(100)), 1);
        Admission unlimited = admit(a, key("team-b", LimitsConfig.NONE), 1);
        HttpHeaders h = new DefaultHttpHeaders();
        refused.addHeaders(h, ApiStyle.OPENAI);

        assertThat(refused.admitted()).isFalse();
        assertThat(refused.refusedLimit()).isEqualTo(SharedLimiter.SHARED_STATE_UNAVAILABLE);
        assertThat(refused.error().kind().status(ApiStyle.OPENAI)).isEqualTo(429);
        assertThat(refused.error().message()).isEqualTo("The limits of this key cannot be checked right now. "
                + "Please try again in 1s.");
        assertThat(h.get("Retry-After")).isEqualTo("1");
        assertThat(unlimited).isSameAs(Admission.UNLIMITED);
    }

    @Test
    void fallbackAllow_withNoRedis_admitsUnchecked() throws Exception {
        SharedLimiter a = replicaNeverUp(config(RedisServer.freePort(), 100, Fallback.ALLOW, 2, 1000));

        Admission x = admit(a, key("team-a", rpm(1)), 1);
        Admission y = admit(a, key("team-a", rpm(1)), 1);

        assertThat(x).isSameAs(Admission.UNLIMITED);
        assertThat(y).isSameAs(Admission.UNLIMITED);
        assertThat(a.fallbacks()).isEqualTo(2);
    }

    @Test
    void reconfigure_anotherRedis_movesTheCountsThere() throws Exception {
        SharedLimiter a = replicaNeverUp(config(RedisServer.freePort(), 100, Fallback.DENY, 2, 1000));
        KeyConfig k = key("team-a", rpm(2));
        assertThat(admit(a, k, 1).refusedLimit()).isEqualTo(SharedLimiter.SHARED_STATE_UNAVAILABLE);

        a.reconfigure(patient());
        assertThat(a.awaitUp(UP_WITHIN)).isTrue();
        Eventually.until(UP_WITHIN, () -> admitQuietly(a, key("other", rpm(5))) instanceof SharedAdmission);

        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat(admit(a, k, 1).admitted()).isTrue();
        assertThat(admit(a, k, 1).refusedLimit()).isEqualTo("requests_per_minute");
    }

    @Test
    void reconfigure_anotherKeyPrefix_newChecksCountThere_earlierAdmissionsSettleUnderTheirs() throws Exception {
        SharedLimiter a = replica(patient());
        KeyConfig k = key("prefixed", rpm(1));
        SharedAdmission before = (SharedAdmission) admit(a, k, 1);
        assertThat(admit(a, k, 1).refusedLimit()).isEqualTo("requests_per_minute");

        a.reconfigure(new RedisConfig("127.0.0.1", redis.port(), 0, false, null, null, PATIENT_MS, "next:",
                Fallback.LOCAL, 2, 4 * PATIENT_MS));
        assertThat(a.awaitUp(UP_WITHIN)).isTrue();
        Eventually.until(UP_WITHIN, () -> admitQuietly(a, key("other", rpm(5))) instanceof SharedAdmission);
        SharedAdmission after = (SharedAdmission) admit(a, k, 1);

        assertThat(after.admitted()).as("the new prefix's counts start empty").isTrue();
        assertThat(exists("next:u:k:prefixed")).isTrue();
        assertThat(before.holdKey()).startsWith("mgw:h:");
        assertThat(after.holdKey()).startsWith("next:h:");
        assertThat(exists(before.holdKey())).isTrue();
        settle(before, 1); // waits until its hold, under the old prefix, is gone
        settle(after, 1);
        assertThat(exists(after.holdKey())).isFalse();
    }

    @Test
    void password_rightOne_isUsed_wrongOne_neverUpAndNeverShown() throws Exception {
        String secret = "s3cret-" + System.nanoTime();
        try (RedisServer locked = RedisServer.start("--requirepass", secret)) {
            RedisConfig right = new RedisConfig("127.0.0.1", locked.port(), 2, false, null, secret, PATIENT_MS, "mgw:",
                    Fallback.DENY, 2, 4 * PATIENT_MS);
            SharedLimiter good = replica(right);
            Admission a = admit(good, key("team-a", rpm(5)), 1);
            RedisConfig wrong = new RedisConfig("127.0.0.1", locked.port(), 0, false, "default", "not-" + secret,
                    100, "mgw:", Fallback.DENY, 2, 1000);
            SharedLimiter bad = replicaNeverUp(wrong);
            Eventually.until(UP_WITHIN, () -> bad.redisErrors() > 0);
            Admission refused = admit(bad, key("team-a", rpm(5)), 1);

            assertThat(a).isInstanceOf(SharedAdmission.class);
            assertThat(a.admitted()).isTrue();
            assertThat(String.valueOf(locked.command("AUTH", secret))).isEqualTo("OK");
            assertThat(refused.refusedLimit()).isEqualTo(SharedLimiter.SHARED_STATE_UNAVAILABLE);
            assertThat(bad.up()).isFalse();
            assertThat(lines(Level.WARNING, "WRONGPASS")).hasSize(1);
            assertThat(logged).noneMatch(r -> r.getMessage().contains(secret));
            assertThat(right.toString() + wrong).doesNotContain(secret);
        }
    }

    @Test
    void database_fromTheConfig_holdsTheCounts() throws Exception {
        SharedLimiter a = replica(new RedisConfig("127.0.0.1", redis.port(), 3, false, null, null, PATIENT_MS,
                "team9:", Fallback.LOCAL, 2, 4 * PATIENT_MS));

        admit(a, key("team-a", tpm(100)), 10).settle(7);

        // The usage hash stays; the hold goes with the settlement (awaitSettled looks in database 0, so not here).
        Eventually.until(UP_WITHIN, () -> keyspace().contains("db3:keys=1,"));
        assertThat(keyspace()).doesNotContain("db0:");
    }

    private static String keyspace() {
        try {
            return String.valueOf(redis.command("INFO", "keyspace"));
        } catch (Exception e) {
            return e.toString();
        }
    }

    @Test
    void silentServer_checksAreDecidedByTheFallback_withoutWaiting() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            List<java.net.Socket> accepted = new CopyOnWriteArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // and never answer
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            acceptor.start();
            try {
                SharedLimiter a = new SharedLimiter(config(silent.getLocalPort(), 100, Fallback.LOCAL, 2, 1000), group,
                        Transport.socketChannel(), Transport.datagramChannel(), () -> clock.millis.get() * 1000,
                        clock.nanos::get, clock.millis::get);
                replicas.add(a);
                Eventually.until(UP_WITHIN, () -> !accepted.isEmpty());
                long start = System.nanoTime();
                Admission x = admit(a, key("team-a", rpm(4)), 1);
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                Eventually.until(UP_WITHIN, () -> a.connectionErrors() > 0); // the handshake gave up: closed

                assertThat(x.admitted()).isTrue();
                assertThat(x).isNotInstanceOf(SharedAdmission.class);
                assertThat(tookMillis).isLessThan(1000);
                assertThat(a.up()).isFalse();
            } finally {
                silent.close();
                acceptor.join(5000);
                for (java.net.Socket s : accepted) {
                    s.close();
                }
            }
        }
    }

    @Test
    void admit_noLimits_isUnlimitedAtOnce() throws Exception {
        SharedLimiter a = replica(patient());

        Future<Admission> f = a.admit(key("team-a", LimitsConfig.NONE), chat, 10, group.next());

        assertThat(f.isDone()).isTrue();
        assertThat(f.getNow()).isSameAs(Admission.UNLIMITED);
    }

    @Test
    void admit_completesOnTheCallersEventLoop() throws Exception {
        SharedLimiter a = replica(patient());
        EventLoop loop = group.next();
        CountDownLatch done = new CountDownLatch(1);
        boolean[] onLoop = new boolean[1];

        loop.execute(() -> a.admit(key("team-a", rpm(5)), chat, 1, loop).addListener(f -> {
            onLoop[0] = loop.inEventLoop();
            done.countDown();
        }));

        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(onLoop[0]).isTrue();
    }

    // ---- helpers

    private RedisConfig patient() {
        return config(redis.port(), PATIENT_MS, Fallback.LOCAL, 2, 4 * PATIENT_MS);
    }

    private static RedisConfig config(int port, int timeoutMs, Fallback fallback, int replicas, int leaseTtlMs) {
        return new RedisConfig("127.0.0.1", port, 0, false, null, null, timeoutMs, "mgw:", fallback, replicas,
                leaseTtlMs);
    }

    /** A replica on the test's stopped clock, once it is using Redis. */
    private SharedLimiter replica(RedisConfig c) throws InterruptedException {
        SharedLimiter l = new SharedLimiter(c, group, Transport.socketChannel(), Transport.datagramChannel(),
                () -> clock.millis.get() * 1000, clock.nanos::get, clock.millis::get);
        replicas.add(l);
        assertThat(l.awaitUp(UP_WITHIN)).as("connected to Redis").isTrue();
        return l;
    }

    /** A replica on Redis's own clock (real time), once it is using Redis. */
    private SharedLimiter replicaOnRedisClock(RedisConfig c) throws InterruptedException {
        SharedLimiter l = new SharedLimiter(c, group, Transport.socketChannel(), Transport.datagramChannel());
        replicas.add(l);
        assertThat(l.awaitUp(UP_WITHIN)).as("connected to Redis").isTrue();
        return l;
    }

    /** A replica whose Redis is not there: it says so once (the warning) and decides by its fallback. */
    private SharedLimiter replicaNeverUp(RedisConfig c) throws InterruptedException {
        SharedLimiter l = new SharedLimiter(c, group, Transport.socketChannel(), Transport.datagramChannel(),
                () -> clock.millis.get() * 1000, clock.nanos::get, clock.millis::get);
        replicas.add(l);
        Eventually.until(UP_WITHIN, () -> l.connectionErrors() > 0);
        return l;
    }

    private Admission admit(SharedLimiter l, KeyConfig k, long estimate) throws Exception {
        return l.admit(k, chat, estimate, group.next()).get(10, TimeUnit.SECONDS);
    }

    private Admission admitQuietly(SharedLimiter l, KeyConfig k) {
        try {
            Admission a = admit(l, k, 1);
            a.settle(1);
            return a;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Settles, and waits until Redis has the settlement (the next check may go out on another connection). */
    private static void settle(Admission a, long actual) throws Exception {
        a.settle(actual);
        if (a instanceof SharedAdmission s && s.admitted()) {
            awaitSettled(s);
        }
    }

    private static void awaitSettled(Admission a) throws Exception {
        SharedAdmission s = (SharedAdmission) a;
        Eventually.until(UP_WITHIN, () -> {
            try {
                return Long.valueOf(0).equals(redis.command("EXISTS", s.holdKey()));
            } catch (Exception e) {
                return false;
            }
        });
    }

    private static boolean noHolds() {
        try {
            return List.of().equals(redis.command("KEYS", "mgw:h:*"));
        } catch (Exception e) {
            return false;
        }
    }

    private static boolean exists(String key) {
        try {
            return Long.valueOf(1).equals(redis.command("EXISTS", key));
        } catch (Exception e) {
            return false;
        }
    }

    private static String usageQuietly(String scope, String field) {
        try {
            return usage(scope, field);
        } catch (Exception e) {
            return null;
        }
    }

    private static String usage(String scope, String field) throws Exception {
        Object v = redis.command("HGET", "mgw:u:" + scope, field);
        return v == null ? "0" : v.toString();
    }

    private List<String> lines(Level level, String containing) {
        List<String> out = new ArrayList<>();
        for (LogRecord r : logged) {
            if (r.getLevel() == level && r.getMessage().contains(containing)) {
                out.add(r.getMessage());
            }
        }
        return out;
    }

    /** What a caller sees of an admission: the decision, the 429 and every header of both styles. */
    private static String describe(Admission a, Limits l) {
        HttpHeaders openAi = new DefaultHttpHeaders();
        a.addHeaders(openAi, ApiStyle.OPENAI);
        HttpHeaders anthropic = new DefaultHttpHeaders();
        a.addHeaders(anthropic, ApiStyle.ANTHROPIC);
        return a.admitted() + " " + a.refusedLimit() + " " + a.retryAfterMillis() + " "
                + (a.error() == null ? "" : a.error().kind() + " " + a.error().message()) + " " + sorted(openAi) + " "
                + sorted(anthropic);
    }

    private static Map<String, String> sorted(HttpHeaders h) {
        Map<String, String> m = new TreeMap<>();
        h.forEach(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    private interface Limits {
        Admission admit(KeyConfig k, ModelConfig m, long estimate) throws Exception;

        void settle(Admission a, long actual) throws Exception;

        void advance(long millis);
    }

    private interface Story {
        void tell(Limits limits, List<String> seen) throws Exception;
    }

    private static final class LocalLimits implements Limits {
        final RateLimiter limiter;
        final LimitFixtures.FakeClock clock;

        LocalLimits(RateLimiter limiter, LimitFixtures.FakeClock clock) {
            this.limiter = limiter;
            this.clock = clock;
        }

        @Override
        public Admission admit(KeyConfig k, ModelConfig m, long estimate) {
            return limiter.admit(k, m, estimate);
        }

        @Override
        public void settle(Admission a, long actual) {
            a.settle(actual);
        }

        @Override
        public void advance(long millis) {
            clock.advanceMillis(millis);
        }
    }

    /** Two replicas taking turns, on the test's clock. */
    private final class SharedLimits implements Limits {
        final SharedLimiter[] replicas;
        int turn;

        SharedLimits(SharedLimiter... replicas) {
            this.replicas = replicas;
        }

        @Override
        public Admission admit(KeyConfig k, ModelConfig m, long estimate) throws Exception {
            Admission a = replicas[turn++ % replicas.length].admit(k, m, estimate, group.next())
                    .get(10, TimeUnit.SECONDS);
            assertThat(a).isNotInstanceOf(LimitedAdmission.class); // decided by Redis, not by a fallback
            return a;
        }

        @Override
        public void settle(Admission a, long actual) throws Exception {
            SharedLimiterTest.settle(a, actual);
        }

        @Override
        public void advance(long millis) {
            clock.advanceMillis(millis);
        }
    }
}
