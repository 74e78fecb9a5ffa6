package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.TIME_TOOL_MESSAGES;
import static io.modelgateway.core.simulator.SimTestSupport.WEATHER_TOOL_MESSAGES;
import static io.modelgateway.core.simulator.SimTestSupport.answer;
import static io.modelgateway.core.simulator.SimTestSupport.body;
import static io.modelgateway.core.simulator.SimTestSupport.events;
import static io.modelgateway.core.simulator.SimTestSupport.json;
import static io.modelgateway.core.simulator.SimTestSupport.messagesRequest;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.simulator.SimTestSupport.Sse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimulatorEngineMessagesTest {

    private static final Endpoint MESSAGES = Endpoint.MESSAGES;

    private static JsonNode message(String extra, String... headers) {
        SimulatedResponse r = answer(MESSAGES, messagesRequest(extra), headers);
        assertThat(r.status()).as(r.body() == null ? "" : new String(r.body())).isEqualTo(200);
        return body(r);
    }

    private static List<Sse> stream(String extra, String... headers) {
        SimulatedResponse r = answer(MESSAGES, messagesRequest(",\"stream\":true" + extra), headers);
        assertThat(r.status()).isEqualTo(200);
        return events(r);
    }

    /**
     * Replays a stream the way the SDK accumulators do, checking the grammar of contract 5.10
     * on the way, and returns the final message.
     */
    private static JsonNode accumulate(List<Sse> events) {
        assertThat(events.get(0).event()).isEqualTo("message_start");
        assertThat(events.get(1).event()).isEqualTo("ping");
        assertThat(events.get(events.size() - 1).event()).isEqualTo("message_stop");
        assertThat(events.get(events.size() - 2).event()).isEqualTo("message_delta");
        JsonNode message = events.get(0).json().path("message").deepCopy();
        assertThat(message.path("content")).isEmpty();
        assertThat(message.path("stop_reason").isNull()).isTrue();
        assertThat(message.path("usage").isObject()).isTrue();
        var content = (com.fasterxml.jackson.databind.node.ArrayNode) message.get("content");
        int open = -1;
        StringBuilder text = new StringBuilder();
        StringBuilder partialJson = new StringBuilder();
        int signatures = 0;
        for (Sse e : events) {
            JsonNode data = e.json();
            assertThat(data.path("type").asText()).as("event line equals type").isEqualTo(e.event());
            switch (e.event()) {
                case "content_block_start" -> {
                    assertThat(open).as("blocks never interleave").isEqualTo(-1);
                    assertThat(data.path("index").asInt()).as("indexes in order").isEqualTo(content.size());
                    open = data.path("index").asInt();
                    content.add(data.path("content_block").deepCopy());
                    text.setLength(0);
                    partialJson.setLength(0);
                    signatures = 0;
                }
                case "content_block_delta" -> {
                    assertThat(data.path("index").asInt()).isEqualTo(open);
                    JsonNode d = data.path("delta");
                    var block = (com.fasterxml.jackson.databind.node.ObjectNode) content.get(open);
                    switch (d.path("type").asText()) {
                        case "text_delta" -> block.put("text", block.path("text").asText() + d.path("text").asText());
                        case "thinking_delta" -> {
                            assertThat(signatures).as("signature comes last").isZero();
                            block.put("thinking", block.path("thinking").asText() + d.path("thinking").asText());
                        }
                        case "signature_delta" -> {
                            signatures++;
                            block.put("signature", d.path("signature").asText());
                        }
                        case "input_json_delta" -> partialJson.append(d.path("partial_json").asText());
                        default -> throw new AssertionError("unexpected delta " + d);
                    }
                }
                case "content_block_stop" -> {
                    assertThat(data.path("index").asInt()).isEqualTo(open);
                    var block = (com.fasterxml.jackson.databind.node.ObjectNode) content.get(open);
                    if ("tool_use".equals(block.path("type").asText())) {
                        assertThat(block.path("input")).isEqualTo(json("{}"));
                        block.set("input", json(partialJson.toString()));
                    }
                    if ("thinking".equals(block.path("type").asText())) {
                        assertThat(signatures).as("exactly one signature_delta").isEqualTo(1);
                    }
                    open = -1;
                }
                case "message_delta" -> {
                    assertThat(open).isEqualTo(-1);
                    var m = (com.fasterxml.jackson.databind.node.ObjectNode) message;
                    m.set("stop_reason", data.path("delta").path("stop_reason"));
                    m.set("stop_sequence", data.path("delta").path("stop_sequence"));
                    assertThat(data.path("usage").path("output_tokens").isIntegralNumber()).isTrue();
                    ((com.fasterxml.jackson.databind.node.ObjectNode) m.get("usage"))
                            .set("output_tokens", data.path("usage").path("output_tokens"));
                }
                case "message_start", "ping", "message_stop" -> { }
                default -> throw new AssertionError("unexpected event " + e.event());
            }
        }
        return message;
    }

    @Test
    void answer_nonStream_hasContractShape() {
        JsonNode m = message("");

        assertThat(m.path("id").asText()).matches("msg_[A-Za-z0-9]{24}");
        assertThat(m.path("type").asText()).isEqualTo("message");
        assertThat(m.path("role").asText()).isEqualTo("assistant");
        assertThat(m.path("model").asText()).isEqualTo("sim-claude");
        assertThat(m.path("content")).hasSize(1);
        assertThat(m.path("content").get(0).path("type").asText()).isEqualTo("text");
        String text = m.path("content").get(0).path("text").asText();
        assertThat(m.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(m.path("stop_sequence").isNull()).isTrue();
        assertThat(m.path("usage").path("output_tokens").asInt()).isEqualTo(text.split(" ").length);
        assertThat(m.path("usage").path("input_tokens").asInt()).isEqualTo(8);
        assertThat(m.path("usage").path("cache_creation_input_tokens").asInt()).isZero();
        assertThat(m.path("usage").path("cache_read_input_tokens").asInt()).isZero();
    }

    @Test
    void answer_stream_accumulatesToTheNonStreamMessage() {
        for (String extra : List.of("", ",\"tools\":[" + WEATHER_TOOL_MESSAGES + "," + TIME_TOOL_MESSAGES + "]",
                ",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}",
                ",\"thinking\":{\"type\":\"adaptive\"},\"tools\":[" + WEATHER_TOOL_MESSAGES + "]")) {
            JsonNode whole = message(extra);
            JsonNode streamed = accumulate(stream(extra));

            assertThat(streamed.path("content")).as(extra).isEqualTo(whole.path("content"));
            assertThat(streamed.path("stop_reason")).isEqualTo(whole.path("stop_reason"));
            assertThat(streamed.path("stop_sequence")).isEqualTo(whole.path("stop_sequence"));
            assertThat(streamed.path("usage")).isEqualTo(whole.path("usage"));
            assertThat(streamed.path("model")).isEqualTo(whole.path("model"));
        }
    }

    @Test
    void answer_sameBody_sameAnswer() {
        assertThat(message("").path("content")).isEqualTo(message("").path("content"));
    }

    @Test
    void answer_maxTokensBelowLength_stopReasonMaxTokens() {
        SimulatedResponse r = answer(MESSAGES, "{\"model\":\"c\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

        JsonNode m = body(r);
        assertThat(m.path("stop_reason").asText()).isEqualTo("max_tokens");
        assertThat(m.path("usage").path("output_tokens").asInt()).isEqualTo(4);
        assertThat(m.path("content").get(0).path("text").asText().split(" ")).hasSize(4);
    }

    @Test
    void answer_stopSequenceInText_stopReasonAndMatchedSequence() {
        String text = message("").path("content").get(0).path("text").asText();
        String stop = " " + text.split(" ")[4];

        JsonNode m = message(",\"stop_sequences\":[\"never-there\",\"" + stop + "\"]");
        JsonNode streamed = accumulate(stream(",\"stop_sequences\":[\"" + stop + "\"]"));

        assertThat(m.path("stop_reason").asText()).isEqualTo("stop_sequence");
        assertThat(m.path("stop_sequence").asText()).isEqualTo(stop);
        assertThat(m.path("content").get(0).path("text").asText()).isEqualTo(text.substring(0, text.indexOf(stop)));
        assertThat(streamed.path("stop_reason").asText()).isEqualTo("stop_sequence");
        assertThat(streamed.path("stop_sequence").asText()).isEqualTo(stop);
        assertThat(streamed.path("content")).isEqualTo(m.path("content"));
    }

    @Test
    void answer_toolsAuto_twoToolUseBlocks() {
        JsonNode m = message(",\"tools\":[" + WEATHER_TOOL_MESSAGES + "," + TIME_TOOL_MESSAGES + "]");

        assertThat(m.path("stop_reason").asText()).isEqualTo("tool_use");
        JsonNode content = m.path("content");
        assertThat(content).hasSize(2);
        assertThat(content.get(0).path("type").asText()).isEqualTo("tool_use");
        assertThat(content.get(0).path("name").asText()).isEqualTo("get_weather");
        assertThat(content.get(0).path("input").path("city").isTextual()).isTrue();
        assertThat(content.get(0).path("input").path("days").isIntegralNumber()).isTrue();
        assertThat(content.get(1).path("name").asText()).isEqualTo("get_time");
        assertThat(content.get(0).path("id").asText()).matches("toolu_[A-Za-z0-9]{24}");
        assertThat(content.get(1).path("id").asText()).matches("toolu_[A-Za-z0-9]{24}")
                .isNotEqualTo(content.get(0).path("id").asText());
    }

    @Test
    void answer_toolChoiceVariants_callAsAsked() {
        String tools = ",\"tools\":[" + WEATHER_TOOL_MESSAGES + "," + TIME_TOOL_MESSAGES + "]";
        Map<String, List<String>> cases = Map.of(
                "{\"type\":\"auto\",\"disable_parallel_tool_use\":true}", List.of("get_weather"),
                "{\"type\":\"any\"}", List.of("get_weather", "get_time"),
                "{\"type\":\"tool\",\"name\":\"get_time\"}", List.of("get_time"),
                "{\"type\":\"none\"}", List.of());
        cases.forEach((choice, expected) -> {
            JsonNode m = message(tools + ",\"tool_choice\":" + choice);
            List<String> called = new ArrayList<>();
            m.path("content").forEach(b -> {
                if ("tool_use".equals(b.path("type").asText())) {
                    called.add(b.path("name").asText());
                }
            });
            assertThat(called).as(choice).isEqualTo(expected);
            assertThat(m.path("stop_reason").asText()).isEqualTo(expected.isEmpty() ? "end_turn" : "tool_use");
        });
    }

    @Test
    void answer_toolRoundTrip_textAfterToolResult() {
        JsonNode first = message(",\"tools\":[" + WEATHER_TOOL_MESSAGES + "]");
        JsonNode call = first.path("content").get(0);
        String second = "{\"model\":\"c\",\"max_tokens\":1024,\"tools\":[" + WEATHER_TOOL_MESSAGES + "],\"messages\":["
                + "{\"role\":\"user\",\"content\":\"Tell me about rivers.\"},"
                + "{\"role\":\"assistant\",\"content\":[" + call + "]},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"" + call.path("id").asText()
                + "\",\"content\":\"12 C\"}]}]}";

        JsonNode m = body(answer(MESSAGES, second));

        assertThat(m.path("stop_reason").asText()).isEqualTo("end_turn");
        assertThat(m.path("content").get(0).path("type").asText()).isEqualTo("text");
    }

    @Test
    void answer_thinkingEnabled_leadingThinkingBlockWithSignatureCountedInUsage() {
        JsonNode m = message(",\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024}");

        JsonNode thinking = m.path("content").get(0);
        assertThat(thinking.path("type").asText()).isEqualTo("thinking");
        assertThat(thinking.path("thinking").asText()).isNotEmpty();
        assertThat(thinking.path("signature").asText()).isNotEmpty();
        JsonNode text = m.path("content").get(1);
        assertThat(text.path("type").asText()).isEqualTo("text");
        assertThat(m.path("usage").path("output_tokens").asInt()).isEqualTo(
                thinking.path("thinking").asText().split(" ").length + text.path("text").asText().split(" ").length);
    }

    @Test
    void answer_thinkingBudgetNotBelowMaxTokens_400() {
        SimulatedResponse r = answer(MESSAGES, "{\"model\":\"c\",\"max_tokens\":1024,\"thinking\":{\"type\":\"enabled\","
                + "\"budget_tokens\":1024},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

        assertThat(r.status()).isEqualTo(400);
        assertThat(body(r).path("error").path("type").asText()).isEqualTo("invalid_request_error");
    }

    @Test
    void answer_systemRoleInMessages_needsVersion20261021() {
        String request = "{\"model\":\"c\",\"max_tokens\":100,\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"}]}";

        SimulatedResponse noHeader = answer(MESSAGES, request);
        SimulatedResponse old = answer(MESSAGES, request, "anthropic-version", "2023-06-01");
        SimulatedResponse newer = answer(MESSAGES, request, "anthropic-version", "2026-10-21");

        assertThat(noHeader.status()).isEqualTo(400);
        assertThat(old.status()).isEqualTo(400);
        assertThat(body(old).path("error").path("message").asText()).contains("messages.0.role");
        assertThat(newer.status()).isEqualTo(200);
        assertThat(body(newer).path("usage").path("input_tokens").asInt()).isEqualTo(3); // "Be brief." + "hi"
    }

    @Test
    void answer_invalidRequests_400AnthropicBody() {
        Map<String, String> cases = Map.of(
                "{\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "model: Field required",
                "{\"model\":\"c\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "max_tokens: Field required",
                "{\"model\":\"c\",\"max_tokens\":10}", "messages: Field required",
                "{\"model\":\"c\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\"}]}", "messages.0.content: Field required",
                messagesRequest(",\"stop_sequences\":[\"  \"]"), "stop_sequences.0",
                "not json", "not valid JSON");
        cases.forEach((request, message) -> {
            SimulatedResponse r = answer(MESSAGES, request);
            assertThat(r.status()).as(request).isEqualTo(400);
            JsonNode b = body(r);
            assertThat(b.path("type").asText()).isEqualTo("error");
            assertThat(b.path("error").path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(b.path("error").path("message").asText()).as(request).contains(message);
            assertThat(b.path("request_id").asText()).startsWith("req_");
            assertThat(r.headers()).containsKey("request-id");
        });
    }

    @Test
    void answer_malformedVersion_400() {
        SimulatedResponse r = answer(MESSAGES, messagesRequest(""), "anthropic-version", "yesterday");

        assertThat(r.status()).isEqualTo(400);
    }
}
