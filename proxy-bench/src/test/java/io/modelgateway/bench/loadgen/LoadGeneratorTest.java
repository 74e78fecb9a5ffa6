package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The load generator against real loopback servers: the simulator and a server that stalls on purpose. */
class LoadGeneratorTest {
    private static final String CHAT = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";
    private static final String CHAT_STREAM =
            "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";
    private static final String MESSAGES_STREAM = "{\"model\":\"m\",\"max_tokens\":64,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";

    private static SimulatorServer sim;
    private static final AtomicInteger simRequests = new AtomicInteger();

    @BeforeAll
    static void startSimulator() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> simRequests.incrementAndGet());
    }

    @AfterAll
    static void stopSimulator() {
        sim.close();
    }

    @Test
    void closedLoop_nonStream_countsEveryAnsweredRequest() throws Exception {
        int before = simRequests.get();
        LoadResult r = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT, "-c", "4",
                "--warmup", "0", "--duration", "1");
        Thread.sleep(200); // requests in flight at the stop still reach the server
        int served = simRequests.get() - before;

        assertThat(r.errors).isEmpty();
        assertThat(r.completed).isGreaterThan(50);
        assertThat(r.latency.getTotalCount()).isEqualTo(r.completed);
        assertThat(r.requestsPerSecond()).isGreaterThan(50);
        // Warmup 0: every answer is measured; at most one request per connection was cut by the stop.
        assertThat((long) served).isBetween(r.completed, r.completed + 4);
        assertThat(r.ttft.getTotalCount()).isZero();
    }

    /**
     * With a gateway's /metrics URL the run reports what the gateway's event loops allocated per request and per
     * event: a simulated chat stream of 10 events allocates at least its own text on the gateway.
     */
    @Test
    void allocMetrics_reportsTheGatewaysAllocationPerRequestAndPerEvent() throws Exception {
        String yaml = """
                access_log: off
                keys:
                  - name: bench
                    key: ${BENCH_KEY}
                    models: ["*"]
                providers:
                  sim:
                    type: simulator
                models:
                  m:
                    deployments: [{provider: sim, model: sim-chat-1}]
                """;
        io.modelgateway.core.config.GatewayConfig config = io.modelgateway.core.config.ConfigLoader.parse(yaml,
                "alloc.yaml", java.util.Map.of("BENCH_KEY", "sk-bench-alloc"), "127.0.0.1:0");
        try (io.modelgateway.core.server.GatewayServer gw = io.modelgateway.core.server.GatewayServer.start(config, 1,
                null)) {
            String base = "http://127.0.0.1:" + gw.port();
            LoadResult r = run("--url", base + "/api/v1/chat/completions", "--body-json", CHAT_STREAM, "-c", "2",
                    "--warmup", "0.2", "--duration", "1", "-H", "x-sim-output-tokens: 10", "-H", "x-sim-tps: 0",
                    "-H", "Authorization: Bearer sk-bench-alloc", "--alloc-metrics", base + "/metrics");
            assertThat(r.completed).isPositive();
            assertThat(r.allocatedBytes).isPositive();
            assertThat(r.allocBytesPerRequest()).isGreaterThan(1000);
            assertThat(r.allocBytesPerEvent()).isPositive().isLessThan(r.allocBytesPerRequest());
            LoadResult none = run("--url", base + "/api/v1/chat/completions", "--body-json", CHAT, "-c", "1",
                    "--warmup", "0", "--duration", "0.3", "-H", "Authorization: Bearer sk-bench-alloc");
            assertThat(none.allocBytesPerRequest()).as("not asked for").isEqualTo(-1);
        }
        assertThat(AllocSample.parse("# HELP x\ngateway_event_loop_allocated_bytes_total 1.2345E7\n"))
                .isEqualTo(12_345_000L);
        assertThat(AllocSample.parse("other_total 5\n")).isEqualTo(-1);
    }

    @Test
    void openAiStream_measuresTimeToFirstTokenAndInterTokenLatency() throws Exception {
        LoadResult r = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "1.5", "-H", "x-sim-output-tokens: 10", "-H", "x-sim-tps: 200",
                "-H", "x-sim-ttft-ms: 30");

        assertThat(r.errors).isEmpty();
        assertThat(r.streams).isGreaterThan(5);
        // Role chunk, ten content chunks, the finish chunk: every data event but [DONE].
        assertThat((double) r.streamEvents / r.streams).isEqualTo(12.0);
        // Every content event is either a stream's first (TTFT) or follows another (ITL).
        assertThat(r.ttft.getTotalCount() + r.itl.getTotalCount()).isEqualTo(r.events);
        assertThat(r.ttft.getValueAtPercentile(50)).isBetween(25_000L, 300_000L);
        // 200 tokens/s: 5 ms apart.
        assertThat(r.itl.getValueAtPercentile(50)).isBetween(2_000L, 30_000L);
        assertThat(r.latency.getValueAtPercentile(50)).isGreaterThan(r.ttft.getValueAtPercentile(50));
    }

    @Test
    void busyPoll_measuresTheSameStreams() throws Exception {
        LoadOptions options = LoadOptions.parse(new String[] {"--url", simUrl("/v1/chat/completions"), "--busy-poll",
            "--body-json", CHAT_STREAM, "-c", "2", "--threads", "1", "--warmup", "0", "--duration", "1",
            "-H", "x-sim-output-tokens: 10", "-H", "x-sim-tps: 200", "--quiet"});
        assertThat(options.busyPoll()).isTrue();
        assertThat(LoadOptions.parse(new String[] {"--url", simUrl("/x")}).busyPoll()).isFalse();

        LoadResult r = LoadRun.execute(options, null);

        assertThat(r.errors).isEmpty();
        assertThat(r.streams).isGreaterThan(5);
        assertThat((double) r.streamEvents / r.streams).isEqualTo(12.0);
        assertThat(r.ttft.getTotalCount() + r.itl.getTotalCount()).isEqualTo(r.events);
        // 200 tokens/s: 5 ms apart, as without busy polling (its timers still run between polls).
        assertThat(r.itl.getValueAtPercentile(50)).isBetween(2_000L, 30_000L);
    }

    @Test
    void anthropicStream_countsOnlyContentBlockDeltas() throws Exception {
        LoadResult r = run("--url", simUrl("/v1/messages"), "--body-json", MESSAGES_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "1", "-H", "x-sim-output-tokens: 10", "-H",
                "anthropic-version: 2023-06-01");

        assertThat(r.errors).isEmpty();
        assertThat(r.streams).isPositive();
        assertThat((double) r.streamEvents / r.streams).isEqualTo(10.0);
        assertThat(r.ttft.getTotalCount()).isPositive();
    }

    @Test
    void status503_isCountedByStatus_notAsSuccess() throws Exception {
        LoadResult r = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT, "-c", "2",
                "--warmup", "0", "--duration", "0.5", "-H", "x-sim-fault: status=503");

        assertThat(r.completed).isZero();
        assertThat(r.errors).containsOnlyKeys("status_503");
        assertThat(r.errors.get("status_503")).isGreaterThan(10);
        assertThat(r.statuses).containsOnlyKeys(503).containsEntry(503, r.errors.get("status_503"));
        assertThat(r.latency.getTotalCount()).isZero();
    }

    @Test
    void cutStream_isAStreamCut() throws Exception {
        LoadResult r = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "0.5", "-H", "x-sim-fault: cut_after=3");

        assertThat(r.completed).isZero();
        assertThat(r.errors).containsOnlyKeys("stream_cut");
        assertThat(r.errors.get("stream_cut")).isGreaterThan(5);
        // The head said 200 before the stream broke: the caller saw a 200, and it is counted as one.
        assertThat(r.statuses).containsOnlyKeys(200);
        assertThat(r.statuses.get(200)).isGreaterThanOrEqualTo(r.errors.get("stream_cut"));
    }

    @Test
    void errorEventMidStream_isAStreamError() throws Exception {
        LoadResult openAi = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "0.5", "-H", "x-sim-fault: error_after=3");
        LoadResult anthropic = run("--url", simUrl("/v1/messages"), "--body-json", MESSAGES_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "0.5", "-H", "x-sim-fault: error_after=3",
                "-H", "anthropic-version: 2023-06-01");

        assertThat(openAi.errors).containsOnlyKeys("stream_error");
        assertThat(anthropic.errors).containsOnlyKeys("stream_error");
        assertThat(openAi.completed + anthropic.completed).isZero();
    }

    @Test
    void openLoop_aStallShowsInTheHighPercentiles_closedLoopHidesIt() throws Exception {
        // The 100th request is held 500 ms; every other one is answered at once.
        LoadResult open;
        try (StallingServer server = new StallingServer(n -> n == 100 ? 500 : 0)) {
            open = run("--url", "http://127.0.0.1:" + server.port() + "/", "--body-json", "{}", "-c", "1",
                    "--rate", "200", "--warmup", "0", "--duration", "2");
        }
        LoadResult closed;
        try (StallingServer server = new StallingServer(n -> n == 100 ? 500 : 0)) {
            closed = run("--url", "http://127.0.0.1:" + server.port() + "/", "--body-json", "{}", "-c", "1",
                    "--warmup", "0", "--duration", "2");
        }

        assertThat(open.errors).isEmpty();
        assertThat(closed.errors).isEmpty();
        // About 400 requests on schedule; the ~100 scheduled during the stall waited behind it, from 500 ms
        // down to nothing, and are timed from when they should have been sent.
        assertThat(open.completed).isBetween(300L, 420L);
        assertThat(above(open.latency, 100_000)).isGreaterThan(50);
        assertThat(open.latency.getValueAtPercentile(90)).isGreaterThan(100_000);
        assertThat(open.latency.getValueAtPercentile(99)).isGreaterThan(400_000);
        // A closed loop sees one slow request, however long the stall (a busy machine may add a hiccup).
        assertThat(above(closed.latency, 400_000)).isBetween(1L, 2L);
        assertThat(above(closed.latency, 100_000)).isLessThan(above(open.latency, 100_000) / 10);
        assertThat(closed.latency.getValueAtPercentile(99)).isLessThan(100_000);
    }

    @Test
    void unansweredRequest_timesOut_andTheConnectionCarriesOn() throws Exception {
        LoadResult r;
        try (StallingServer server = new StallingServer(n -> n == 0 ? -1 : 0)) {
            r = run("--url", "http://127.0.0.1:" + server.port() + "/", "--body-json", "{}", "-c", "1",
                    "--warmup", "0", "--duration", "1", "--timeout-ms", "300");
        }
        assertThat(r.errors).containsOnlyKeys("timeout");
        assertThat(r.errors.get("timeout")).isEqualTo(1);
        assertThat(r.completed).isGreaterThan(10);
        // The request that timed out never got a head: only the answered ones are counted by status.
        assertThat(r.statuses).containsOnlyKeys(200);
        assertThat(r.statuses.get(200)).isBetween(r.completed, r.completed + 1);
    }

    @Test
    void refusedConnection_isAConnectError() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LoadResult r = run("--url", "http://127.0.0.1:" + port + "/", "--body-json", "{}", "-c", "1",
                "--warmup", "0", "--duration", "0.5");
        assertThat(r.completed).isZero();
        assertThat(r.errors).containsOnlyKeys("connect");
    }

    @Test
    void results_areWrittenAsJsonAndHgrm(@TempDir Path dir) throws Exception {
        LoadResult r = run("--url", simUrl("/v1/chat/completions"), "--body-json", CHAT_STREAM, "-c", "2",
                "--warmup", "0", "--duration", "0.5", "-H", "x-sim-output-tokens: 5");
        r.writeJson(dir.resolve("out.json"));
        r.writeHgrm(dir.resolve("run").toString());

        String json = Files.readString(dir.resolve("out.json"));
        assertThat(json).contains("\"requests_per_second\"", "\"latency_us\"", "\"p99_99\"", "\"ttft_us\"",
                "\"events_per_second\"", "\"errors_by_kind\"");
        // Every answer head by status, the 200s of the streams included.
        assertThat(new ObjectMapper().readTree(json).path("statuses").path("200").asLong())
                .isEqualTo(r.statuses.get(200)).isGreaterThanOrEqualTo(r.completed).isPositive();
        assertThat(Files.readString(dir.resolve("run-latency.hgrm"))).contains("Percentile", "#[Mean");
        assertThat(dir.resolve("run-ttft.hgrm")).exists();
        assertThat(dir.resolve("run-itl.hgrm")).exists();
    }

    @Test
    void nonLoopbackTarget_isRefused() {
        assertThatThrownBy(() -> LoadOptions.parse(new String[] {"--url", "http://192.0.2.10:8080/x"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("loopback");
        assertThat(LoadOptions.parse(new String[] {"--url", "http://localhost:1/x"}).address().isLoopbackAddress())
                .isTrue();
    }

    private static long above(Histogram h, long micros) {
        return h.getTotalCount() - h.getCountBetweenValues(0, micros);
    }

    private static String simUrl(String path) {
        return "http://127.0.0.1:" + sim.port() + path;
    }

    private static LoadResult run(String... args) throws InterruptedException {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--quiet");
        return LoadRun.execute(LoadOptions.parse(all.toArray(String[]::new)), null);
    }
}
