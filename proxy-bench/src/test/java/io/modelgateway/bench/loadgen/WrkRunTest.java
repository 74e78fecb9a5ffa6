package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code loadgen --wrk} with the real wrk (Debian's package, installed by scripts/test): what wrk sent is read back by
 * Netty's own HTTP server codec, its counts against the server's, a stream's events from the probe, a failing
 * upstream stopping the run before wrk starts.
 */
class WrkRunTest {
    /** A body with escaped quotes and backslashes, a newline and two bytes past ASCII: wrk reads it from a file. */
    private static final String BODY = "{\n\"model\":\"m\",\"messages\":[{\"role\":\"user\","
            + "\"content\":\"a \\\"q\\\" \\\\ \\n caf\u00e9\"}]}";

    @Test
    void wrkSendsTheRequestAsGiven_andItsCountsAreTheServers() throws Exception {
        try (Recorder server = new Recorder(HttpResponseStatus.OK)) {
            LoadResult r = WrkRun.execute(options(server.port(), BODY, "--header", "x-odd: a \"b\" \\c\\ d",
                    "--header", "Authorization: Bearer sk-test", "-c", "2"), null);

            // Every request wrk sent is the one asked for, byte for byte (the probe's are not recorded).
            assertThat(server.methods).containsOnlyKeys("POST");
            assertThat(server.bodies).containsOnlyKeys(BODY);
            assertThat(server.headers.get("x-odd")).containsOnlyKeys("a \"b\" \\c\\ d");
            assertThat(server.headers.get("authorization")).containsOnlyKeys("Bearer sk-test");
            assertThat(server.headers.get("content-type")).containsOnlyKeys("application/json");
            assertThat(server.headers.get("content-length"))
                    .containsOnlyKeys(Integer.toString(BODY.getBytes(StandardCharsets.UTF_8).length));

            assertThat(r.errors).isEmpty();
            assertThat(r.transport).isEqualTo("wrk");
            assertThat(r.completed).isGreaterThan(100);
            assertThat(r.latency.getTotalCount()).isEqualTo(r.completed);
            assertThat(r.streams).isZero();
            assertThat(r.events).isZero();
            // The server saw the probe's requests, wrk's, and at most one per connection wrk cut at its stop.
            int probe = server.probeRequests();
            assertThat((long) server.requests.get() - probe).isBetween(r.completed, r.completed + 2);
            assertThat(r.seconds()).isBetween(0.9, 1.5);
            assertThat(r.cpu.ownNanos()).isGreaterThan(0); // wrk's own CPU, read as it printed
        }
    }

    @Test
    void streams_countTheProbesEventsForEachAnswer() throws Exception {
        SimulatorServer sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> { });
        try {
            String stream = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            LoadOptions o = LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:" + sim.port()
                    + "/v1/chat/completions", "--body-json", stream, "-c", "2", "--warmup", "0", "--duration", "1",
                    "--wrk", "--quiet"});
            LoadResult probe = WrkRun.probe(o);
            LoadResult r = WrkRun.execute(o, null);

            assertThat(probe.streams).isPositive();
            double perStream = (double) probe.streamEvents / probe.streams;
            assertThat(perStream).isGreaterThan(1);
            assertThat(r.errors).isEmpty();
            assertThat(r.completed).isPositive();
            assertThat(r.streams).isEqualTo(r.completed);
            // The simulator's answers to one request are alike: the same events in every stream.
            assertThat(r.events).isEqualTo(Math.round(r.completed * perStream));
        } finally {
            sim.close();
        }
    }

    @Test
    void anUpstreamThatFails_stopsTheRunBeforeWrk() throws Exception {
        try (Recorder server = new Recorder(HttpResponseStatus.SERVICE_UNAVAILABLE)) {
            assertThatThrownBy(() -> WrkRun.execute(options(server.port(), BODY, "-c", "2"), null))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("probe")
                    .hasMessageContaining("status_503");
            Thread.sleep(200);
            assertThat(server.requests.get()).isEqualTo(server.probeRequests());
        }
    }

    @Test
    void wrksQuantiles_becomeAHistogramOfEveryAnswer() {
        long[] quantiles = new long[WrkRun.QUANTILES];
        for (int i = 0; i < quantiles.length; i++) {
            quantiles[i] = 1000 + i; // quantile i: 1000 + i µs
        }
        WrkRun.Summary s = new WrkRun.Summary(2_000_000, 10_007, 0, 1, 0, 7, 2, 900, 50_000, quantiles, -1);
        LoadResult r = new LoadResult(LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--wrk"}), "wrk",
                2_000_000_000L, new CpuSample(-1, -1), -1);
        s.fill(r, 0);

        assertThat(r.completed).isEqualTo(10_000); // the 7 answers with a status over 399 are errors
        assertThat(r.errors).containsOnly(Map.entry("read", 1L), Map.entry("status_over_399", 7L),
                Map.entry("timeout", 2L));
        assertThat(r.latency.getTotalCount()).isEqualTo(10_000);
        assertThat(r.latency.getMinValue()).isEqualTo(900);
        assertThat(r.latency.getMaxValue()).isBetween(50_000L, 50_050L); // three significant digits
        assertThat(r.latency.getValueAtPercentile(50)).isBetween(1499L, 1500L);
        assertThat(r.latency.getValueAtPercentile(99)).isBetween(1989L, 1990L);
        assertThat(r.requestsPerSecond()).isEqualTo(5000.0);
    }

    @Test
    void wrkRefusesAnOpenLoop() {
        assertThatThrownBy(() -> LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:1/", "--wrk", "--rate",
            "100"})).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("closed loop");
    }

    private static LoadOptions options(int port, String body, String... more) {
        List<String> args = new ArrayList<>(List.of("--url", "http://127.0.0.1:" + port + "/v1/chat/completions",
                "--body-json", body, "--warmup", "0", "--duration", "1", "--wrk", "--quiet"));
        args.addAll(List.of(more));
        return LoadOptions.parse(args.toArray(String[]::new));
    }

    /**
     * A server that answers every request with one status and remembers the distinct methods, bodies and header
     * values it was sent (by header name, lower case), apart from the probe's (this program's client names itself).
     */
    private static final class Recorder implements AutoCloseable {
        final Map<String, Boolean> methods = new ConcurrentHashMap<>();
        final Map<String, Boolean> bodies = new ConcurrentHashMap<>();
        final Map<String, Map<String, Boolean>> headers = new ConcurrentHashMap<>();
        private final AtomicInteger probe = new AtomicInteger();
        private final StallingServer server;
        /** Every request, the probe's included. */
        final AtomicInteger requests;

        Recorder(HttpResponseStatus status) throws InterruptedException {
            server = new StallingServer(n -> 0, status, this::record);
            requests = server.requests;
        }

        private void record(FullHttpRequest req) {
            if ("modelgateway-loadgen".equals(req.headers().get(HttpHeaderNames.USER_AGENT))) {
                probe.incrementAndGet();
                return;
            }
            methods.put(req.method().name(), true);
            bodies.put(new String(ByteBufUtil.getBytes(req.content()), StandardCharsets.UTF_8), true);
            req.headers().forEach(h -> headers.computeIfAbsent(h.getKey().toLowerCase(Locale.ROOT),
                    k -> new ConcurrentHashMap<>()).put(h.getValue(), true));
        }

        int probeRequests() {
            return probe.get();
        }

        int port() {
            return server.port();
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
