package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.TIME_TOOL_CHAT;
import static io.modelgateway.core.simulator.SimTestSupport.WEATHER_TOOL_CHAT;
import static io.modelgateway.core.simulator.SimTestSupport.answer;
import static io.modelgateway.core.simulator.SimTestSupport.body;
import static io.modelgateway.core.simulator.SimTestSupport.chatChunks;
import static io.modelgateway.core.simulator.SimTestSupport.chatRequest;
import static io.modelgateway.core.simulator.SimTestSupport.chatText;
import static io.modelgateway.core.simulator.SimTestSupport.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Endpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimulatorEngineChatTest {

    private static final Endpoint CHAT = Endpoint.CHAT_COMPLETIONS;

    private static JsonNode chat(String extra, String... headers) {
        SimulatedResponse r = answer(CHAT, chatRequest(extra), headers);
        assertThat(r.status()).as(r.body() == null ? "" : new String(r.body())).isEqualTo(200);
        return body(r);
    }

    private static List<JsonNode> chatStream(String extra, String... headers) {
        SimulatedResponse r = answer(CHAT, chatRequest(",\"stream\":true" + extra), headers);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.cutAtEnd()).isFalse();
        return chatChunks(r);
    }

    @Test
    void answer_nonStream_hasContractShape() {
        JsonNode b = chat("");

        assertThat(b.path("id").asText()).matches("chatcmpl-[A-Za-z0-9]{24}");
        assertThat(b.path("object").asText()).isEqualTo("chat.completion");
        assertThat(b.path("created").asLong()).isGreaterThan(1_700_000_000L);
        assertThat(b.path("model").asText()).isEqualTo("sim-gpt");
        assertThat(b.path("choices")).hasSize(1);
        JsonNode choice = b.path("choices").get(0);
        assertThat(choice.path("index").asInt()).isZero();
        assertThat(choice.path("message").path("role").asText()).isEqualTo("assistant");
        assertThat(choice.path("message").path("content").isTextual()).isTrue();
        assertThat(choice.path("message").has("tool_calls")).isFalse();
        assertThat(choice.path("finish_reason").asText()).isEqualTo("stop");
        JsonNode usage = b.path("usage");
        int words = choice.path("message").path("content").asText().split(" ").length;
        assertThat(usage.path("completion_tokens").asInt()).isEqualTo(words).isBetween(12, 48);
        // "Be brief." + "Tell me about rivers." = 30 bytes -> 8 tokens
        assertThat(usage.path("prompt_tokens").asInt()).isEqualTo(8);
        assertThat(usage.path("total_tokens").asInt()).isEqualTo(words + 8);
    }

    @Test
    void answer_sameBodyStreamOrNot_sameTextAndUsage() {
        JsonNode first = chat("");
        JsonNode second = chat("");
        List<JsonNode> chunks = chatStream(",\"stream_options\":{\"include_usage\":true}");

        String text = first.path("choices").get(0).path("message").path("content").asText();
        assertThat(second.path("choices").get(0).path("message").path("content").asText()).isEqualTo(text);
        assertThat(second.path("usage")).isEqualTo(first.path("usage"));
        assertThat(chatText(chunks, 0)).isEqualTo(text);
        JsonNode streamUsage = chunks.get(chunks.size() - 1).path("usage");
        assertThat(streamUsage.path("completion_tokens")).isEqualTo(first.path("usage").path("completion_tokens"));
        assertThat(streamUsage.path("prompt_tokens")).isEqualTo(first.path("usage").path("prompt_tokens"));
    }

    @Test
    void answer_differentConversation_differentText() {
        String a = body(answer(CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"one\"}]}"))
                .path("choices").get(0).path("message").path("content").asText();
        String b = body(answer(CHAT, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"two\"}]}"))
                .path("choices").get(0).path("message").path("content").asText();

        assertThat(a).isNotEqualTo(b);
    }

    @Test
    void answer_longAnswers_includeMultiByteWords() {
        String text = chat("", "x-sim-output-tokens", "300").path("choices").get(0).path("message").path("content").asText();

        assertThat(text.split(" ")).hasSize(300);
        assertThat(text.chars().anyMatch(c -> c > 0x7f)).isTrue();
    }

    @Test
    void answer_stream_oneWordPerContentChunk() {
        List<JsonNode> chunks = chatStream("", "x-sim-output-tokens", "20");

        List<String> contents = new ArrayList<>();
        for (JsonNode c : chunks.subList(1, chunks.size() - 1)) {
            contents.add(c.path("choices").get(0).path("delta").path("content").asText());
        }
        assertThat(contents).hasSize(20);
        assertThat(contents.get(0)).doesNotStartWith(" ").isNotEmpty();
        assertThat(contents.subList(1, 20)).allSatisfy(w -> assertThat(w).matches(" \\S+"));
    }

    @Test
    void answer_maxTokensBelowLength_finishLength() {
        JsonNode b = chat(",\"max_tokens\":3");

        assertThat(b.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
        assertThat(b.path("choices").get(0).path("message").path("content").asText().split(" ")).hasSize(3);
        assertThat(b.path("usage").path("completion_tokens").asInt()).isEqualTo(3);
    }

    @Test
    void answer_maxCompletionTokens_winsOverMaxTokens() {
        JsonNode b = chat(",\"max_tokens\":3,\"max_completion_tokens\":5");

        assertThat(b.path("usage").path("completion_tokens").asInt()).isEqualTo(5);
        assertThat(b.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
    }

    @Test
    void answer_stopStringInText_cutsBeforeItWithFinishStop() {
        String text = chat("").path("choices").get(0).path("message").path("content").asText();
        String[] words = text.split(" ");
        String stop = " " + words[3];
        String expected = text.substring(0, text.indexOf(stop));

        JsonNode viaString = chat(",\"stop\":\"" + stop + "\"");
        JsonNode viaArray = chat(",\"stop\":[\"zzz-never\",\"" + stop + "\"]");
        List<JsonNode> chunks = chatStream(",\"stop\":\"" + stop + "\"");

        for (JsonNode b : List.of(viaString, viaArray)) {
            assertThat(b.path("choices").get(0).path("message").path("content").asText()).isEqualTo(expected);
            assertThat(b.path("choices").get(0).path("finish_reason").asText()).isEqualTo("stop");
        }
        assertThat(chatText(chunks, 0)).isEqualTo(expected);
    }

    @Test
    void answer_stopInsideAWord_cutsThatWord() {
        String text = chat("").path("choices").get(0).path("message").path("content").asText();
        String word = text.split(" ")[2];
        String stop = word.substring(1); // starts inside the word
        String expected = text.substring(0, text.indexOf(stop));

        List<JsonNode> chunks = chatStream(",\"stop\":\"" + stop + "\"");

        assertThat(chatText(chunks, 0)).isEqualTo(expected);
        assertThat(chunks.get(chunks.size() - 1).path("choices").get(0).path("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void answer_n3_threeDifferentChoicesAndSummedUsage() {
        JsonNode b = chat(",\"n\":3");
        List<JsonNode> chunks = chatStream(",\"n\":3,\"stream_options\":{\"include_usage\":true}");

        JsonNode choices = b.path("choices");
        assertThat(choices).hasSize(3);
        int sum = 0;
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            assertThat(choices.get(i).path("index").asInt()).isEqualTo(i);
            String text = choices.get(i).path("message").path("content").asText();
            texts.add(text);
            sum += text.split(" ").length;
            assertThat(chatText(chunks, i)).isEqualTo(text);
        }
        assertThat(texts).doesNotHaveDuplicates();
        assertThat(b.path("usage").path("completion_tokens").asInt()).isEqualTo(sum);
        assertThat(chunks.get(chunks.size() - 1).path("usage").path("completion_tokens").asInt()).isEqualTo(sum);
        // every choice gets its role chunk first and its finishing chunk last
        Map<Integer, List<JsonNode>> byChoice = new HashMap<>();
        for (JsonNode c : chunks) {
            for (JsonNode choice : c.path("choices")) {
                byChoice.computeIfAbsent(choice.path("index").asInt(), k -> new ArrayList<>()).add(choice);
            }
        }
        assertThat(byChoice).hasSize(3);
        byChoice.values().forEach(list -> {
            assertThat(list.get(0).path("delta").path("role").asText()).isEqualTo("assistant");
            assertThat(list.get(list.size() - 1).path("finish_reason").asText()).isEqualTo("stop");
        });
    }

    @Test
    void answer_streamGrammar_roleFirstSameIdFinishLastThenDone() {
        List<JsonNode> chunks = chatStream("");

        JsonNode first = chunks.get(0);
        assertThat(first.path("choices").get(0).path("delta"))
                .isEqualTo(json("{\"role\":\"assistant\",\"content\":\"\"}"));
        for (JsonNode c : chunks) {
            assertThat(c.path("id")).isEqualTo(first.path("id"));
            assertThat(c.path("created")).isEqualTo(first.path("created"));
            assertThat(c.path("model").asText()).isEqualTo("sim-gpt");
            assertThat(c.path("object").asText()).isEqualTo("chat.completion.chunk");
            assertThat(c.has("usage")).as("usage omitted without include_usage").isFalse();
            assertThat(c.path("choices")).hasSize(1);
        }
        for (JsonNode c : chunks.subList(0, chunks.size() - 1)) {
            assertThat(c.path("choices").get(0).path("finish_reason").isNull()).isTrue();
        }
        JsonNode last = chunks.get(chunks.size() - 1).path("choices").get(0);
        assertThat(last.path("delta")).isEqualTo(json("{}"));
        assertThat(last.path("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void answer_includeUsage_usageChunkWithEmptyChoicesAndNullElsewhere() {
        List<JsonNode> chunks = chatStream(",\"stream_options\":{\"include_usage\":true}");

        JsonNode usageChunk = chunks.get(chunks.size() - 1);
        assertThat(usageChunk.path("choices").isArray()).isTrue();
        assertThat(usageChunk.path("choices")).isEmpty();
        assertThat(usageChunk.path("usage").path("total_tokens").asInt())
                .isEqualTo(usageChunk.path("usage").path("prompt_tokens").asInt()
                        + usageChunk.path("usage").path("completion_tokens").asInt());
        for (JsonNode c : chunks.subList(0, chunks.size() - 1)) {
            assertThat(c.has("usage")).isTrue();
            assertThat(c.get("usage").isNull()).isTrue();
            assertThat(c.path("choices")).hasSize(1);
        }
    }

    @Test
    void answer_includeUsageFalse_noUsageChunk() {
        List<JsonNode> chunks = chatStream(",\"stream_options\":{\"include_usage\":false}");

        assertThat(chunks).allSatisfy(c -> {
            assertThat(c.has("usage")).isFalse();
            assertThat(c.path("choices")).hasSize(1);
        });
    }

    @Test
    void answer_toolsAuto_callsFirstTwoInParallel() {
        JsonNode b = chat(",\"tools\":[" + WEATHER_TOOL_CHAT + "," + TIME_TOOL_CHAT + "]");

        JsonNode choice = b.path("choices").get(0);
        assertThat(choice.path("finish_reason").asText()).isEqualTo("tool_calls");
        assertThat(choice.path("message").path("content").isNull()).isTrue();
        JsonNode calls = choice.path("message").path("tool_calls");
        assertThat(calls).hasSize(2);
        assertThat(calls.get(0).path("function").path("name").asText()).isEqualTo("get_weather");
        assertThat(calls.get(1).path("function").path("name").asText()).isEqualTo("get_time");
        for (JsonNode call : calls) {
            assertThat(call.path("id").asText()).matches("call_[A-Za-z0-9]{24}");
            assertThat(call.path("type").asText()).isEqualTo("function");
            assertThat(json(call.path("function").path("arguments").asText()).isObject()).isTrue();
        }
        assertThat(calls.get(0).path("id").asText()).isNotEqualTo(calls.get(1).path("id").asText());
        assertThat(b.path("usage").path("completion_tokens").asInt()).isPositive();
    }

    @Test
    void answer_toolArguments_validAgainstSchema() {
        JsonNode b = chat(",\"tools\":[" + WEATHER_TOOL_CHAT + "]");

        JsonNode args = json(b.path("choices").get(0).path("message").path("tool_calls").get(0)
                .path("function").path("arguments").asText());
        assertThat(args.path("city").isTextual()).isTrue();
        assertThat(args.path("days").isIntegralNumber()).isTrue();
        assertThat(args.path("days").asInt()).isBetween(1, 7);
        assertThat(args.path("unit").asText()).isEqualTo("celsius");
        assertThat(args.path("hourly").asBoolean()).isTrue();
        assertThat(args.path("tags").isArray()).isTrue();
        assertThat(args.path("tags")).hasSize(1);
        assertThat(args.path("tags").get(0).isTextual()).isTrue();
        assertThat(args.path("where").path("lat").isNumber()).isTrue();
        assertThat(args.path("where").path("lon").isNumber()).isTrue();
    }

    @Test
    void answer_toolsSameRequest_sameCallIdsAndArguments() {
        JsonNode a = chat(",\"tools\":[" + WEATHER_TOOL_CHAT + "]");
        JsonNode b = chat(",\"tools\":[" + WEATHER_TOOL_CHAT + "]");

        assertThat(b.path("choices").get(0).path("message").path("tool_calls"))
                .isEqualTo(a.path("choices").get(0).path("message").path("tool_calls"));
    }

    @Test
    void answer_parallelToolCallsFalse_oneCall() {
        JsonNode b = chat(",\"parallel_tool_calls\":false,\"tools\":[" + WEATHER_TOOL_CHAT + "," + TIME_TOOL_CHAT + "]");

        assertThat(b.path("choices").get(0).path("message").path("tool_calls")).hasSize(1);
    }

    @Test
    void answer_toolChoiceNone_text() {
        JsonNode b = chat(",\"tool_choice\":\"none\",\"tools\":[" + WEATHER_TOOL_CHAT + "]");

        JsonNode choice = b.path("choices").get(0);
        assertThat(choice.path("finish_reason").asText()).isEqualTo("stop");
        assertThat(choice.path("message").path("content").asText()).isNotEmpty();
        assertThat(choice.path("message").has("tool_calls")).isFalse();
    }

    @Test
    void answer_toolChoiceNamed_callsOnlyThatTool() {
        JsonNode b = chat(",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}},"
                + "\"tools\":[" + WEATHER_TOOL_CHAT + "," + TIME_TOOL_CHAT + "]");

        JsonNode calls = b.path("choices").get(0).path("message").path("tool_calls");
        assertThat(calls).hasSize(1);
        assertThat(calls.get(0).path("function").path("name").asText()).isEqualTo("get_time");
    }

    @Test
    void answer_toolChoiceNamedUnknown_400() {
        SimulatedResponse r = answer(CHAT, chatRequest(",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"nope\"}},"
                + "\"tools\":[" + WEATHER_TOOL_CHAT + "]"));

        assertThat(r.status()).isEqualTo(400);
        assertThat(body(r).path("error").path("param").asText()).isEqualTo("tool_choice");
    }

    @Test
    void answer_afterToolResult_autoAnswersWithTextButRequiredStillCalls() {
        String conversation = "{\"model\":\"m\",\"tools\":[" + WEATHER_TOOL_CHAT + "],\"messages\":["
                + "{\"role\":\"user\",\"content\":\"Weather in Oslo?\"},"
                + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"12 C\"}]";

        JsonNode auto = body(answer(CHAT, conversation + "}"));
        JsonNode required = body(answer(CHAT, conversation + ",\"tool_choice\":\"required\"}"));

        assertThat(auto.path("choices").get(0).path("finish_reason").asText()).isEqualTo("stop");
        assertThat(auto.path("choices").get(0).path("message").path("content").asText()).isNotEmpty();
        assertThat(required.path("choices").get(0).path("finish_reason").asText()).isEqualTo("tool_calls");
    }

    @Test
    void answer_toolCallStream_firstEntryCarriesIdNameThenArgumentFragments() {
        JsonNode whole = chat(",\"tools\":[" + WEATHER_TOOL_CHAT + "," + TIME_TOOL_CHAT + "]");
        List<JsonNode> chunks = chatStream(",\"tools\":[" + WEATHER_TOOL_CHAT + "," + TIME_TOOL_CHAT + "]");

        JsonNode expected = whole.path("choices").get(0).path("message").path("tool_calls");
        Map<Integer, StringBuilder> args = new HashMap<>();
        Map<Integer, Integer> fragments = new HashMap<>();
        List<Integer> order = new ArrayList<>();
        for (JsonNode c : chunks) {
            JsonNode calls = c.path("choices").get(0).path("delta").path("tool_calls");
            for (JsonNode call : calls) {
                int k = call.path("index").asInt();
                if (!args.containsKey(k)) {
                    order.add(k);
                    assertThat(call.path("id").asText()).isEqualTo(expected.get(k).path("id").asText());
                    assertThat(call.path("type").asText()).isEqualTo("function");
                    assertThat(call.path("function").path("name").asText())
                            .isEqualTo(expected.get(k).path("function").path("name").asText());
                    assertThat(call.path("function").path("arguments").asText()).isEmpty();
                    args.put(k, new StringBuilder());
                } else {
                    assertThat(call.has("id")).isFalse();
                    assertThat(call.has("type")).isFalse();
                    assertThat(call.path("function").has("name")).isFalse();
                    args.get(k).append(call.path("function").path("arguments").asText());
                    fragments.merge(k, 1, Integer::sum);
                }
            }
        }
        assertThat(order).containsExactly(0, 1);
        for (int k = 0; k < 2; k++) {
            assertThat(args.get(k).toString()).isEqualTo(expected.get(k).path("function").path("arguments").asText());
            assertThat(fragments.get(k)).isGreaterThanOrEqualTo(2);
        }
        assertThat(chunks.get(0).path("choices").get(0).path("delta").path("role").asText()).isEqualTo("assistant");
        assertThat(chunks.get(chunks.size() - 1).path("choices").get(0).path("finish_reason").asText())
                .isEqualTo("tool_calls");
    }

    @Test
    void answer_responseFormatJsonObject_contentIsJsonObject() {
        JsonNode b = chat(",\"response_format\":{\"type\":\"json_object\"}");
        List<JsonNode> chunks = chatStream(",\"response_format\":{\"type\":\"json_object\"}");

        String content = b.path("choices").get(0).path("message").path("content").asText();
        assertThat(json(content).isObject()).isTrue();
        assertThat(json(content).path("answer").asText()).isNotEmpty();
        assertThat(chatText(chunks, 0)).isEqualTo(content);
    }

    @Test
    void answer_responseFormatJsonSchema_contentFollowsSchema() {
        JsonNode b = chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"a\",\"schema\":"
                + "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":\"string\"},\"score\":{\"type\":\"number\"},"
                + "\"items\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/item\"}}},"
                + "\"$defs\":{\"item\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}}}}}");

        JsonNode content = json(b.path("choices").get(0).path("message").path("content").asText());
        assertThat(content.path("title").isTextual()).isTrue();
        assertThat(content.path("score").isNumber()).isTrue();
        assertThat(content.path("items").get(0).path("n").isIntegralNumber()).isTrue();
    }

    @Test
    void answer_reasoningEffort_addsReasoningCountedInUsage() {
        JsonNode b = chat(",\"reasoning_effort\":\"high\"");
        List<JsonNode> chunks = chatStream(",\"reasoning_effort\":\"high\"");
        JsonNode none = chat(",\"reasoning_effort\":\"minimal\"");

        JsonNode message = b.path("choices").get(0).path("message");
        String reasoning = message.path("reasoning").asText();
        assertThat(reasoning).isNotEmpty();
        int reasoningTokens = b.path("usage").path("completion_tokens_details").path("reasoning_tokens").asInt();
        assertThat(reasoningTokens).isEqualTo(reasoning.split(" ").length);
        assertThat(b.path("usage").path("completion_tokens").asInt())
                .isEqualTo(reasoningTokens + message.path("content").asText().split(" ").length);
        StringBuilder streamed = new StringBuilder();
        chunks.forEach(c -> streamed.append(c.path("choices").get(0).path("delta").path("reasoning").asText("")));
        assertThat(streamed.toString()).isEqualTo(reasoning);
        assertThat(none.path("choices").get(0).path("message").has("reasoning")).isFalse();
    }

    @Test
    void answer_missingModel_400MissingRequiredParameter() {
        SimulatedResponse r = answer(CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

        assertThat(r.status()).isEqualTo(400);
        assertThat(body(r)).isEqualTo(json("{\"error\":{\"message\":\"Missing required parameter: 'model'.\","
                + "\"type\":\"invalid_request_error\",\"param\":\"model\",\"code\":\"missing_required_parameter\"}}"));
        assertThat(r.headers()).containsKey("x-request-id");
    }

    @Test
    void answer_invalidRequests_400WithParam() {
        Map<String, String> cases = Map.of(
                "{\"model\":\"m\"}", "messages",
                "{\"model\":\"m\",\"messages\":[]}", "messages",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}", "messages[0].role",
                chatRequest(",\"stream_options\":{\"include_usage\":true}"), "stream_options",
                chatRequest(",\"n\":0"), "n",
                chatRequest(",\"max_tokens\":\"ten\""), "max_tokens",
                chatRequest(",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"), "stop");
        cases.forEach((request, param) -> {
            SimulatedResponse r = answer(CHAT, request);
            assertThat(r.status()).as(request).isEqualTo(400);
            JsonNode error = body(r).path("error");
            assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(error.path("param").asText()).as(request).isEqualTo(param);
            assertThat(error.path("message").asText()).isNotEmpty();
        });
    }

    @Test
    void answer_badJson_400InvalidJson() {
        for (String request : List.of("{\"model\":", "[1,2]", "", "{} trailing")) {
            SimulatedResponse r = answer(CHAT, request);

            assertThat(r.status()).as(request).isEqualTo(400);
            assertThat(body(r).path("error").path("code").asText()).isEqualTo("invalid_json");
        }
    }
}
