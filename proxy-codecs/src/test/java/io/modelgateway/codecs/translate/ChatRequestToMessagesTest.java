package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.assertSameJson;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.buf;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.string;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.text;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Contract 8.2: chat request in, the exact Anthropic request out (golden files under c2a/request). */
class ChatRequestToMessagesTest {
    private static final ChatRequestToMessagesOptions OPTIONS =
            new ChatRequestToMessagesOptions("claude-sonnet-upstream-id", 0, false);

    @ParameterizedTest
    @ValueSource(strings = {"contract-example", "system-hoisting", "user-images", "merging-parallel-tools",
            "response-format-json-object", "response-format-json-schema-tools", "response-format-thinking",
            "thinking-budget", "reasoning-object", "sampling-dropped-fields", "reasoning-details-replay"})
    void translate_goldenRequest_givesTheExactAnthropicRequest(String name) throws Exception {
        String chat = text("request/" + name + ".chat.json");
        assertSameJson(translate(chat, OPTIONS), text("request/" + name + ".anthropic.json"));
    }

    @Test
    void translate_contractExample_leavesTheCallerBodyUntouched() throws Exception {
        ByteBuf body = buf(text("request/contract-example.chat.json"));
        try {
            int before = body.readableBytes();
            TranslatedRequest r = ChatRequestToMessages.translate(ByteBufAllocator.DEFAULT, body, OPTIONS);
            string(r.body());
            assertThat(body.readerIndex()).isZero();
            assertThat(body.readableBytes()).isEqualTo(before);
            assertThat(body.refCnt()).isEqualTo(1);
            assertThat(r.stream()).isFalse();
        } finally {
            body.release();
        }
    }

    @Test
    void translate_streamWithIncludeUsageAndExclude_remembersThemForTheAnswer() throws Exception {
        TranslatedRequest r = request("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"reasoning\":{\"effort\":\"low\","
                + "\"exclude\":true},\"response_format\":{\"type\":\"json_object\"}}", OPTIONS);
        r.body().release();
        assertThat(r.stream()).isTrue();
        MessagesResponseToChat answer = (MessagesResponseToChat) r.response();
        assertThat(answer.includeUsage()).isTrue();
        assertThat(answer.excludeReasoning()).isTrue();
        assertThat(answer.jsonResponse()).isTrue();
        assertThat(answer.usage()).isEqualTo(Usage.ZERO);
    }

    @Test
    void translate_plainRequest_answerHasNoUsageChunkNoExcludeNoEmulation() throws Exception {
        TranslatedRequest r = request("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"stream\":true}", OPTIONS);
        r.body().release();
        MessagesResponseToChat answer = (MessagesResponseToChat) r.response();
        assertThat(answer.includeUsage()).isFalse();
        assertThat(answer.excludeReasoning()).isFalse();
        assertThat(answer.jsonResponse()).isFalse();
    }

    @Test
    void translate_noTemperatureModel_dropsTemperatureSilently() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"temperature\":0.3,\"top_p\":0.5}", new ChatRequestToMessagesOptions("up", 0, true)));
        assertThat(out.has("temperature")).isFalse();
        assertThat(out.get("top_p").asDouble()).isEqualTo(0.5);
        assertThat(out.get("model").asText()).isEqualTo("up");
    }

    @Test
    void translate_negativeTemperature_isClampedToZero() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"temperature\":-0.5}", OPTIONS));
        assertThat(out.get("temperature").asDouble()).isZero();
    }

    @Test
    void translate_noMaxTokensAndSmallModelLimit_defaultsToTheModelLimit() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                new ChatRequestToMessagesOptions("up", 2000, false)));
        assertThat(out.get("max_tokens").asInt()).isEqualTo(2000);
        out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                new ChatRequestToMessagesOptions("up", 64000, false)));
        assertThat(out.get("max_tokens").asInt()).isEqualTo(4096);
    }

    @Test
    void translate_thinkingAboveTheModelLimit_capsMaxTokensAndShrinksTheBudget() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"reasoning_effort\":\"max\"}", new ChatRequestToMessagesOptions("up", 8192, false)));
        assertThat(out.get("max_tokens").asInt()).isEqualTo(8192);
        assertThat(out.at("/thinking/budget_tokens").asInt()).isEqualTo(4096);
    }

    @Test
    void translate_modelLimitTooSmallForThinking_omitsThinking() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"reasoning_effort\":\"low\",\"temperature\":0.4}", new ChatRequestToMessagesOptions("up", 1024, false)));
        assertThat(out.has("thinking")).isFalse();
        assertThat(out.get("max_tokens").asInt()).isEqualTo(1024);
        assertThat(out.get("temperature").asDouble()).isEqualTo(0.4);
    }

    @Test
    void translate_thinkingBudgetBelowTheRequestedCap_keepsTheCap() throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"reasoning_effort\":\"medium\",\"max_completion_tokens\":3000}", OPTIONS));
        assertThat(out.get("max_tokens").asInt()).isEqualTo(3000);
        assertThat(out.at("/thinking/budget_tokens").asInt()).isEqualTo(2048);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reasoningForms")
    void translate_reasoningForms_giveTheGd15Budget(String fields, int budget) throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
                + fields + "}", OPTIONS));
        if (budget == 0) {
            assertThat(out.has("thinking")).isFalse();
        } else {
            assertThat(out.get("thinking")).isEqualTo(tree("{\"type\":\"enabled\",\"budget_tokens\":" + budget + "}"));
        }
    }

    static Stream<Arguments> reasoningForms() {
        return Stream.of(
                arguments(",\"reasoning_effort\":\"none\"", 0),
                arguments(",\"reasoning_effort\":\"minimal\"", 0),
                arguments(",\"reasoning_effort\":\"low\"", 1024),
                arguments(",\"reasoning_effort\":\"medium\"", 2048),
                arguments(",\"reasoning_effort\":\"high\"", 4096),
                arguments(",\"reasoning_effort\":\"xhigh\"", 8192),
                arguments(",\"reasoning_effort\":\"max\"", 16384),
                arguments(",\"reasoning_effort\":null", 0),
                arguments(",\"reasoning\":{\"effort\":\"high\"},\"reasoning_effort\":\"low\"", 4096),
                arguments(",\"reasoning\":{\"max_tokens\":500}", 1024),
                arguments(",\"reasoning\":{\"max_tokens\":3000,\"effort\":\"low\"}", 3000),
                arguments(",\"reasoning\":{\"enabled\":true}", 2048),
                arguments(",\"reasoning\":{\"enabled\":false,\"effort\":\"high\"}", 0),
                arguments(",\"reasoning\":{\"enabled\":false},\"reasoning_effort\":\"high\"", 0),
                arguments(",\"reasoning\":{\"exclude\":true},\"reasoning_effort\":\"xhigh\"", 8192),
                arguments(",\"reasoning\":{\"exclude\":true}", 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("toolChoices")
    void translate_toolChoiceForms_giveAnthropicToolsAndChoice(String name, String fields, List<String> tools,
            String choice) throws Exception {
        JsonNode out = tree(translate("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
                + fields + "}", OPTIONS));
        List<String> names = new ArrayList<>();
        if (out.has("tools")) {
            out.get("tools").forEach(t -> names.add(t.get("name").asText()));
        }
        assertThat(names).isEqualTo(tools);
        if (choice == null) {
            assertThat(out.has("tool_choice")).isFalse();
        } else {
            assertThat(out.get("tool_choice")).isEqualTo(tree(choice));
        }
    }

    private static final String TOOLS = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
            + "{\"type\":\"function\",\"function\":{\"name\":\"b\"}}]";
    private static final String JSON_OBJECT = ",\"response_format\":{\"type\":\"json_object\"}";

    static Stream<Arguments> toolChoices() {
        List<String> ab = List.of("a", "b");
        List<String> abJson = List.of("a", "b", "json_response");
        List<String> json = List.of("json_response");
        return Stream.of(
                arguments("absent", TOOLS, ab, null),
                arguments("auto", TOOLS + ",\"tool_choice\":\"auto\"", ab, "{\"type\":\"auto\"}"),
                arguments("none", TOOLS + ",\"tool_choice\":\"none\"", ab, "{\"type\":\"none\"}"),
                arguments("required", TOOLS + ",\"tool_choice\":\"required\"", ab, "{\"type\":\"any\"}"),
                arguments("named", TOOLS + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}", ab,
                        "{\"type\":\"tool\",\"name\":\"b\"}"),
                arguments("allowed auto", TOOLS + ",\"tool_choice\":{\"type\":\"allowed_tools\",\"allowed_tools\":"
                        + "{\"mode\":\"auto\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]}}",
                        List.of("a"), "{\"type\":\"auto\"}"),
                arguments("allowed required", TOOLS + ",\"tool_choice\":{\"type\":\"allowed_tools\",\"allowed_tools\":"
                        + "{\"mode\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"b\"}}]}}",
                        List.of("b"), "{\"type\":\"any\"}"),
                arguments("parallel off", TOOLS + ",\"parallel_tool_calls\":false", ab,
                        "{\"type\":\"auto\",\"disable_parallel_tool_use\":true}"),
                arguments("required, parallel off", TOOLS + ",\"tool_choice\":\"required\",\"parallel_tool_calls\":false",
                        ab, "{\"type\":\"any\",\"disable_parallel_tool_use\":true}"),
                arguments("named, parallel off", TOOLS + ",\"tool_choice\":{\"type\":\"function\",\"function\":"
                        + "{\"name\":\"a\"}},\"parallel_tool_calls\":false", ab,
                        "{\"type\":\"tool\",\"name\":\"a\",\"disable_parallel_tool_use\":true}"),
                arguments("none, parallel off", TOOLS + ",\"tool_choice\":\"none\",\"parallel_tool_calls\":false", ab,
                        "{\"type\":\"none\"}"),
                arguments("parallel on", TOOLS + ",\"parallel_tool_calls\":true", ab, null),
                arguments("no tools, none", ",\"tool_choice\":\"none\"", List.of(), null),
                arguments("empty tools, auto", ",\"tools\":[],\"tool_choice\":\"auto\"", List.of(), null),
                arguments("json, no tools", JSON_OBJECT, json, "{\"type\":\"tool\",\"name\":\"json_response\"}"),
                arguments("json, tools", TOOLS + JSON_OBJECT, abJson, "{\"type\":\"any\"}"),
                arguments("json, tools, auto", TOOLS + JSON_OBJECT + ",\"tool_choice\":\"auto\"", abJson,
                        "{\"type\":\"any\"}"),
                arguments("json, tools, none", TOOLS + JSON_OBJECT + ",\"tool_choice\":\"none\"", json,
                        "{\"type\":\"tool\",\"name\":\"json_response\"}"),
                arguments("json, tools, named", TOOLS + JSON_OBJECT
                        + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}", abJson,
                        "{\"type\":\"tool\",\"name\":\"b\"}"),
                arguments("json, allowed required", TOOLS + JSON_OBJECT + ",\"tool_choice\":{\"type\":\"allowed_tools\","
                        + "\"allowed_tools\":{\"mode\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":"
                        + "{\"name\":\"a\"}}]}}", List.of("a", "json_response"), "{\"type\":\"any\"}"),
                arguments("json, thinking, tools, required", TOOLS + JSON_OBJECT
                        + ",\"tool_choice\":\"required\",\"reasoning_effort\":\"low\"", abJson, "{\"type\":\"auto\"}"),
                arguments("json, thinking, no tools", JSON_OBJECT + ",\"reasoning_effort\":\"low\"", json,
                        "{\"type\":\"auto\"}"),
                arguments("json, no tools, parallel off", JSON_OBJECT + ",\"parallel_tool_calls\":false", json,
                        "{\"type\":\"tool\",\"name\":\"json_response\",\"disable_parallel_tool_use\":true}"),
                arguments("thinking, named", TOOLS + ",\"reasoning_effort\":\"low\",\"tool_choice\":{\"type\":"
                        + "\"function\",\"function\":{\"name\":\"a\"}}", ab, "{\"type\":\"auto\"}"),
                arguments("thinking, none", TOOLS + ",\"reasoning_effort\":\"low\",\"tool_choice\":\"none\"", ab,
                        "{\"type\":\"none\"}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidRequests")
    void translate_invalidRequest_is400WithParamAndCode(String name, String body, String param, String code) {
        assertThatThrownBy(() -> translate(body, OPTIONS))
                .isInstanceOfSatisfying(TranslationException.class, e -> {
                    GatewayError error = e.error();
                    assertThat(error.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
                    assertThat(error.kind().status(ApiStyle.OPENAI)).isEqualTo(400);
                    assertThat(error.param()).isEqualTo(param);
                    assertThat(error.code()).isEqualTo(code);
                    assertThat(error.message()).isNotBlank();
                });
    }

    private static String msgs(String messages) {
        return "{\"model\":\"m\",\"messages\":[" + messages + "]";
    }

    private static final String USER = "{\"role\":\"user\",\"content\":\"hi\"}";
    private static final String CALL = "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
            + "\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}";

    private static String callWithArguments(String arguments) {
        return msgs(USER + ",{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"f\",\"arguments\":" + arguments + "}}]}") + "}";
    }

    static Stream<Arguments> invalidRequests() {
        return Stream.of(
                arguments("not JSON", "{\"model\":", null, "invalid_json"),
                // duplicate keys anywhere: the tree would keep the last one, an upstream reading the caller's
                // bytes might have taken the first
                arguments("duplicate key in a content part", msgs("{\"role\":\"user\",\"content\":[{\"type\":"
                        + "\"text\",\"text\":\"a\",\"text\":\"b\"}]}") + "}", "messages[0].content[0].text",
                        "duplicate_key"),
                arguments("duplicate key in a tool", msgs(USER) + ",\"tools\":[{\"type\":\"function\",\"function\":"
                        + "{\"name\":\"a\",\"name\":\"b\"}}]}", "tools[0].function.name", "duplicate_key"),
                arguments("duplicate key in tool-call arguments", callWithArguments("\"{\\\"a\\\":1,\\\"a\\\":2}\""),
                        "messages[1].tool_calls[0].function.arguments.a", "duplicate_key"),
                arguments("array body", "[]", null, "invalid_json"),
                arguments("no messages", "{\"model\":\"m\"}", "messages", "missing_required_parameter"),
                arguments("empty messages", msgs("") + "}", "messages", "invalid_value"),
                arguments("only system", msgs("{\"role\":\"system\",\"content\":\"x\"}") + "}", "messages",
                        "invalid_value"),
                arguments("n=2 (GD-13)", msgs(USER) + ",\"n\":2}", "n", "unsupported_value"),
                arguments("n=0", msgs(USER) + ",\"n\":0}", "n", "invalid_value"),
                arguments("functions", msgs(USER) + ",\"functions\":[{\"name\":\"f\"}]}", "functions",
                        "unsupported_parameter"),
                arguments("function_call", msgs(USER) + ",\"function_call\":\"auto\"}", "function_call",
                        "unsupported_parameter"),
                arguments("custom tool", msgs(USER) + ",\"tools\":[{\"type\":\"custom\",\"custom\":{\"name\":\"g\"}}]}",
                        "tools[0].type", "unsupported_value"),
                arguments("custom tool choice", msgs(USER) + TOOLS + ",\"tool_choice\":{\"type\":\"custom\","
                        + "\"custom\":{\"name\":\"a\"}}}", "tool_choice.type", "unsupported_value"),
                arguments("bad tool name", msgs(USER) + ",\"tools\":[{\"type\":\"function\",\"function\":"
                        + "{\"name\":\"a b\"}}]}", "tools[0].function.name", "invalid_value"),
                arguments("duplicate tool", msgs(USER) + ",\"tools\":[{\"type\":\"function\",\"function\":"
                        + "{\"name\":\"a\"}},{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]}",
                        "tools[1].function.name", "invalid_value"),
                arguments("input_audio part", msgs("{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"},"
                        + "{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"AAA\",\"format\":\"wav\"}}]}") + "}",
                        "messages[0].content[1].type", "unsupported_value"),
                arguments("file part", msgs("{\"role\":\"user\",\"content\":[{\"type\":\"file\",\"file\":"
                        + "{\"file_id\":\"f1\"}}]}") + "}", "messages[0].content[0].type", "unsupported_value"),
                arguments("bmp image", msgs("{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                        + "{\"url\":\"data:image/bmp;base64,Qk0=\"}}]}") + "}",
                        "messages[0].content[0].image_url.url", "invalid_value"),
                arguments("non-base64 data URI", msgs("{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
                        + "\"image_url\":{\"url\":\"data:image/png,abc\"}}]}") + "}",
                        "messages[0].content[0].image_url.url", "invalid_value"),
                arguments("ftp image", msgs("{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                        + "{\"url\":\"ftp://x/y.png\"}}]}") + "}", "messages[0].content[0].image_url.url",
                        "invalid_value"),
                arguments("empty user string", msgs("{\"role\":\"user\",\"content\":\"\"}") + "}",
                        "messages[0].content", "invalid_value"),
                arguments("user of empty parts", msgs(USER + ",{\"role\":\"assistant\",\"content\":\"ok\"},"
                        + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\"}]}") + "}",
                        "messages[2].content", "invalid_value"),
                arguments("user content null", msgs("{\"role\":\"user\",\"content\":null}") + "}",
                        "messages[0].content", "missing_required_parameter"),
                arguments("user content number", msgs("{\"role\":\"user\",\"content\":5}") + "}",
                        "messages[0].content", "invalid_type"),
                arguments("arguments an array (GD-23)", callWithArguments("\"[1,2]\""),
                        "messages[1].tool_calls[0].function.arguments", "invalid_value"),
                arguments("arguments a string (GD-23)", callWithArguments("\"\\\"Oslo\\\"\""),
                        "messages[1].tool_calls[0].function.arguments", "invalid_value"),
                arguments("arguments not JSON (GD-23)", callWithArguments("\"{city: Oslo}\""),
                        "messages[1].tool_calls[0].function.arguments", "invalid_value"),
                arguments("arguments with trailing text (GD-23)", callWithArguments("\"{} {}\""),
                        "messages[1].tool_calls[0].function.arguments", "invalid_value"),
                arguments("custom tool call", msgs(USER + ",{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\","
                        + "\"type\":\"custom\",\"custom\":{\"name\":\"g\",\"input\":\"x\"}}]}") + "}",
                        "messages[1].tool_calls[0].type", "unsupported_value"),
                arguments("tool call without id", msgs(USER + ",{\"role\":\"assistant\",\"tool_calls\":[{\"type\":"
                        + "\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}") + "}",
                        "messages[1].tool_calls[0].id", "missing_required_parameter"),
                arguments("unknown tool_call_id", msgs(USER + "," + CALL + ",{\"role\":\"tool\",\"tool_call_id\":"
                        + "\"zz\",\"content\":\"r\"}") + "}", "messages", "invalid_value"),
                arguments("tool message without id", msgs(USER + "," + CALL + ",{\"role\":\"tool\",\"content\":\"r\"}")
                        + "}", "messages[2].tool_call_id", "missing_required_parameter"),
                arguments("unanswered tool call", msgs(USER + "," + CALL + "," + USER) + "}", "messages",
                        "invalid_value"),
                arguments("role function", msgs("{\"role\":\"function\",\"name\":\"f\",\"content\":\"x\"}") + "}",
                        "messages[0].role", "unsupported_value"),
                arguments("unknown role", msgs("{\"role\":\"robot\",\"content\":\"x\"}") + "}", "messages[0].role",
                        "invalid_value"),
                arguments("missing role", msgs("{\"content\":\"x\"}") + "}", "messages[0].role",
                        "missing_required_parameter"),
                arguments("system image part", msgs("{\"role\":\"system\",\"content\":[{\"type\":\"image_url\","
                        + "\"image_url\":{\"url\":\"https://x/y.png\"}}]}," + USER) + "}",
                        "messages[0].content[0].type", "invalid_value"),
                arguments("named tool not in tools", msgs(USER) + TOOLS + ",\"tool_choice\":{\"type\":\"function\","
                        + "\"function\":{\"name\":\"zz\"}}}", "tool_choice", "invalid_value"),
                arguments("required without tools", msgs(USER) + ",\"tool_choice\":\"required\"}", "tool_choice",
                        "invalid_value"),
                arguments("bad tool_choice string", msgs(USER) + TOOLS + ",\"tool_choice\":\"sometimes\"}",
                        "tool_choice", "invalid_value"),
                arguments("allowed tool not in tools", msgs(USER) + TOOLS + ",\"tool_choice\":{\"type\":"
                        + "\"allowed_tools\",\"allowed_tools\":{\"mode\":\"auto\",\"tools\":[{\"type\":\"function\","
                        + "\"function\":{\"name\":\"zz\"}}]}}}", "tool_choice.allowed_tools.tools[0]", "invalid_value"),
                arguments("bad reasoning_effort", msgs(USER) + ",\"reasoning_effort\":\"extreme\"}", "reasoning_effort",
                        "invalid_value"),
                arguments("bad reasoning.effort", msgs(USER) + ",\"reasoning\":{\"effort\":\"extreme\"}}",
                        "reasoning.effort", "invalid_value"),
                arguments("temperature a string", msgs(USER) + ",\"temperature\":\"hot\"}", "temperature",
                        "invalid_type"),
                arguments("max_tokens 0", msgs(USER) + ",\"max_tokens\":0}", "max_tokens", "invalid_value"),
                arguments("max_completion_tokens 1.5", msgs(USER) + ",\"max_completion_tokens\":1.5}",
                        "max_completion_tokens", "invalid_type"),
                arguments("stop of numbers", msgs(USER) + ",\"stop\":[1]}", "stop[0]", "invalid_type"),
                arguments("stream a string", msgs(USER) + ",\"stream\":\"yes\"}", "stream", "invalid_type"),
                arguments("json_schema without schema object", msgs(USER)
                        + ",\"response_format\":{\"type\":\"json_schema\"}}", "response_format.json_schema",
                        "missing_required_parameter"),
                arguments("unknown response_format", msgs(USER) + ",\"response_format\":{\"type\":\"yaml\"}}",
                        "response_format.type", "invalid_value"),
                arguments("json_response tool with response_format", msgs(USER) + ",\"tools\":[{\"type\":\"function\","
                        + "\"function\":{\"name\":\"json_response\"}}]" + JSON_OBJECT + "}", "tools", "invalid_value"));
    }

    private static TranslatedRequest request(String chat, ChatRequestToMessagesOptions options) throws TranslationException {
        ByteBuf body = buf(chat);
        try {
            return ChatRequestToMessages.translate(ByteBufAllocator.DEFAULT, body, options,
                    ChatCallerTranscripts.ID, ChatCallerTranscripts.CREATED);
        } finally {
            body.release();
        }
    }

    /** The translated body as a string (released). */
    static String translate(String chat, ChatRequestToMessagesOptions options) throws TranslationException {
        return string(request(chat, options).body());
    }
}
