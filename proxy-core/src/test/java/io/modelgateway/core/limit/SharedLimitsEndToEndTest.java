package io.modelgateway.core.limit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.exchange.Transport;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.RedisServer;
import io.modelgateway.core.testing.TcpRelay;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three real gateways on one real Redis ({@link RedisServer}), as three replicas behind a load balancer: the limits
 * of a key hold across them exactly (requests, tokens settled against real usage, concurrency, the daily budget),
 * the slot of a replica that dies frees itself within its lease, and Redis killed under load, restarted or flushed
 * costs the callers no error.
 *
 * <p>The exact counts run on a stopped clock (the gateways' shared limiters take the test's clock instead of
 * Redis's, through {@link TestGateway#start(String, io.modelgateway.core.exchange.ExchangeObserver,
 * Limiters.SharedFactory)}), so a bucket that refills one request every 600 ms cannot make 100 into 101 on a slow
 * machine; the lease test runs on Redis's own clock.
 */
class SharedLimitsEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}]}";
    static final String STREAM = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
    static final String OTHER_KEY = "sk-other-key";
    /** Long enough that a busy machine never turns a slow answer into a fallback decision where a test counts. */
    static final int PATIENT_MS = 2000;

    private static RedisServer redis;

    private final LimitFixtures.FakeClock clock = new LimitFixtures.FakeClock("2026-08-21T12:40:00Z");
    /** Shared limiters on the stopped clock. */
    private final Limiters.SharedFactory stoppedClock = (c, group) -> new SharedLimiter(c, group,
            Transport.socketChannel(), Transport.datagramChannel(), () -> clock.millis.get() * 1000,
            clock.nanos::get, clock.millis::get);
    private final List<TestGateway> gateways = new ArrayList<>();
    private final List<RecordingObserver> records = new ArrayList<>();
    private final List<TcpRelay> relays = new ArrayList<>();

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    @BeforeEach
    void emptyRedis() throws Exception {
        redis.thaw(); // in case a test failed while it was frozen
        if (!redis.running()) {
            redis.restart();
        }
        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
    }

    @AfterEach
    void stop() {
        relays.forEach(TcpRelay::close);
        gateways.forEach(TestGateway::close);
    }

    // ---- exact shared counts

    @Test
    void requestsPerMinute100_600RequestsOverThreeGatewaysInParallel_exactly100Admitted() throws Exception {
        List<TestGateway> three = three("    limits: {requests_per_minute: 100}", PATIENT_MS, "local", 3,
                stoppedClock);

        Map<Integer, Integer> byStatus = new TreeMap<>();
        List<HttpResponse<String>> refusals = new ArrayList<>();
        for (HttpResponse<String> r : inParallel(three, 600, 12, CHAT, "authorization", "Bearer " + TestGateway.KEY)) {
            byStatus.merge(r.statusCode(), 1, Integer::sum);
            if (r.statusCode() == 429) {
                refusals.add(r);
            }
        }

        assertThat(byStatus).containsExactly(Map.entry(200, 100), Map.entry(429, 500));
        HttpResponse<String> refused = refusals.get(0);
        assertThat(JSON.readTree(refused.body()).at("/error/type").asText()).isEqualTo("requests");
        assertThat(header(refused, "retry-after")).isEqualTo("1"); // one request back every 600 ms
        assertThat(header(refused, "x-ratelimit-limit-requests")).isEqualTo("100");
        assertThat(header(refused, "x-ratelimit-remaining-requests")).isEqualTo("0");
        for (TestGateway gw : three) {
            assertThat(gw.server().context().limiters().fallbacks()).as("every check was Redis's").isZero();
        }
    }

    @Test
    void farFromTheLimits_600RequestsOverThreeGateways_fewChecksInRedis_countsExactOnceBatchesClose() throws Exception {
        List<TestGateway> three = three("    limits: {requests_per_minute: 1000000, tokens_per_minute: 100000000}",
                PATIENT_MS, "local", 3, stoppedClock);
        redis.command("CONFIG", "RESETSTAT");

        long usedTokens = 0;
        for (HttpResponse<String> r : inParallel(three, 600, 12, CHAT, "authorization", "Bearer " + TestGateway.KEY)) {
            assertThat(r.statusCode()).isEqualTo(200);
            usedTokens += JSON.readTree(r.body()).path("usage").path("total_tokens").asLong();
        }
        // Batches close past their time (the gateways' monotonic clock; Redis's clock stays stopped: no refill).
        clock.nanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
        settledInRedis();

        String stats = redis.command("INFO", "commandstats").toString();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(stats);
        assertThat(m.find()).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("script calls for 600 requests (1,200 without batches)")
                .isLessThan(200);
        assertThat(String.valueOf(redis.command("HGET", "mgw:u:k:team-a", "ru"))).as("each request counted once")
                .isEqualTo("600");
        assertThat(String.valueOf(redis.command("HGET", "mgw:u:k:team-a", "tu"))).as("settled against the real usage")
                .isEqualTo(Long.toString(usedTokens));
        long batched = 0;
        for (TestGateway gw : three) {
            assertThat(gw.server().context().limiters().fallbacks()).isZero();
            batched += gw.server().context().limiters().batched();
        }
        assertThat(batched).as("answered from batches").isGreaterThan(400);
        assertThat(three.get(0).get("/metrics").body()).containsPattern("gateway_shared_state_batched_total [1-9]");
    }

    @Test
    void tokensPerMinute_sharedAndSettledAgainstRealUsage_acrossThreeGateways() throws Exception {
        List<TestGateway> three = three("    limits: {tokens_per_minute: 120}", PATIENT_MS, "local", 3, stoppedClock);

        long used = 0;
        Long previousRemaining = null;
        long previousUsage = 0;
        int successes = 0;
        HttpResponse<String> r;
        while ((r = three.get(successes % 3).call("/api/v1/chat/completions", CHAT)).statusCode() == 200) {
            records.get(successes % 3).next(); // ended: its settlement is on its way to Redis
            settledInRedis(); // and there before the next check, which another gateway sends on another connection
            long remaining = Long.parseLong(header(r, "x-ratelimit-remaining-tokens"));
            if (previousRemaining != null) {
                // The clock is stopped: what the shared bucket lost between two requests on two different
                // gateways is exactly what the previous one really used (its reservation given back but that).
                assertThat(previousRemaining - remaining).isEqualTo(previousUsage);
            }
            previousUsage = JSON.readTree(r.body()).path("usage").path("total_tokens").asLong();
            previousRemaining = remaining;
            used += previousUsage;
            successes++;
            assertThat(successes).isLessThan(60);
        }

        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(r.body()).at("/error/type").asText()).isEqualTo("tokens");
        assertThat(used).as("one bucket of 120 for the three").isLessThanOrEqualTo(120);
        assertThat(successes).as("settled against real usage: more pass than their reservations would allow")
                .isGreaterThan((int) (120 / (CHAT.length() / 4 + 5)));
    }

    @Test
    void concurrentRequests3_fourthStreamRefusedWhileThreeRunAcrossGateways_admittedWhenOneEnds() throws Exception {
        List<TestGateway> three = three("    limits: {concurrent_requests: 3}", PATIENT_MS, "local", 3, stoppedClock);
        // The second gateway's stream lasts 2 s, the two others 20 s: they still run when it has ended.
        List<HttpResponse<InputStream>> streams = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            TestGateway gw = three.get(i);
            HttpResponse<InputStream> s = gw.http.send(slowStream(gw, i == 1 ? 40 : 400),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(s.statusCode()).isEqualTo(200);
            streams.add(s);
        }

        HttpResponse<String> fourth = three.get(0).http.send(slowStream(three.get(0), 1),
                HttpResponse.BodyHandlers.ofString());
        String first;
        try (InputStream in = streams.get(1).body()) {
            first = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        records.get(1).next(); // the stream on the second gateway ended: its slot is given back
        Eventually.until(Duration.ofSeconds(10), () -> holds() == 2); // given back in Redis; two still held
        HttpResponse<String> afterOneEnded = three.get(2).http.send(slowStream(three.get(2), 1),
                HttpResponse.BodyHandlers.ofString());

        assertThat(fourth.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(fourth.body()).at("/error/message").asText()).contains("concurrent");
        assertThat(header(fourth, "retry-after")).isNotNull();
        assertThat(first).endsWith("data: [DONE]\n\n");
        assertThat(afterOneEnded.statusCode()).isEqualTo(200);
        assertThat(afterOneEnded.body()).endsWith("data: [DONE]\n\n");
        for (int i : new int[] {0, 2}) {
            streams.get(i).body().close(); // the caller leaves: the gateway ends the stream
        }
    }

    @Test
    void dailyTokens_oneBudgetForThreeGateways_429UntilMidnightAndNoRetry() throws Exception {
        List<TestGateway> three = three("    limits: {daily_tokens: 60}", PATIENT_MS, "local", 3, stoppedClock);

        List<Long> usages = new ArrayList<>();
        HttpResponse<String> r;
        while ((r = three.get(usages.size() % 3).call("/api/v1/messages", CHAT)).statusCode() == 200) {
            records.get(usages.size() % 3).next(); // ended: its usage is on its way to Redis
            settledInRedis();
            JsonNode usage = JSON.readTree(r.body()).path("usage");
            usages.add(usage.path("input_tokens").asLong() + usage.path("output_tokens").asLong());
            assertThat(usages.size()).isLessThan(60);
        }

        long beforeLast = usages.stream().mapToLong(Long::longValue).sum() - usages.get(usages.size() - 1);
        assertThat(beforeLast).as("each admitted while the day's shared usage was under 60").isLessThan(60);
        assertThat(beforeLast + usages.get(usages.size() - 1)).as("refused once it reached 60")
                .isGreaterThanOrEqualTo(60);
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(header(r, "x-should-retry")).isEqualTo("false");
        // the stopped clock reads 12:40 UTC: 11 h 20 min to midnight
        assertThat(header(r, "retry-after")).isEqualTo(Long.toString(11 * 3600 + 20 * 60));
    }

    // ---- a replica that dies

    @Test
    void concurrency_killedReplicasSlotFreedWithinItsLeaseTtl() throws Exception {
        // On Redis's clock: leases expire in real time. The third gateway reaches Redis through a relay the test
        // cuts, as if its process died: it can neither renew its lease nor give its slot back.
        TcpRelay relay = new TcpRelay(redis.port());
        relays.add(relay);
        String limits = "    limits: {concurrent_requests: 3}";
        int leaseTtlMs = 1000;
        TestGateway a = gateway(limits, redis.port(), 250, "deny", 3, leaseTtlMs, Limiters.REDIS);
        TestGateway b = gateway(limits, redis.port(), 250, "deny", 3, leaseTtlMs, Limiters.REDIS);
        TestGateway dying = gateway(limits, relay.port(), 250, "deny", 3, leaseTtlMs, Limiters.REDIS);
        List<HttpResponse<InputStream>> streams = new ArrayList<>();
        for (TestGateway gw : List.of(a, b, dying)) {
            HttpResponse<InputStream> s = gw.http.send(slowStream(gw, 300), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(s.statusCode()).isEqualTo(200);
            streams.add(s);
        }
        Thread.sleep(2 * leaseTtlMs); // two lease lives: renewed while the streams run
        assertThat(a.call("/api/v1/chat/completions", CHAT).statusCode()).as("three run, renewed").isEqualTo(429);

        relay.cut();
        long cutAt = System.nanoTime();
        int status;
        do {
            status = b.call("/api/v1/chat/completions", CHAT).statusCode();
        } while (status == 429 && System.nanoTime() - cutAt < TimeUnit.SECONDS.toNanos(10));
        long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cutAt);

        assertThat(status).isEqualTo(200);
        assertThat(freedAfterMillis).as("freed by the lease's expiry").isLessThan(leaseTtlMs + 3000);
        // B's own call gives its slot back after its answer went out (a separate Redis call): A's check may reach
        // Redis first, so A is admitted once that release lands: A's and B's streams still hold two, not three.
        Eventually.until(Duration.ofSeconds(5), () -> {
            try {
                return a.call("/api/v1/chat/completions", CHAT).statusCode() == 200;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        streams.forEach(s -> {
            try {
                s.body().close();
            } catch (Exception ignored) {
                // closing the caller's side ends the stream
            }
        });
    }

    // ---- Redis faults under load

    @Test
    void redisKilledMidLoad_fallbackWithNoErrorToCallers_restarted_exactAgain() throws Exception {
        // team-a has a generous limit: every request of the load is admitted whether Redis or the fallback decides.
        List<TestGateway> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(gateway("    limits: {requests_per_minute: 1000000}", redis.port(), PATIENT_MS, "local", 3,
                    10_000, stoppedClock, "    limits: {requests_per_minute: 100}"));
        }
        AtomicBoolean loading = new AtomicBoolean(true);
        AtomicInteger served = new AtomicInteger();
        Map<Integer, Integer> byStatus = new ConcurrentHashMap<>();
        CountDownLatch someServed = new CountDownLatch(50);
        ExecutorService callers = Executors.newFixedThreadPool(6);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int t = 0; t < 6; t++) {
                TestGateway gw = three.get(t % 3);
                done.add(callers.submit(() -> {
                    while (loading.get()) {
                        int s = gw.call("/api/v1/chat/completions", CHAT).statusCode();
                        byStatus.merge(s, 1, Integer::sum);
                        served.incrementAndGet();
                        someServed.countDown();
                    }
                    return null;
                }));
            }
            assertThat(someServed.await(30, TimeUnit.SECONDS)).isTrue();
            redis.kill();
            int atKill = served.get();
            Eventually.until(Duration.ofSeconds(20), () -> served.get() > atKill + 100
                    && three.stream().allMatch(g -> !g.server().context().limiters().up()));
            int whileDown = served.get();
            Eventually.until(Duration.ofSeconds(20), () -> served.get() > whileDown + 50);
            redis.restart();
            Eventually.until(Duration.ofSeconds(20),
                    () -> three.stream().allMatch(g -> g.server().context().limiters().up()));
            int afterRestart = served.get();
            Eventually.until(Duration.ofSeconds(20), () -> served.get() > afterRestart + 50);
        } finally {
            loading.set(false);
            callers.shutdown();
        }
        for (Future<?> f : done) {
            f.get(30, TimeUnit.SECONDS); // no caller saw an exception (a hang or a reset connection)
        }
        assertThat(byStatus).as("every caller answered 200, before, during and after the outage")
                .containsOnlyKeys(200);
        for (TestGateway gw : three) {
            assertThat(gw.server().context().limiters().fallbacks()).as("the fallback decided meanwhile").isPositive();
            assertThat(gw.server().context().limiters().connectionErrors()).isPositive();
        }
        String metrics = three.get(0).get("/metrics").body();
        assertThat(metrics).contains("gateway_shared_state_up 1.0")
                .containsPattern("gateway_shared_state_errors_total\\{reason=\"connection\"} [1-9]");

        // Back on Redis (empty again): team-b's 100 a minute hold exactly across the three.
        Map<Integer, Integer> exact = new TreeMap<>();
        for (HttpResponse<String> r : inParallel(three, 300, 12, CHAT, "authorization", "Bearer " + OTHER_KEY)) {
            exact.merge(r.statusCode(), 1, Integer::sum);
        }
        assertThat(exact).containsExactly(Map.entry(200, 100), Map.entry(429, 200));
    }

    @Test
    void redisFrozen_noRequestWaitsPastTimeout_fallbackAnswers_thawed_sharedAgain() throws Exception {
        int timeoutMs = 200;
        List<TestGateway> three = three("    limits: {requests_per_minute: 1000000}", timeoutMs, "local", 3,
                Limiters.REDIS);
        assertThat(inParallel(three, 30, 6, CHAT, "authorization", "Bearer " + TestGateway.KEY))
                .allMatch(r -> r.statusCode() == 200);

        List<Long> millis = new ArrayList<>();
        List<Integer> statuses = new ArrayList<>();
        // The batches those requests took have closed (redis.batch): the next request of each gateway asks Redis.
        settledInRedis();
        redis.freeze(); // SIGSTOP: connections stay open, nothing is answered
        try {
            for (int i = 0; i < 9; i++) {
                long t0 = System.nanoTime();
                statuses.add(three.get(i % 3).call("/api/v1/chat/completions", CHAT).statusCode());
                millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            }
        } finally {
            redis.thaw();
        }
        Eventually.until(Duration.ofSeconds(10),
                () -> three.stream().allMatch(g -> g.server().context().limiters().up()));

        assertThat(statuses).as("the fallback admits; the caller sees no error").containsOnly(200);
        // One check per gateway meets the frozen Redis and waits its timeout_ms; the next are decided at once.
        assertThat(millis).allMatch(ms -> ms < timeoutMs + 1500, "each answered within timeout_ms and a margin");
        for (TestGateway gw : three) {
            assertThat(gw.server().context().limiters().timeouts()).isPositive();
            assertThat(gw.server().context().limiters().fallbacks()).isPositive();
        }
        assertThat(three.get(1).call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
    }

    @Test
    void redisFlushed_noErrorToCallers_countsStartAgain() throws Exception {
        List<TestGateway> three = three("    limits: {requests_per_minute: 10}", PATIENT_MS, "local", 3, stoppedClock);
        Map<Integer, Integer> before = new TreeMap<>();
        for (HttpResponse<String> r : inParallel(three, 30, 6, CHAT, "authorization", "Bearer " + TestGateway.KEY)) {
            before.merge(r.statusCode(), 1, Integer::sum);
        }

        assertThat(redis.command("FLUSHALL")).isEqualTo("OK");
        assertThat(redis.command("SCRIPT", "FLUSH")).isEqualTo("OK");
        Map<Integer, Integer> after = new TreeMap<>();
        for (HttpResponse<String> r : inParallel(three, 30, 6, CHAT, "authorization", "Bearer " + TestGateway.KEY)) {
            after.merge(r.statusCode(), 1, Integer::sum);
        }

        assertThat(before).containsExactly(Map.entry(200, 10), Map.entry(429, 20));
        assertThat(after).as("the scripts loaded again, the counts from zero").containsExactly(Map.entry(200, 10),
                Map.entry(429, 20));
    }

    @Test
    void clientLeavesWhileItsRequestWaitsForRedis_endedAtOnce_itsLateAdmissionSettled() throws Exception {
        TestGateway gw = gateway("    limits: {requests_per_minute: 1000000}", redis.port(), 5000, "local", 3, 20_000,
                Limiters.REDIS);
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        settledInRedis();
        io.modelgateway.core.exchange.Exchanges exchanges = gw.server().context().exchanges();
        byte[] body = CHAT.getBytes(StandardCharsets.UTF_8);

        redis.freeze();
        try (java.net.Socket client = new java.net.Socket("127.0.0.1", gw.port())) {
            client.getOutputStream().write(("POST /api/v1/chat/completions HTTP/1.1\r\nhost: gw\r\n"
                    + "authorization: Bearer " + TestGateway.KEY + "\r\ncontent-type: application/json\r\n"
                    + "content-length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            client.getOutputStream().write(body);
            client.getOutputStream().flush();
            Eventually.until(Duration.ofSeconds(10), () -> exchanges.inProgress() == 1); // held for Redis
        } // the caller leaves
        try {
            // Ended while Redis still answers nothing: the request does not wait for it.
            Eventually.until(Duration.ofSeconds(10), () -> exchanges.inProgress() == 0);
        } finally {
            redis.thaw();
        }
        // Redis answers the check late (or the gateway cancels it): either way its hold is given back, once.
        settledInRedis();

        assertThat(records.get(0).next().outcome()).isEqualTo(io.modelgateway.core.exchange.Outcome.DONE);
        assertThat(records.get(0).next().outcome()).isEqualTo(io.modelgateway.core.exchange.Outcome.CANCELLED);
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        assertThat(gw.server().context().limiters().up()).isTrue();
    }

    // ---- reload

    @Test
    void reload_blockAdded_sharedFromTheNextRequest_removed_eachCountsOnItsOwnAgain() throws Exception {
        String limits = "    limits: {requests_per_minute: 3}";
        String shared = config(limits, redis.port(), PATIENT_MS, "local", 2, 4 * PATIENT_MS, "");
        String local = shared.substring(shared.indexOf("keys:"));
        TestGateway a = start(local, stoppedClock);
        TestGateway b = start(local, stoppedClock);
        int aBefore = a.call("/api/v1/chat/completions", CHAT).statusCode();
        String metricsWithout = a.get("/metrics").body();

        a.server().context().swap(parse(shared));
        b.server().context().swap(parse(shared));
        // Until a limiter made by a reload reaches Redis its fallback decides (as at start): wait for it.
        Eventually.until(Duration.ofSeconds(10), () -> a.server().context().limiters().up()
                && b.server().context().limiters().up());
        List<Integer> whileShared = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            whileShared.add((i % 2 == 0 ? a : b).call("/api/v1/chat/completions", CHAT).statusCode());
        }
        String metricsShared = a.get("/metrics").body();
        a.server().context().swap(parse(local));
        b.server().context().swap(parse(local));
        List<Integer> aAfter = new ArrayList<>();
        List<Integer> bAfter = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            aAfter.add(a.call("/api/v1/chat/completions", CHAT).statusCode());
            bAfter.add(b.call("/api/v1/chat/completions", CHAT).statusCode());
        }

        assertThat(aBefore).isEqualTo(200);
        assertThat(metricsWithout).as("no redis block, no shared-state metrics").doesNotContain("gateway_shared_state");
        assertThat(whileShared).as("3 a minute for the two together").containsExactly(200, 200, 200, 429, 429, 429);
        assertThat(metricsShared).contains("gateway_shared_state_up 1.0")
                .as("A's three checks, answered by Redis, timed").contains("gateway_shared_state_check_seconds_count 3\n");
        assertThat(aAfter).as("A's own count kept its request from before").containsExactly(200, 200, 429, 429);
        assertThat(bAfter).containsExactly(200, 200, 200, 429);
        assertThat(a.get("/metrics").body()).contains("gateway_shared_state_up 0.0")
                .contains("gateway_shared_state_fallbacks_total 0.0");
    }

    // ---- spend budgets

    @Test
    void spendBudgets_sharedByTwoGateways_theReportReadsRedis_andTheFallbackKeepsAShare() throws Exception {
        // Every exchange costs at least its per-request price, which is each key's whole budget: one exchange on
        // either gateway uses the budget up for both.
        String yaml = """
                admin:
                  listen: 127.0.0.1:0
                redis:
                  url: redis://127.0.0.1:%d/0
                  timeout_ms: 500
                  fallback: local
                  replicas_hint: 2
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                    budget_usd: {daily: 0.0001}
                  - name: team-b
                    key: sha256:%s
                    models: ["*"]
                    budget_usd: {monthly: 0.0001}
                providers:
                  sim: {type: simulator}
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1, price: {input: 2, output: 10, per_request: 0.0001}}]
                """.formatted(redis.port(), TestGateway.sha256Hex(OTHER_KEY));
        TestGateway a = start(yaml, Limiters.REDIS);
        TestGateway b = start(yaml, Limiters.REDIS);

        assertThat(a.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        double spentA = records.get(0).next().costUsd();
        assertThat(a.call("/api/v1/chat/completions", CHAT, "authorization", "Bearer " + OTHER_KEY).statusCode())
                .isEqualTo(200);
        double spentB = records.get(0).next().costUsd();
        assertThat(spentA).isGreaterThanOrEqualTo(0.0001);
        settledInRedis();

        // The other gateway has spent nothing itself, and refuses both keys: their spend is shared.
        HttpResponse<String> daily = b.call("/api/v1/chat/completions", CHAT);
        assertThat(daily.statusCode()).isEqualTo(429);
        assertThat(daily.headers().firstValue("x-should-retry")).hasValue("false");
        assertThat(JSON.readTree(daily.body()).get("error").get("message").asText())
                .contains("daily spend budget", "team-a");
        assertThat(records.get(1).next().limit()).isEqualTo("daily_budget_usd");
        HttpResponse<String> monthly = b.call("/api/v1/chat/completions", CHAT, "authorization", "Bearer " + OTHER_KEY);
        assertThat(monthly.statusCode()).isEqualTo(429);
        assertThat(records.get(1).next().limit()).isEqualTo("monthly_budget_usd");

        JsonNode report = JSON.readTree(adminGet(b, "/admin/api/keys/team-a/spend").body());
        assertThat(report.get("source").asText()).isEqualTo("redis");
        assertThat(report.get("daily").get("spent_usd").asDouble()).isCloseTo(spentA, org.assertj.core.data.Offset
                .offset(1e-6));
        assertThat(report.get("daily").get("remaining_usd").asDouble()).isZero();
        assertThat(report.get("monthly").get("spent_usd").asDouble()).isCloseTo(spentA, org.assertj.core.data.Offset
                .offset(1e-6));
        JsonNode reportB = JSON.readTree(adminGet(b, "/admin/api/keys/team-b/spend").body());
        assertThat(reportB.get("monthly").get("spent_usd").asDouble()).isCloseTo(spentB, org.assertj.core.data.Offset
                .offset(1e-6));

        redis.freeze();
        List<Integer> whileFrozen = new ArrayList<>();
        int reportWhileFrozen;
        try {
            reportWhileFrozen = adminGet(b, "/admin/api/keys/team-a/spend").statusCode();
            // The local fallback: B enforces its half of the budget with its own counts, which are empty.
            whileFrozen.add(b.call("/api/v1/chat/completions", CHAT).statusCode());
            whileFrozen.add(b.call("/api/v1/chat/completions", CHAT).statusCode());
        } finally {
            redis.thaw();
        }
        assertThat(reportWhileFrozen).as("the shared spend cannot be read").isEqualTo(503);
        assertThat(whileFrozen).containsExactly(200, 429);
        Eventually.until(Duration.ofSeconds(10), () -> b.server().context().limiters().up());
        assertThat(b.call("/api/v1/chat/completions", CHAT).statusCode()).as("shared again: used up").isEqualTo(429);
    }

    private static HttpResponse<String> adminGet(TestGateway gw, String path) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + gw.server().adminPort() + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return gw.http.send(r, HttpResponse.BodyHandlers.ofString());
    }

    // ---- helpers

    private List<TestGateway> three(String keyLimits, int timeoutMs, String fallback, int replicas,
            Limiters.SharedFactory factory) throws Exception {
        List<TestGateway> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(gateway(keyLimits, redis.port(), timeoutMs, fallback, replicas, Math.max(1000, 4 * timeoutMs),
                    factory));
        }
        return three;
    }

    private TestGateway gateway(String keyLimits, int redisPort, int timeoutMs, String fallback, int replicas,
            int leaseTtlMs, Limiters.SharedFactory factory) throws Exception {
        return gateway(keyLimits, redisPort, timeoutMs, fallback, replicas, leaseTtlMs, factory, "");
    }

    private TestGateway gateway(String keyLimits, int redisPort, int timeoutMs, String fallback, int replicas,
            int leaseTtlMs, Limiters.SharedFactory factory, String otherKeyLimits) throws Exception {
        return start(config(keyLimits, redisPort, timeoutMs, fallback, replicas, leaseTtlMs, otherKeyLimits), factory);
    }

    private TestGateway start(String yaml, Limiters.SharedFactory factory) throws Exception {
        RecordingObserver observer = new RecordingObserver();
        TestGateway gw = TestGateway.start(yaml, observer, factory);
        gateways.add(gw);
        records.add(observer);
        return gw;
    }

    private static io.modelgateway.core.config.GatewayConfig parse(String yaml) throws Exception {
        return io.modelgateway.core.config.ConfigLoader.parse("access_log: off\n" + yaml, "test.yaml",
                Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0");
    }

    private static String config(String keyLimits, int redisPort, int timeoutMs, String fallback, int replicas,
            int leaseTtlMs, String otherKeyLimits) {
        return """
                redis:
                  url: redis://127.0.0.1:%d/0
                  timeout_ms: %d
                  fallback: %s
                  replicas_hint: %d
                  lease_ttl_ms: %d
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                %s
                  - name: team-b
                    key: sha256:%s
                    models: ["*"]
                %s
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1}]
                """.formatted(redisPort, timeoutMs, fallback, replicas, leaseTtlMs, keyLimits,
                TestGateway.sha256Hex(OTHER_KEY), otherKeyLimits);
    }

    /**
     * Waits until every admission's settlement reached Redis (its hold is gone). Redis takes the commands of
     * different connections in no promised order, so a test that counts across gateways waits for the one before.
     */
    private static void settledInRedis() throws InterruptedException {
        Eventually.until(Duration.ofSeconds(10), () -> holds() == 0);
    }

    /** The admissions Redis holds, not settled yet. */
    private static int holds() {
        try {
            return ((List<?>) redis.command("KEYS", "mgw:h:*")).size();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** {@code n} calls spread over the gateways in turn, from {@code threads} threads at once. */
    private static List<HttpResponse<String>> inParallel(List<TestGateway> gateways, int n, int threads, String body,
            String... headers) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        List<Future<HttpResponse<String>>> calls = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                TestGateway gw = gateways.get(i % gateways.size());
                calls.add(callers.submit(() -> {
                    go.await();
                    return gw.call("/api/v1/chat/completions", body, headers);
                }));
            }
            go.countDown();
            List<HttpResponse<String>> all = new ArrayList<>();
            for (Future<HttpResponse<String>> f : calls) {
                all.add(f.get(60, TimeUnit.SECONDS));
            }
            return all;
        } finally {
            callers.shutdownNow();
        }
    }

    /** A stream of {@code tokens} tokens at 20 a second (so it runs tokens / 20 s), with the test key. */
    private static HttpRequest slowStream(TestGateway gw, int tokens) {
        return gw.post("/api/v1/chat/completions", STREAM).header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-sim-tps", "20").header("x-sim-output-tokens", Integer.toString(tokens)).build();
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
