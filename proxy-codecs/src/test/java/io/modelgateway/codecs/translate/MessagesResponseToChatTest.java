package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.CREATED;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.FALLBACK_MODEL;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.ID;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.assertSameJson;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.buf;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.string;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.text;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.error.ErrorKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Contract 8.3, 8.7, 8.8: an Anthropic message in, the exact chat completion out (golden files under c2a/response). */
class MessagesResponseToChatTest {

    private static MessagesResponseToChat translator(boolean exclude, boolean json) {
        return new MessagesResponseToChat(ID, CREATED, FALLBACK_MODEL, false, exclude, json);
    }

    private static String translate(MessagesResponseToChat t, String anthropic) throws TranslationException {
        ByteBuf body = buf(anthropic);
        try {
            ByteBuf out = t.translate(ByteBufAllocator.DEFAULT, body);
            assertThat(body.readerIndex()).as("the upstream body is borrowed").isZero();
            return string(out);
        } finally {
            body.release();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"thinking-text-tool", "parallel-tool-calls", "redacted-thinking-cache-write", "refusal",
            "max-tokens-empty", "server-tools-stop-sequence"})
    void translate_goldenMessage_givesTheExactChatCompletion(String name) throws Exception {
        assertSameJson(translate(translator(false, false), text("response/" + name + ".anthropic.json")),
                text("response/" + name + ".chat.json"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"json-response", "json-response-with-tool"})
    void translate_jsonResponseEmulation_answersWithContent(String name) throws Exception {
        assertSameJson(translate(translator(false, true), text("response/" + name + ".anthropic.json")),
                text("response/" + name + ".chat.json"));
    }

    @Test
    void translate_reasoningExcluded_omitsReasoningAndDetails() throws Exception {
        assertSameJson(translate(translator(true, false), text("response/thinking-text-tool.anthropic.json")),
                text("response/thinking-text-tool.exclude.chat.json"));
    }

    @Test
    void translate_jsonResponseToolWithoutEmulation_isAnOrdinaryToolCall() throws Exception {
        JsonNode out = tree(translate(translator(false, false), text("response/json-response.anthropic.json")));
        assertThat(out.at("/choices/0/message/content").isNull()).isTrue();
        assertThat(out.at("/choices/0/message/tool_calls/0/function/name").asText()).isEqualTo("json_response");
        assertThat(out.at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
    }

    @Test
    void translate_cacheTokens_followTheContractExample88() throws Exception {
        MessagesResponseToChat t = translator(false, false);
        JsonNode out = tree(translate(t, text("response/thinking-text-tool.anthropic.json")));
        assertThat(out.get("usage")).isEqualTo(tree("{\"prompt_tokens\":1436,\"completion_tokens\":96,"
                + "\"total_tokens\":1532,\"prompt_tokens_details\":{\"cached_tokens\":1024,\"cache_write_tokens\":0}}"));
        assertThat(t.usage()).isEqualTo(new Usage(412, 96, 0, 1024, 0));
    }

    @Test
    void usage_isThatOfTheLastTranslatedBody() throws Exception {
        MessagesResponseToChat t = translator(false, false);
        assertThat(t.usage()).isEqualTo(Usage.ZERO);
        translate(t, text("response/thinking-text-tool.anthropic.json"));
        translate(t, text("response/redacted-thinking-cache-write.anthropic.json"));
        assertThat(t.usage()).isEqualTo(new Usage(10, 120, 2048, 0, 50));
    }

    @Test
    void translate_implausibleCounts_readAsAbsent_andTheAnswerIsStillTranslated() throws Exception {
        MessagesResponseToChat t = translator(false, false);
        JsonNode out = tree(translate(t, "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],"
                + "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":99999999999999999999999,"
                + "\"cache_creation_input_tokens\":7.0,\"cache_read_input_tokens\":-3,\"output_tokens\":1e18,"
                + "\"output_tokens_details\":{\"thinking_tokens\":9223372036854775807}}}"));

        assertThat(out.at("/choices/0/message/content").asText()).isEqualTo("hi");
        assertThat(out.at("/usage/prompt_tokens").asLong()).isEqualTo(7);
        assertThat(out.at("/usage/completion_tokens").asLong()).isZero();
        assertThat(out.at("/usage/total_tokens").asLong()).isEqualTo(7);
        assertThat(out.at("/usage/completion_tokens_details").isMissingNode()).isTrue();
        assertThat(t.usage()).isEqualTo(new Usage(0, 0, 7, 0, 0));
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource(nullValues = "NULL", value = {"end_turn, stop", "stop_sequence, stop", "max_tokens, length",
            "model_context_window_exceeded, length", "tool_use, tool_calls", "pause_turn, stop",
            "refusal, content_filter", "NULL, stop", "something_new, stop"})
    void translate_stopReason_mapsPerTable87(String stopReason, String finishReason) throws Exception {
        ObjectNode body = (ObjectNode) tree(text("response/parallel-tool-calls.anthropic.json"));
        if (stopReason == null) {
            body.putNull("stop_reason");
        } else {
            body.put("stop_reason", stopReason);
        }
        JsonNode out = tree(translate(translator(false, false), body.toString()));
        assertThat(out.at("/choices/0/finish_reason").asText()).isEqualTo(finishReason);
    }

    @Test
    void translate_noModelNoUsageNoContent_fallsBackAndCountsZero() throws Exception {
        JsonNode out = tree(translate(translator(false, false), "{\"type\":\"message\",\"stop_reason\":\"end_turn\"}"));
        assertThat(out.get("model").asText()).isEqualTo(FALLBACK_MODEL);
        assertThat(out.at("/choices/0/message/content").asText()).isEmpty();
        assertThat(out.at("/usage/total_tokens").asInt()).isZero();
    }

    @Test
    void translate_toolUseWithoutId_getsACallId() throws Exception {
        JsonNode out = tree(translate(translator(false, false), "{\"content\":[{\"type\":\"tool_use\",\"name\":\"f\","
                + "\"input\":{}}],\"stop_reason\":\"tool_use\"}"));
        assertThat(out.at("/choices/0/message/tool_calls/0/id").asText()).startsWith("call_").hasSize(29);
        assertThat(out.at("/choices/0/message/tool_calls/0/function/arguments").asText()).isEqualTo("{}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "not json", "{\"content\":", "[1]", "{\"content\":\"text\"}", "{\"a\":1} {}"})
    void translate_unreadableBody_isAnUpstreamError(String body) {
        assertThatThrownBy(() -> translate(translator(false, false), body))
                .isInstanceOfSatisfying(TranslationException.class,
                        e -> assertThat(e.error().kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR));
    }

    @ParameterizedTest
    @MethodSource("errorBodies")
    void translate_errorBodyWithSuccessStatus_isThatError(String body, ErrorKind kind, String message) {
        assertThatThrownBy(() -> translate(translator(false, false), body))
                .isInstanceOfSatisfying(TranslationException.class, e -> {
                    assertThat(e.error().kind()).isEqualTo(kind);
                    assertThat(e.error().message()).isEqualTo(message);
                });
    }

    static Stream<Arguments> errorBodies() {
        return Stream.of(
                arguments("{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
                        ErrorKind.OVERLOADED, "Overloaded"),
                arguments("{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"key sk-ant-api03-abcdefgh\"}}",
                        ErrorKind.UPSTREAM_ERROR, "key [redacted]"),
                arguments("{\"type\":\"error\"}", ErrorKind.UPSTREAM_ERROR, "The upstream provider returned an error."));
    }

    /**
     * 8.3 last paragraph: a thinking turn's reasoning_details, sent back with the assistant message in the next
     * request, become the same thinking blocks (same signature) before the text and tool_use blocks.
     */
    @Test
    void translate_thinkingSignature_survivesTheRoundTripIntoTheNextRequest() throws Exception {
        JsonNode completion = tree(translate(translator(false, false), text("response/thinking-text-tool.anthropic.json")));
        ObjectNode assistant = (ObjectNode) completion.at("/choices/0/message").deepCopy();
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode next = f.objectNode().put("model", "acme/claude-sonnet");
        ArrayNode messages = next.putArray("messages");
        messages.addObject().put("role", "user").put("content", "Weather in Oslo?");
        messages.add(assistant);
        messages.addObject().put("role", "tool").put("tool_call_id", "toolu_01A9xYz").put("content", "12 °C");
        next.putArray("tools").addObject().put("type", "function").putObject("function").put("name", "get_weather");
        next.put("reasoning_effort", "medium");

        JsonNode request = tree(ChatRequestToMessagesTest.translate(next.toString(),
                new ChatRequestToMessagesOptions("claude-up", 0, false)));
        assertThat(request.at("/messages/1")).isEqualTo(tree("{\"role\":\"assistant\",\"content\":["
                + "{\"type\":\"thinking\",\"thinking\":\"User wants Oslo weather; call the tool.\","
                + "\"signature\":\"EqQBCkYIBxgCKkD\"},"
                + "{\"type\":\"text\",\"text\":\"Let me check.\"},"
                + "{\"type\":\"tool_use\",\"id\":\"toolu_01A9xYz\",\"name\":\"get_weather\",\"input\":{\"city\":\"Oslo\"}}]}"));
    }
}
