package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Gateway → standalone simulator over real loopback sockets, through provider types {@code openai} and
 * {@code anthropic}: all three endpoints, stream and non-stream, and what actually went over the wire.
 */
class StandaloneSimulatorEndToEndTest {
    private static final String UPSTREAM_KEY = "sk-upstream-provider-key";
    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final List<Map<String, String>> seen = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY, req -> {
            Map<String, String> h = new java.util.TreeMap<>();
            req.headers().forEach(e -> h.put(e.getKey().toLowerCase(), e.getValue()));
            h.put(":path", req.uri());
            h.put(":body", req.content().toString(java.nio.charset.StandardCharsets.UTF_8));
            seen.add(h);
        });
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  sim-openai: {type: openai, base_url: "%s/v1", api_key: %s}
                  sim-anthropic: {type: anthropic, base_url: "%s", api_key: %s}
                  sim-anthropic-faults: {type: anthropic, base_url: "%s", api_key: %s, forward_headers: ["x-sim-*"]}
                models:
                  oa-chat: {deployments: [{provider: sim-openai, model: sim-chat-1}]}
                  oa-embed: {type: embedding, deployments: [{provider: sim-openai, model: sim-embed-1}]}
                  an-chat: {deployments: [{provider: sim-anthropic, model: sim-claude-1}]}
                  an-faults: {deployments: [{provider: sim-anthropic-faults, model: sim-claude-1}]}
                """.formatted(base, UPSTREAM_KEY, base, UPSTREAM_KEY, base, UPSTREAM_KEY));
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    @Test
    void chat_nonStream_throughOpenAiProvider() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"oa-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode b = SimulatorEndToEndTest.JSON.readTree(r.body());
        assertThat(b.path("object").asText()).isEqualTo("chat.completion");
        assertThat(b.path("model").asText()).isEqualTo("sim-chat-1");
        Map<String, String> up = last("/v1/chat/completions");
        assertThat(up.get("authorization")).isEqualTo("Bearer " + UPSTREAM_KEY);
        assertThat(up.get(":body")).contains("\"model\":\"sim-chat-1\"");
        assertThat(up.toString()).doesNotContain(TestGateway.KEY);
    }

    @Test
    void chat_stream_throughOpenAiProvider() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"oa-chat\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        List<JsonNode> chunks = SimulatorEndToEndTest.chatChunks(r.body());
        assertThat(chunks.get(0).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        assertThat(chunks.get(chunks.size() - 1).path("choices")).isEmpty();
    }

    @Test
    void embeddings_floatAndBase64_throughOpenAiProvider() throws Exception {
        for (String format : new String[] {"float", "base64"}) {
            HttpResponse<String> r = gw.call("/api/v1/embeddings",
                    "{\"model\":\"oa-embed\",\"input\":[\"a\",\"b\",\"c\"],\"encoding_format\":\"" + format + "\"}");
            assertThat(r.statusCode()).isEqualTo(200);
            JsonNode b = SimulatorEndToEndTest.JSON.readTree(r.body());
            assertThat(b.path("data")).hasSize(3);
            assertThat(b.at("/data/2/index").asInt()).isEqualTo(2);
            assertThat(b.at("/data/0/embedding").isTextual()).isEqualTo(format.equals("base64"));
        }
        assertThat(last("/v1/embeddings").get(":body")).contains("\"model\":\"sim-embed-1\"");
    }

    @Test
    void messages_nonStream_throughAnthropicProvider() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"an-chat\",\"max_tokens\":20,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode b = SimulatorEndToEndTest.JSON.readTree(r.body());
        assertThat(b.path("type").asText()).isEqualTo("message");
        assertThat(b.path("model").asText()).isEqualTo("sim-claude-1");
        Map<String, String> up = last("/v1/messages");
        assertThat(up.get("x-api-key")).isEqualTo(UPSTREAM_KEY);
        assertThat(up.get("anthropic-version")).isEqualTo("2023-06-01");
        assertThat(up).doesNotContainKey("authorization");
    }

    @Test
    void messages_stream_withThinkingAndTools_throughAnthropicProvider() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"an-chat\",\"max_tokens\":4096,\"stream\":true,"
                + "\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024},"
                + "\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("event: message_start\n").contains("\"type\":\"thinking_delta\"")
                .contains("\"type\":\"signature_delta\"").contains("\"type\":\"input_json_delta\"")
                .contains("\"stop_reason\":\"tool_use\"").endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    }

    @Test
    void clientHeaders_notInForwardHeaders_neverReachTheUpstream() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"an-chat\",\"max_tokens\":20,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "status=529");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(last("/v1/messages")).doesNotContainKey("x-sim-fault");
    }

    @Test
    void upstreamError_sameStyle_isRelayedWithRetryHeaders() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"an-faults\",\"max_tokens\":20,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "status=529,retry_after=3");
        assertThat(r.statusCode()).isEqualTo(529);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).at("/error/type").asText()).isEqualTo("overloaded_error");
        assertThat(r.headers().firstValue("retry-after")).hasValue("3");
        assertThat(r.headers().firstValue("retry-after-ms")).hasValue("3000");
        assertThat(r.headers().firstValue("request-id")).hasValueSatisfying(id -> assertThat(id).startsWith("req_"));
    }

    @Test
    void upstreamStreamError_midStream_isRelayedAsTheStylesErrorEvent() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"an-faults\",\"max_tokens\":50,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "error_after=3");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("event: error\n").doesNotContain("message_stop");
    }

    private static Map<String, String> last(String path) {
        for (int i = seen.size() - 1; i >= 0; i--) {
            if (seen.get(i).get(":path").startsWith(path)) {
                return seen.get(i);
            }
        }
        throw new AssertionError("upstream saw no request to " + path);
    }
}
