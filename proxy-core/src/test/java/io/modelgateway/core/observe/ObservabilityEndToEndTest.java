package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * /metrics and the access log, end to end: what they report for real exchanges, where they are served, and that
 * no gateway key or provider key ever appears in them or in any error body.
 */
class ObservabilityEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String PROVIDER_KEY = "sk-provider-secret-0123456789";
    static final String WRONG_KEY = "sk-caller-typo-9876543210";
    static final String CHAT = "{\"model\":\"%s\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    @Test
    void accessLogMetricsAndErrors_reportExchanges_andNeverAKey(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("access.log");
        List<String> bodies = new ArrayList<>();
        String metrics;
        try (SimulatorServer sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, PROVIDER_KEY, null)) {
            String base = "http://127.0.0.1:" + sim.port();
            try (TestGateway gw = TestGateway.start("""
                    access_log: %s
                    keys:
                      - name: team-a
                        key: ${GATEWAY_KEY}
                        models: ["*"]
                        limits: {requests_per_minute: 5}
                    providers:
                      up: {type: openai, base_url: "%s/v1", api_key: %s}
                      up-anthropic: {type: anthropic, base_url: "%s", api_key: %s}
                      wrong: {type: openai, base_url: "%s/v1", api_key: sk-not-the-right-one-555}
                    models:
                      oa-chat: {deployments: [{provider: up, model: sim-chat-1}]}
                      an-chat: {deployments: [{provider: up-anthropic, model: sim-claude-1}]}
                      broken: {deployments: [{provider: wrong, model: sim-chat-1}]}
                    """.formatted(log, base, PROVIDER_KEY, base, PROVIDER_KEY, base))) {
                bodies.add(expect(gw.call("/api/v1/chat/completions", CHAT.formatted("oa-chat")), 200));
                bodies.add(expect(gw.call("/api/v1/messages", CHAT.formatted("an-chat")), 200));
                bodies.add(expect(gw.call("/api/v1/chat/completions", CHAT.formatted("broken")), 502));
                bodies.add(expect(gw.call("/api/v1/chat/completions", CHAT.formatted("oa-chat"),
                        "authorization", "Bearer " + WRONG_KEY), 401));
                bodies.add(expect(gw.call("/api/v1/messages", CHAT.formatted("an-chat"), "x-api-key", WRONG_KEY), 401));
                bodies.add(expect(gw.call("/api/v1/chat/completions", CHAT.formatted("nope")), 404));
                for (int i = 0; i < 2; i++) {
                    gw.call("/api/v1/chat/completions", CHAT.formatted("oa-chat"));
                }
                bodies.add(expect(gw.call("/api/v1/chat/completions", CHAT.formatted("oa-chat")), 429));
                HttpResponse<String> m = gw.get("/metrics");
                assertThat(m.statusCode()).isEqualTo(200);
                assertThat(m.headers().firstValue("content-type").orElse("")).startsWith("text/plain");
                metrics = m.body();
            }
        }
        assertThat(metrics)
                .contains("gateway_requests_total{endpoint=\"chat_completions\",key=\"team-a\",model=\"oa-chat\","
                        + "outcome=\"done\",status=\"200\"} 3.0")
                .contains("gateway_requests_total{endpoint=\"messages\",key=\"none\",model=\"unknown\","
                        + "outcome=\"rejected\",status=\"401\"} 1.0")
                .contains("gateway_limit_refusals_total{key=\"team-a\",limit=\"requests_per_minute\",model=\"oa-chat\"} 1.0")
                .contains("gateway_tokens_total{direction=\"output\",key=\"team-a\",model=\"oa-chat\",type=\"output\"} 15.0")
                .contains("gateway_request_duration_seconds_bucket")
                .contains("gateway_upstream_latency_seconds_count{provider=\"up\"}")
                .contains("gateway_inflight_exchanges 0.0");

        List<String> lines = Files.readAllLines(log);
        assertThat(lines).hasSize(9);
        JsonNode first = JSON.readTree(lines.get(0));
        assertThat(first.path("key").asText()).isEqualTo("team-a");
        assertThat(first.path("model").asText()).isEqualTo("oa-chat");
        assertThat(first.path("provider").asText()).isEqualTo("up");
        assertThat(first.path("deployment").asText()).isEqualTo("sim-chat-1");
        assertThat(first.path("status").asInt()).isEqualTo(200);
        assertThat(first.path("outcome").asText()).isEqualTo("done");
        assertThat(first.path("usage").asText()).isEqualTo("upstream");
        assertThat(first.path("output_tokens").asInt()).isEqualTo(5);
        assertThat(first.path("input_tokens").asInt()).isPositive();
        assertThat(first.path("request_id").asText()).startsWith("req_");
        assertThat(first.path("bytes_out").asLong()).isPositive();
        assertThat(JSON.readTree(lines.get(2)).path("outcome").asText()).isEqualTo("upstream_error");
        assertThat(JSON.readTree(lines.get(3)).path("key").isNull()).isTrue();

        for (String secret : List.of(TestGateway.KEY, WRONG_KEY, PROVIDER_KEY, "sk-not-the-right-one-555")) {
            assertThat(String.join("\n", lines)).as("access log").doesNotContain(secret);
            assertThat(metrics).as("metrics").doesNotContain(secret);
            assertThat(String.join("\n", bodies)).as("error bodies").doesNotContain(secret);
        }
    }

    /**
     * The event loops' allocation counter grows with the requests served (a simulated chat answer allocates a few
     * KB at least: its body alone), so the bench can divide its increase over a fixed load by the requests.
     */
    @Test
    void eventLoopAllocatedBytes_growsWithTheRequestsServed() throws Exception {
        try (TestGateway gw = TestGateway.start(TestGateway.simulatorConfig())) {
            double before = io.modelgateway.core.testing.MetricsText.parse(gw.get("/metrics").body())
                    .sum("gateway_event_loop_allocated_bytes_total");
            for (int i = 0; i < 20; i++) {
                expect(gw.call("/api/v1/chat/completions", CHAT.formatted("sim-chat")), 200);
            }
            double after = io.modelgateway.core.testing.MetricsText.parse(gw.get("/metrics").body())
                    .sum("gateway_event_loop_allocated_bytes_total");
            assertThat(before).isPositive();
            assertThat(after - before).as("bytes allocated by the loops for 20 requests").isGreaterThan(20 * 1024.0);
        }
    }

    @Test
    void adminListener_servesMetricsHealthReady_andTheApiListenerNoLongerServesMetrics() throws Exception {
        try (TestGateway gw = TestGateway.start("admin:\n  listen: 127.0.0.1:0\n" + TestGateway.simulatorConfig())) {
            expect(gw.call("/api/v1/chat/completions", CHAT.formatted("sim-chat")), 200);
            int admin = gw.server().adminPort();
            assertThat(admin).isPositive();
            HttpResponse<String> m = gw.get("/metrics");
            assertThat(m.statusCode()).isEqualTo(404);
            String base = "http://127.0.0.1:" + admin;
            HttpResponse<String> metrics = gw.http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(base + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("model=\"sim-chat\"");
            HttpResponse<String> ready = gw.http.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(base + "/ready")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(200);
        }
    }

    private static String expect(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        return r.body();
    }
}
