package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.HostAndPort;
import io.modelgateway.core.testing.TestGateway;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The dashboard's parts: the counters, the buckets, the history, and the page, files and stream over loopback. */
class DashboardTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN_KEY = "adm-0123456789abcdef";

    private static ExchangeRecord record(String key, String model, String provider, int status, Outcome outcome,
            long durationMillis, long ttftMillis, long in, long out, double cost) {
        ExchangeRecord r = new ExchangeRecord("req_1", Endpoint.CHAT_COMPLETIONS, 0, 0, 10);
        r.keyName(key);
        r.model(model);
        if (provider != null) {
            r.deployment(provider, model + "-1");
        }
        r.stream(ttftMillis >= 0);
        r.head(status, 1);
        if (ttftMillis >= 0) {
            r.bodyBytes(10, ttftMillis * 1_000_000);
        }
        r.usage(in, out, ExchangeRecord.UsageSource.UPSTREAM);
        r.cost(cost);
        r.end(outcome, durationMillis * 1_000_000);
        return r;
    }

    private static long[] read(LiveStats stats, String selector) {
        for (int id = 0; id < stats.seriesCount(); id++) {
            if (stats.series(id).selector().equals(selector)) {
                long[] into = new long[LiveStats.WIDTH];
                stats.read(id, into);
                return into;
            }
        }
        throw new AssertionError("no series " + selector);
    }

    @Nested
    class Counters {
        @Test
        void ended_countsPerSeries_errorsAndRefusalsApart() {
            LiveStats stats = new LiveStats();
            stats.started(null);
            stats.started(null);
            stats.ended(record("team-a", "chat", "sim", 200, Outcome.DONE, 40, 10, 5, 7, 0.5));
            stats.ended(record("team-a", "chat", "sim", 502, Outcome.UPSTREAM_ERROR, 20, -1, 5, 0, 0));
            stats.ended(record("team-b", "embed", null, 429, Outcome.LIMITED, 1, -1, 0, 0, 0));
            stats.ended(record("team-b", null, null, 404, Outcome.REJECTED, 1, -1, 0, 0, 0));

            long[] total = read(stats, "total");
            assertThat(total[LiveStats.REQUESTS]).isEqualTo(4);
            assertThat(total[LiveStats.ERRORS]).isEqualTo(1);
            assertThat(total[LiveStats.REFUSED]).isEqualTo(2);
            assertThat(total[LiveStats.INPUT_TOKENS]).isEqualTo(10);
            assertThat(total[LiveStats.OUTPUT_TOKENS]).isEqualTo(7);
            assertThat(Double.longBitsToDouble(total[LiveStats.COST])).isEqualTo(0.5);
            assertThat(read(stats, "model:chat")[LiveStats.REQUESTS]).isEqualTo(2);
            assertThat(read(stats, "model:embed")[LiveStats.REFUSED]).isEqualTo(1);
            assertThat(read(stats, "key:team-b")[LiveStats.REQUESTS]).isEqualTo(2);
            assertThat(read(stats, "provider:sim")[LiveStats.ERRORS]).isEqualTo(1);
            // Only the stream that sent a byte has a time to first token.
            long ttft = 0;
            for (int i = 0; i < LatencyBuckets.COUNT; i++) {
                ttft += total[LiveStats.TTFT + i];
            }
            assertThat(ttft).isEqualTo(1);
            assertThat(stats.inFlight()).isZero(); // two started, four ended: never below zero
            assertThat(stats.recentFailures()).singleElement()
                    .satisfies(f -> assertThat(f.reason()).isEqualTo("502"));
        }

        @Test
        void names_pastTheCap_shareOneSeries() {
            LiveStats stats = new LiveStats();
            for (int i = 0; i < LiveStats.MAX_NAMES + 10; i++) {
                stats.ended(record("key-" + i, "m", "p", 200, Outcome.DONE, 1, -1, 0, 0, 0));
            }
            // all, one model, one provider, MAX_NAMES keys and the shared one.
            assertThat(stats.seriesCount()).isEqualTo(1 + 1 + 1 + LiveStats.MAX_NAMES + 1);
            assertThat(read(stats, "key:" + LiveStats.OTHER)[LiveStats.REQUESTS]).isEqualTo(10);
            assertThat(read(stats, "total")[LiveStats.REQUESTS]).isEqualTo(LiveStats.MAX_NAMES + 10);
        }

        @Test
        void manyThreads_everyCountArrives() throws Exception {
            LiveStats stats = new LiveStats();
            int threads = 4;
            int each = 20_000;
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String model = "m" + (t % 2);
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < each; i++) {
                        stats.started(null);
                        stats.ended(record("k", model, "p", 200, Outcome.DONE, 3, 1, 2, 3, 0));
                    }
                });
                th.start();
                all.add(th);
            }
            go.countDown();
            for (Thread th : all) {
                th.join();
            }
            assertThat(read(stats, "total")[LiveStats.REQUESTS]).isEqualTo((long) threads * each);
            assertThat(read(stats, "model:m0")[LiveStats.OUTPUT_TOKENS]).isEqualTo(3L * 2 * each);
            assertThat(stats.inFlight()).isZero();
        }
    }

    @Nested
    class Buckets {
        @Test
        void index_isMonotonic_andAValueLiesInItsBucket() {
            int last = 0;
            for (long n = 1; n < 3_600_000_000_000L; n = n * 11 / 10 + 1) {
                int i = LatencyBuckets.index(n);
                assertThat(i).isGreaterThanOrEqualTo(last);
                last = i;
                if (i > 0 && i < LatencyBuckets.COUNT - 1) {
                    assertThat((double) n).isBetween(LatencyBuckets.lowerNanos(i) * 0.999999,
                            LatencyBuckets.lowerNanos(i + 1) * 1.000001);
                    assertThat(LatencyBuckets.representativeNanos(i) / n).isBetween(1 / 1.1, 1.1);
                }
            }
            assertThat(LatencyBuckets.index(-5)).isZero();
            assertThat(last).isEqualTo(LatencyBuckets.COUNT - 1);
        }

        @Test
        void quantile_withinTheBucketsPrecision() {
            long[] counts = new long[LatencyBuckets.COUNT];
            for (int ms = 1; ms <= 100; ms++) {
                counts[LatencyBuckets.index(ms * 1_000_000L)]++;
            }
            assertThat(LatencyBuckets.quantileMillis(counts, 0, 0.5)).isCloseTo(50, within(5.0));
            assertThat(LatencyBuckets.quantileMillis(counts, 0, 0.99)).isCloseTo(99, within(9.0));
            assertThat(LatencyBuckets.quantileMillis(new long[LatencyBuckets.COUNT], 0, 0.5)).isNaN();
        }
    }

    @Nested
    class History {
        @Test
        void tick_keepsPerSecondDifferences_windowCounts_andPercentiles() throws Exception {
            LiveStats stats = new LiveStats();
            LiveHistory history = new LiveHistory(stats, 0, 1_000_000);
            for (int i = 0; i < 10; i++) {
                stats.ended(record("k", "chat", "sim", 200, Outcome.DONE, 100, 20, 1, 2, 0));
            }
            history.tick(1_000_000_000L, 1_001_000, List.of());
            for (int i = 0; i < 5; i++) {
                stats.ended(record("k", "chat", "sim", 500, Outcome.UPSTREAM_ERROR, 10, -1, 1, 0, 0));
            }
            history.tick(2_000_000_000L, 1_002_000, List.of(new DeploymentStates.State("sim", "chat-1",
                    List.of("chat"), DeploymentStates.Rotation.PROBING, 1, 3, 3, 500)));

            JsonNode points = JSON.readTree(history.points(history.find("model:chat"), 300, "model:chat"));
            assertThat(points.path("t").toString()).isEqualTo("[1001.0,1002.0]");
            assertThat(points.path("rps").toString()).isEqualTo("[10,5]");
            assertThat(points.path("eps").toString()).isEqualTo("[0,5]");
            assertThat(points.path("tokens_out").toString()).isEqualTo("[20,0]");
            assertThat(points.path("lat_p50").get(0).asDouble()).isCloseTo(100, within(10.0));
            assertThat(points.path("ttft_p50").get(1).asDouble()).isCloseTo(20, within(2.0));
            // A series with no traffic yet: zeros and gaps, under the name asked for.
            JsonNode none = JSON.readTree(history.points(null, 300, "model:later"));
            assertThat(none.path("series").asText()).isEqualTo("model:later");
            assertThat(none.path("lat_p50").toString()).isEqualTo("[null,null]");

            JsonNode state = JSON.readTree(history.state(1_002_000));
            JsonNode chat = state.path("model").get(0);
            assertThat(chat.path("name").asText()).isEqualTo("chat");
            assertThat(chat.path("requests").asLong()).isEqualTo(15);
            assertThat(chat.path("errors").asLong()).isEqualTo(5);
            assertThat(chat.path("error_rate").asDouble()).isCloseTo(1 / 3.0, within(1e-3));
            assertThat(chat.path("rps").asDouble()).isCloseTo(7.5, within(1e-3));
            assertThat(state.path("costs").asBoolean()).isFalse();
            JsonNode d = state.path("deployments").get(0);
            assertThat(d.path("rotation").asText()).isEqualTo("probing");
            assertThat(d.path("failures_window").asLong()).isEqualTo(3);
            assertThat(state.path("failures").toString()).contains("\"reason\":\"500\"");
        }

        @Test
        void config_namesOnly_neverAKeyOrItsHash() throws Exception {
            GatewayConfig config = ConfigLoader.parse(TestGateway.simulatorConfig(), "test.yaml",
                    Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0");
            String json = LiveHistory.config(config);
            assertThat(json).contains("\"name\":\"sim-chat\"", "\"name\":\"test\"", "\"name\":\"limited\"");
            assertThat(json).doesNotContain(TestGateway.KEY).doesNotContain(TestGateway.sha256Hex(TestGateway.KEY))
                    .doesNotContain(TestGateway.sha256Hex("sk-limited"));
        }
    }

    /** The page, its files and its stream on a real admin listener. */
    @Nested
    class OverLoopback {
        private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        private AdminServer server;

        private AdminServer start(String adminYaml, boolean loopback) throws Exception {
            GatewayConfig config = ConfigLoader.parse("admin:\n" + adminYaml + TestGateway.simulatorConfig(),
                    "test.yaml", Map.of("GATEWAY_KEY", TestGateway.KEY, "ADMIN_KEY", ADMIN_KEY), "127.0.0.1:0");
            Dashboard dashboard = new Dashboard(new LiveStats(), () -> config, DeploymentStates.NONE, loopback);
            server = new AdminServer(new HostAndPort("127.0.0.1", 0), new GatewayMetrics(), () -> true, dashboard)
                    .start();
            return server;
        }

        @AfterEach
        void stop() {
            if (server != null) {
                server.close();
            }
        }

        private HttpResponse<String> get(String path, String... headers) throws Exception {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                    .timeout(Duration.ofSeconds(10));
            for (int i = 0; i + 1 < headers.length; i += 2) {
                b.header(headers[i], headers[i + 1]);
            }
            return client.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        }

        private HttpResponse<Stream<String>> events(String... headers) throws Exception {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                    + "/dashboard/events?series=model%3Asim-chat"));
            for (int i = 0; i + 1 < headers.length; i += 2) {
                b.header(headers[i], headers[i + 1]);
            }
            return client.send(b.build(), HttpResponse.BodyHandlers.ofLines());
        }

        @Test
        void page_andItsFiles_fromTheJar() throws Exception {
            start("  listen: 127.0.0.1:0\n", true);
            HttpResponse<String> page = get("/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
            assertThat(page.headers().firstValue("content-security-policy")).hasValueSatisfying(
                    v -> assertThat(v).contains("default-src 'self'", "frame-ancestors 'none'"));
            assertThat(page.body()).contains("<script src=\"/dashboard/uPlot.iife.min.js\"");
            HttpResponse<String> uplot = get("/dashboard/uPlot.iife.min.js");
            assertThat(uplot.statusCode()).isEqualTo(200);
            assertThat(uplot.body()).isEqualTo(new String(Dashboard.resource(Dashboard.uplotDirectory()
                    + "uPlot.iife.min.js"), StandardCharsets.UTF_8));
            assertThat(get("/dashboard/uPlot.min.css").headers().firstValue("content-type"))
                    .hasValue("text/css; charset=utf-8");
            assertThat(get("/dashboard/dashboard.js").statusCode()).isEqualTo(200);
            assertThat(get("/dashboard/nothing.js").statusCode()).isEqualTo(404);
            assertThat(get("/metrics").statusCode()).isEqualTo(200);
        }

        @Test
        void adminKey_basicOrBearer_elseUnauthorized_metricsStayOpen() throws Exception {
            start("  listen: 127.0.0.1:0\n  key: ${ADMIN_KEY}\n", true);
            assertThat(get("/").statusCode()).isEqualTo(401);
            assertThat(get("/").headers().firstValue("www-authenticate"))
                    .hasValue("Basic realm=\"Model Gateway admin\", charset=\"UTF-8\"");
            assertThat(get("/", "authorization", "Bearer wrong").statusCode()).isEqualTo(401);
            assertThat(get("/", "authorization", "Bearer " + TestGateway.KEY).statusCode()).isEqualTo(401);
            assertThat(get("/", "authorization", "Basic !!notbase64").statusCode()).isEqualTo(401);
            assertThat(get("/dashboard/uPlot.min.css").statusCode()).isEqualTo(401);
            assertThat(get("/", "authorization", "Bearer " + ADMIN_KEY).statusCode()).isEqualTo(200);
            String basic = Base64.getEncoder().encodeToString(("anyone:" + ADMIN_KEY).getBytes(StandardCharsets.UTF_8));
            assertThat(get("/", "authorization", "Basic " + basic).statusCode()).isEqualTo(200);
            assertThat(events().statusCode()).isEqualTo(401);
            assertThat(get("/metrics").statusCode()).isEqualTo(200);
            assertThat(get("/health").statusCode()).isEqualTo(200);
        }

        @Test
        void keySpend_guardedByTheAdminKeyLikeThePage() throws Exception {
            start("  listen: 127.0.0.1:0\n  key: ${ADMIN_KEY}\n", true);
            assertThat(get("/admin/api/keys/test/spend").statusCode()).isEqualTo(401);
            assertThat(get("/admin/api/keys/test/spend", "authorization", "Bearer " + TestGateway.KEY).statusCode())
                    .isEqualTo(401);
            // This listener reports no spend: found nowhere, once the key is right.
            assertThat(get("/admin/api/keys/test/spend", "authorization", "Bearer " + ADMIN_KEY).statusCode())
                    .isEqualTo(404);
            assertThat(get("/admin/other", "authorization", "Bearer " + ADMIN_KEY).statusCode()).isEqualTo(404);
        }

        @Test
        void nonLoopback_withoutKey_refused() throws Exception {
            start("  listen: 127.0.0.1:0\n", false);
            HttpResponse<String> r = get("/");
            assertThat(r.statusCode()).isEqualTo(403);
            assertThat(r.body()).contains("admin.key");
            assertThat(get("/admin/api/keys/test/spend").statusCode()).isEqualTo(403);
            assertThat(get("/metrics").statusCode()).isEqualTo(200);
        }

        @Test
        void stream_snapshotFirst_capped_endsCleanlyWhenTheListenerStops() throws Exception {
            start("  listen: 127.0.0.1:0\n", true);
            List<Iterator<String>> open = new ArrayList<>();
            for (int i = 0; i < Dashboard.MAX_STREAMS; i++) {
                HttpResponse<Stream<String>> r = events();
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
                open.add(r.body().iterator());
            }
            Iterator<String> first = open.get(0);
            assertThat(first.next()).isEqualTo("retry: 3000");
            String data = first.next();
            assertThat(data).startsWith("data: ");
            JsonNode snapshot = JSON.readTree(data.substring(6));
            assertThat(snapshot.path("type").asText()).isEqualTo("snapshot");
            assertThat(snapshot.path("points").path("series").asText()).isEqualTo("model:sim-chat");
            assertThat(snapshot.path("config").path("models").toString()).contains("sim-chat");
            assertThat(first.next()).isEmpty();
            // Then one tick a second, without the config (it did not change).
            JsonNode tick = JSON.readTree(first.next().substring(6));
            assertThat(tick.path("type").asText()).isEqualTo("tick");
            assertThat(tick.has("config")).isFalse();
            assertThat(tick.path("points").path("t").size()).isEqualTo(1);

            HttpResponse<String> refused = get("/dashboard/events");
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("retry-after")).hasValue("10");

            server.close();
            // Every page gets the shutdown event, then the response ends (the line stream finishes, no reset).
            for (Iterator<String> lines : open) {
                List<String> rest = new ArrayList<>();
                lines.forEachRemaining(rest::add);
                assertThat(rest).contains("data: {\"type\":\"shutdown\"}");
            }
            server = null;
        }
    }
}
