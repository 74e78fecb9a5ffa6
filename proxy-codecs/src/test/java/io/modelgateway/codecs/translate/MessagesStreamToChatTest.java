package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.FALLBACK_MODEL;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.bytes;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.stream;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.streamTranslator;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.text;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Contract 8.4: an Anthropic stream transcript in (through the real SseEventScanner), the exact chat
 * stream out, byte for byte (golden files under c2a/stream).
 */
class MessagesStreamToChatTest {

    /** input transcript, expected transcript, include_usage, reasoning.exclude, json_response emulation. */
    static Stream<Arguments> transcripts() {
        return Stream.of(
                arguments("thinking-text-tool", "thinking-text-tool", false, false, false),
                arguments("thinking-text-tool", "thinking-text-tool.usage", true, false, false),
                arguments("parallel-tools-cache", "parallel-tools-cache", true, false, false),
                arguments("json-response", "json-response", false, false, true),
                arguments("redacted-thinking", "redacted-thinking", true, false, false),
                arguments("redacted-thinking", "redacted-thinking.exclude", false, true, false),
                arguments("error-overloaded", "error-overloaded", false, false, false),
                arguments("error-rate-limit", "error-rate-limit", false, false, false),
                arguments("error-api", "error-api", true, false, false),
                arguments("ended-early", "ended-early", false, false, false),
                arguments("framing", "framing", true, false, false),
                arguments("malformed", "malformed", false, false, false),
                arguments("server-tools-refusal", "server-tools-refusal", false, false, false));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("transcripts")
    void onEvent_goldenTranscript_givesTheExactChatStream(String in, String out, boolean includeUsage, boolean exclude,
            boolean json) {
        String actual = stream(streamTranslator(includeUsage, exclude, json), bytes("stream/" + in + ".anthropic.sse"));
        assertThat(actual).isEqualTo(text("stream/" + out + ".chat.sse"));
    }

    @Test
    void onEvent_includeUsageOff_noChunkCarriesAUsageKey() {
        String out = stream(streamTranslator(false, false, false), bytes("stream/thinking-text-tool.anthropic.sse"));
        for (String event : events(out)) {
            if (event.startsWith("data: {")) {
                JsonNode chunk = tree(event.substring(6));
                assertThat(chunk.has("usage")).as(event).isFalse();
                assertThat(chunk.get("choices")).hasSize(1);
            }
        }
    }

    @Test
    void onEvent_includeUsageOn_usageIsNullEverywhereButTheUsageChunk() {
        String out = stream(streamTranslator(true, false, false), bytes("stream/thinking-text-tool.anthropic.sse"));
        List<JsonNode> chunks = new ArrayList<>();
        for (String event : events(out)) {
            if (event.startsWith("data: {")) {
                chunks.add(tree(event.substring(6)));
            }
        }
        JsonNode last = chunks.get(chunks.size() - 1);
        assertThat(last.get("choices")).isEmpty();
        assertThat(last.get("usage").get("total_tokens").asInt()).isEqualTo(1532);
        for (JsonNode chunk : chunks.subList(0, chunks.size() - 1)) {
            assertThat(chunk.get("usage").isNull()).isTrue();
            assertThat(chunk.get("id").asText()).isEqualTo(last.get("id").asText());
            assertThat(chunk.get("created").asLong()).isEqualTo(last.get("created").asLong());
            assertThat(chunk.get("model").asText()).isEqualTo("acme/claude-sonnet");
        }
    }

    @Test
    void usage_afterTheStream_countsCacheAndReplacements() {
        MessagesStreamToChat t = streamTranslator(true, false, false);
        stream(t, bytes("stream/parallel-tools-cache.anthropic.sse"));
        assertThat(t.usage()).isEqualTo(new Usage(412, 96, 0, 1024, 0));
    }

    @Test
    void usage_beforeAnyEvent_isZero() {
        assertThat(streamTranslator(true, false, false).usage()).isEqualTo(Usage.ZERO);
    }

    @Test
    void onEnd_connectionBroken_saysTheConnectionWasLost() {
        MessagesStreamToChat t = streamTranslator(false, false, false);
        List<String> out = new ArrayList<>();
        feed(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n", out);
        assertThat(t.finished()).isFalse();
        t.onEnd(false, b -> out.add(release(b)));
        assertThat(out).last().isEqualTo("data: {\"error\":{\"message\":\"Upstream connection lost\",\"type\":"
                + "\"server_error\",\"param\":null,\"code\":\"upstream_error\"}}\n\n");
        assertThat(t.finished()).isTrue();
        t.onEnd(true, b -> out.add(release(b)));
        assertThat(out).hasSize(2);
    }

    @Test
    void onEnd_emptyStream_isTheEndedEarlyError() {
        MessagesStreamToChat t = streamTranslator(true, false, false);
        assertThat(stream(t, new byte[0])).isEqualTo("data: {\"error\":{\"message\":\"Upstream stream ended early\","
                + "\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_error\"}}\n\n");
    }

    @Test
    void onEvent_contentBeforeMessageStart_stillStartsWithTheRoleChunkAndTheFallbackModel() {
        String out = stream(streamTranslator(false, false, false), ("event: ping\ndata: {\"type\":\"ping\"}\n\n"
                + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                + "{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
                .getBytes(StandardCharsets.UTF_8));
        List<String> events = events(out);
        assertThat(events).hasSize(4);
        assertThat(tree(events.get(0).substring(6)).at("/choices/0/delta")).isEqualTo(tree("{\"role\":\"assistant\","
                + "\"content\":\"\"}"));
        assertThat(tree(events.get(0).substring(6)).get("model").asText()).isEqualTo(FALLBACK_MODEL);
        assertThat(tree(events.get(2).substring(6)).at("/choices/0/finish_reason").asText()).isEqualTo("stop");
        assertThat(events.get(3)).isEqualTo("data: [DONE]\n\n");
    }

    @Test
    void onEvent_toolUseWithoutId_getsACallId() {
        String out = stream(streamTranslator(false, false, false), ("event: content_block_start\ndata: {\"type\":"
                + "\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"name\":\"f\",\"input\":{}}}"
                + "\n\n").getBytes(StandardCharsets.UTF_8));
        JsonNode call = tree(events(out).get(1).substring(6)).at("/choices/0/delta/tool_calls/0");
        assertThat(call.get("id").asText()).startsWith("call_").hasSize(29);
        assertThat(call.at("/function/name").asText()).isEqualTo("f");
    }

    @Test
    void onEvent_jsonResponseWithoutEmulation_isAnOrdinaryToolCall() {
        String out = stream(streamTranslator(false, false, false), bytes("stream/json-response.anthropic.sse"));
        assertThat(out).contains("\"name\":\"json_response\"").contains("\"finish_reason\":\"tool_calls\"");
    }

    @Test
    void onEvent_secondJsonResponseCall_isNotAppendedToTheAnswer() {
        String second = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,"
                + "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"json_response\",\"input\":{}}}\n\n"
                + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":"
                + "{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n";
        String in = text("stream/json-response.anthropic.sse").replace("event: message_delta", second
                + "event: message_delta");
        assertThat(stream(streamTranslator(false, false, true), in.getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(text("stream/json-response.chat.sse"));
    }

    @ParameterizedTest
    @MethodSource("unreadableData")
    void onEvent_unreadableData_endsWithTheErrorChunk(String data) {
        String out = stream(streamTranslator(false, false, false), ("event: message_start\ndata: {\"type\":"
                + "\"message_start\",\"message\":{\"model\":\"m\"}}\n\nevent: content_block_delta\ndata: " + data + "\n\n")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(events(out)).hasSize(2).last().asString()
                .contains("could not read").contains("\"code\":\"upstream_error\"");
    }

    static Stream<String> unreadableData() {
        return Stream.of("[DONE]", "[1,2]", "\"text\"", "{\"type\":\"content_block_delta\"} {}",
                "{\"type\":\"content_block_delta\",",
                "{\"index\":99999999999999999999}");
    }

    @Test
    void onEvent_implausibleCounts_readAsAbsent_andTheStreamGoesOn() {
        MessagesStreamToChat t = streamTranslator(true, false, false);
        String out = stream(t, ("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
                + "\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":99999999999999999999999,"
                + "\"cache_read_input_tokens\":-4,\"output_tokens\":1}}}\n\n"
                + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
                + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                + "\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
                + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
                + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                + "\"usage\":{\"output_tokens\":1.0E18}}\n\n"
                + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n").getBytes(StandardCharsets.UTF_8));

        assertThat(out).contains("\"content\":\"hi\"", "\"finish_reason\":\"stop\"").doesNotContain("could not read")
                .endsWith("data: [DONE]\n\n");
        JsonNode usage = tree(events(out).get(events(out).size() - 2).substring(6)).path("usage");
        assertThat(usage.path("prompt_tokens").asLong()).isZero();
        assertThat(usage.path("completion_tokens").asLong()).isEqualTo(1);
        assertThat(t.usage()).isEqualTo(new Usage(0, 1, 0, 0, 0));
    }

    @ParameterizedTest
    @MethodSource("ignoredEvents")
    void onEvent_eventsWithoutUsefulData_areIgnored(String event) {
        MessagesStreamToChat t = streamTranslator(true, false, false);
        List<String> out = new ArrayList<>();
        feed(t, event, out);
        assertThat(out).isEmpty();
        assertThat(t.finished()).isFalse();
    }

    static Stream<String> ignoredEvents() {
        return Stream.of("", "\n", "\r\n\r\n", ": just a comment\n\n", "event: message_start\n\n", "data:\n\n",
                "data: \n\n", "data:  \ndata:\t\n\n", "id: 5\nretry: 100\n\n", "event: ping\ndata: {\"type\":\"ping\"}\n\n",
                "data: {\"no_type\":1}\n\n", "data: {\"type\":\"content_block_stop\",\"index\":3}\n\n",
                "data: {\"type\":\"unknown_event\"}\n\n");
    }

    @Test
    void newStream_fromTheResponseTranslator_carriesTheRequestsChoices() {
        MessagesResponseToChat response = new MessagesResponseToChat("chatcmpl-X", 7, "fb", true, true, true);
        StreamTranslator t = response.newStream(ByteBufAllocator.DEFAULT);
        String out = stream(t, bytes("stream/json-response.anthropic.sse"));
        assertThat(out).contains("\"id\":\"chatcmpl-X\"").contains("\"created\":7").contains("\"usage\":null")
                .contains("\"content\":\"\\\"grün\\\"]}\"").contains("\"finish_reason\":\"stop\"");
    }

    private static void feed(StreamTranslator t, String event, List<String> out) {
        ByteBuf b = ChatCallerTranscripts.buf(event);
        try {
            t.onEvent(b, e -> out.add(release(e)));
        } finally {
            b.release();
        }
    }

    private static String release(ByteBuf b) {
        return ChatCallerTranscripts.string(b);
    }

    private static List<String> events(String out) {
        List<String> events = new ArrayList<>();
        for (String e : out.split("(?<=\n\n)")) {
            if (!e.isEmpty()) {
                events.add(e);
            }
        }
        return events;
    }
}
