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
 * Either style on a provider of the other style, over real sockets to the standalone simulator: a chat caller
 * on an {@code anthropic} provider and a messages caller on an {@code openai} provider.
 */
class CrossStyleEndToEndTest {
    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final List<Map<String, String>> seen = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> {
            seen.add(Map.of(":path", req.uri(), ":body", req.content().toString(java.nio.charset.StandardCharsets.UTF_8)));
        });
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  up-openai: {type: openai, base_url: "%s/v1", api_key: k, forward_headers: ["x-sim-*"]}
                  up-anthropic: {type: anthropic, base_url: "%s", api_key: k, forward_headers: ["x-sim-*"]}
                  up-openai-plain: {type: openai, base_url: "%s/v1", api_key: k}
                models:
                  claude-via-chat: {deployments: [{provider: up-anthropic, model: sim-claude-1}]}
                  gpt-via-messages: {deployments: [{provider: up-openai, model: sim-gpt-1}]}
                  embed-floats-only:
                    type: embedding
                    encode_base64: true
                    deployments: [{provider: up-openai-plain, model: sim-embed-1}]
                """.formatted(base, base, base));
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    private static JsonNode json(String s) throws Exception {
        return SimulatorEndToEndTest.JSON.readTree(s);
    }

    @Test
    void chatCaller_anthropicProvider_nonStream() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"claude-via-chat\",\"max_tokens\":7,"
                + "\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode b = json(r.body());
        assertThat(b.path("object").asText()).isEqualTo("chat.completion");
        assertThat(b.path("id").asText()).startsWith("chatcmpl-");
        assertThat(b.path("model").asText()).isEqualTo("sim-claude-1");
        assertThat(b.at("/choices/0/finish_reason").asText()).isEqualTo("length");
        assertThat(b.at("/usage/completion_tokens").asInt()).isEqualTo(7);
        JsonNode up = json(lastBody("/v1/messages"));
        assertThat(up.at("/system/0/text").asText()).isEqualTo("Be brief.");
        assertThat(up.path("max_tokens").asInt()).isEqualTo(7);
        assertThat(up.path("model").asText()).isEqualTo("sim-claude-1");
    }

    @Test
    void chatCaller_anthropicProvider_streamWithToolsAndUsage() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"claude-via-chat\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<JsonNode> chunks = SimulatorEndToEndTest.chatChunks(r.body());
        assertThat(chunks.get(0).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        StringBuilder args = new StringBuilder();
        String finish = null;
        for (JsonNode c : chunks) {
            JsonNode tc = c.at("/choices/0/delta/tool_calls/0");
            if (!tc.isMissingNode()) {
                if (tc.has("id")) {
                    assertThat(tc.at("/function/name").asText()).isEqualTo("get_weather");
                    assertThat(tc.path("type").asText()).isEqualTo("function");
                }
                args.append(tc.at("/function/arguments").asText());
            }
            if (c.at("/choices/0/finish_reason").isTextual()) {
                finish = c.at("/choices/0/finish_reason").asText();
            }
        }
        assertThat(finish).isEqualTo("tool_calls");
        assertThat(json(args.toString()).isObject()).isTrue();
        JsonNode usage = chunks.get(chunks.size() - 1);
        assertThat(usage.path("choices")).isEmpty();
        assertThat(usage.at("/usage/prompt_tokens").asInt()).isPositive();
    }

    @Test
    void messagesCaller_openAiProvider_nonStream() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"gpt-via-messages\",\"max_tokens\":6,"
                + "\"system\":\"Be brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode b = json(r.body());
        assertThat(b.path("type").asText()).isEqualTo("message");
        assertThat(b.path("id").asText()).startsWith("msg_");
        assertThat(b.at("/content/0/type").asText()).isEqualTo("text");
        assertThat(b.path("stop_reason").asText()).isEqualTo("max_tokens");
        assertThat(b.at("/usage/output_tokens").asInt()).isEqualTo(6);
        JsonNode up = json(lastBody("/v1/chat/completions"));
        assertThat(up.at("/messages/0/role").asText()).isEqualTo("system");
        assertThat(up.path("max_completion_tokens").asInt()).isEqualTo(6);
    }

    @Test
    void messagesCaller_openAiProvider_streamFollowsTheEventGrammar() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"gpt-via-messages\",\"max_tokens\":64,\"stream\":true,"
                + "\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}]}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String[] events = r.body().split("\n\n");
        assertThat(events[0]).startsWith("event: message_start\n");
        assertThat(events[events.length - 1]).startsWith("event: message_stop\n");
        for (String e : events) {
            String name = e.substring("event: ".length(), e.indexOf('\n'));
            assertThat(json(e.substring(e.indexOf("data: ") + 6)).path("type").asText()).isEqualTo(name);
        }
        assertThat(r.body()).contains("\"type\":\"input_json_delta\"").contains("\"stop_reason\":\"tool_use\"");
        JsonNode up = json(lastBody("/v1/chat/completions"));
        assertThat(up.at("/stream_options/include_usage").asBoolean()).isTrue();
    }

    @Test
    void chatCaller_anthropicProvider_thinkingParallelToolsAndStop() throws Exception {
        String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\","
                + "\"properties\":{\"city\":{\"type\":\"string\"}}}}},{\"type\":\"function\",\"function\":{\"name\":\"get_time\","
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"zone\":{\"type\":\"string\"}}}}}]";
        JsonNode b = json(gw.call("/api/v1/chat/completions", "{\"model\":\"claude-via-chat\",\"reasoning_effort\":\"low\",\"max_tokens\":4000,"
                + tools + ",\"messages\":[{\"role\":\"user\",\"content\":\"weather and time?\"}]}").body());
        assertThat(b.at("/choices/0/message/reasoning").asText()).isNotEmpty();
        assertThat(b.at("/choices/0/message/reasoning_details/0/signature").asText()).isNotEmpty();
        assertThat(b.at("/choices/0/message/tool_calls")).hasSize(2);
        assertThat(b.at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
        JsonNode up = json(lastBody("/v1/messages"));
        assertThat(up.at("/thinking/type").asText()).isEqualTo("enabled");
        assertThat(up.at("/thinking/budget_tokens").asInt()).isEqualTo(1024);

        // Stop sequences: take a word from a plain answer and ask to stop at it.
        String ask = "{\"model\":\"claude-via-chat\",\"max_tokens\":30,\"messages\":[{\"role\":\"user\",\"content\":\"tell me\"}]%s}";
        String text = json(gw.call("/api/v1/chat/completions", ask.formatted("")).body()).at("/choices/0/message/content").asText();
        String stop = text.split(" ")[3];
        JsonNode stopped = json(gw.call("/api/v1/chat/completions", ask.formatted(",\"stop\":[\"" + stop + "\"]")).body());
        assertThat(stopped.at("/choices/0/finish_reason").asText()).isEqualTo("stop");
        assertThat(stopped.at("/choices/0/message/content").asText()).doesNotContain(stop).isEqualTo(text.substring(0, text.indexOf(stop)));
        assertThat(json(lastBody("/v1/messages")).at("/stop_sequences/0").asText()).isEqualTo(stop);
    }

    @Test
    void messagesCaller_openAiProvider_parallelToolsAndStopSequences() throws Exception {
        String tools = "\"tools\":[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}},"
                + "{\"name\":\"get_time\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"zone\":{\"type\":\"string\"}}}}]";
        JsonNode b = json(gw.call("/api/v1/messages", "{\"model\":\"gpt-via-messages\",\"max_tokens\":200," + tools
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"weather and time?\"}]}").body());
        assertThat(b.path("content")).filteredOn(n -> n.path("type").asText().equals("tool_use")).hasSize(2);
        assertThat(b.path("stop_reason").asText()).isEqualTo("tool_use");
        String ask = "{\"model\":\"gpt-via-messages\",\"max_tokens\":30,\"messages\":[{\"role\":\"user\",\"content\":\"tell me\"}]%s}";
        String text = json(gw.call("/api/v1/messages", ask.formatted("")).body()).at("/content/0/text").asText();
        String stop = text.split(" ")[3];
        JsonNode stopped = json(gw.call("/api/v1/messages", ask.formatted(",\"stop_sequences\":[\"" + stop + "\"]")).body());
        assertThat(stopped.at("/content/0/text").asText()).isEqualTo(text.substring(0, text.indexOf(stop)));
        assertThat(stopped.path("stop_reason").asText()).isEqualTo("end_turn"); // 8.7: stop_sequence is not knowable from OpenAI
        assertThat(json(lastBody("/v1/chat/completions")).at("/stop/0").asText()).isEqualTo(stop);
    }

    @Test
    void upstreamOverloaded_isReexpressedInTheCallersStyle() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"claude-via-chat\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "status=529,retry_after=4");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(json(r.body()).at("/error/type").asText()).isEqualTo("server_error");
        assertThat(r.headers().firstValue("retry-after")).hasValue("4");
        r = gw.call("/api/v1/messages", "{\"model\":\"gpt-via-messages\",\"max_tokens\":5,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "status=503");
        assertThat(r.statusCode()).isEqualTo(529);
        assertThat(json(r.body()).at("/error/type").asText()).isEqualTo("overloaded_error");
    }

    @Test
    void midStreamUpstreamError_isTheCallersErrorEvent() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"claude-via-chat\",\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "error_after=3");
        assertThat(r.body()).contains("data: {\"error\":").doesNotContain("[DONE]");
        r = gw.call("/api/v1/messages", "{\"model\":\"gpt-via-messages\",\"max_tokens\":50,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "x-sim-fault", "cut_after=3");
        assertThat(r.body()).contains("event: error\n").doesNotContain("message_stop");
    }

    @Test
    void embeddings_base64ForAFloatsOnlyProvider_isEncodedByTheGateway() throws Exception {
        String req = "{\"model\":\"embed-floats-only\",\"input\":[\"alpha\",\"beta\"],\"encoding_format\":\"base64\"}";
        HttpResponse<String> r = gw.call("/api/v1/embeddings", req);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode b = json(r.body());
        assertThat(b.at("/data/1/index").asInt()).isEqualTo(1);
        assertThat(b.at("/data/0/embedding").isTextual()).isTrue();
        assertThat(json(lastBody("/v1/embeddings")).path("encoding_format").asText()).isEqualTo("float");
        JsonNode floats = json(gw.call("/api/v1/embeddings", req.replace("base64", "float")).body());
        java.nio.ByteBuffer bytes = java.nio.ByteBuffer.wrap(java.util.Base64.getDecoder()
                .decode(b.at("/data/0/embedding").asText())).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        JsonNode vec = floats.at("/data/0/embedding");
        assertThat(bytes.remaining()).isEqualTo(vec.size() * 4);
        for (int i = 0; i < vec.size(); i++) {
            assertThat(bytes.getFloat()).isEqualTo((float) vec.get(i).asDouble());
        }
    }

    private static String lastBody(String path) {
        for (int i = seen.size() - 1; i >= 0; i--) {
            if (seen.get(i).get(":path").startsWith(path)) {
                return seen.get(i).get(":body");
            }
        }
        throw new AssertionError("upstream saw no request to " + path);
    }
}
