package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs upstream bytes through {@link SseEventScanner} into a {@link ChatStreamToMessages} the way the proxy
 * does (events borrowed and released after {@code onEvent}, the unfinished remainder handed over at the end,
 * then {@code onEnd}), collects the caller's events as text (releasing every buffer), and checks that text
 * against the Anthropic stream grammar of contract 5.10.
 */
final class ChatStreamToMessagesHarness {
    private static final Pattern EVENT = Pattern.compile("event: ([a-z_]+)\ndata: ([^\r\n]*)\n\n");

    private ChatStreamToMessagesHarness() {
    }

    /** The answer side of the long-tool-names request, so GD-22 names are restored; made once (read-only). */
    private static final ResponseTranslator RESPONSE;

    static {
        try {
            RESPONSE = ChatResponseToMessagesTest.responseTranslator();
        } catch (TranslationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A stream translator as the proxy gets it. */
    static StreamTranslator newTranslator() {
        return newTranslator(ByteBufAllocator.DEFAULT);
    }

    static StreamTranslator newTranslator(ByteBufAllocator alloc) {
        return RESPONSE.newStream(alloc);
    }

    /** Feeds {@code pieces} (each as its own direct buffer) and ends the stream; returns the caller's events. */
    static List<String> run(StreamTranslator t, List<byte[]> pieces, boolean clean) {
        return run(t, pieces, clean, ByteBufAllocator.DEFAULT);
    }

    /** As {@link #run(StreamTranslator, List, boolean)}, with the input and scanner buffers from {@code alloc}. */
    static List<String> run(StreamTranslator t, List<byte[]> pieces, boolean clean, ByteBufAllocator alloc) {
        List<String> out = new ArrayList<>();
        SseEventScanner scanner = new SseEventScanner(alloc);
        try {
            for (byte[] piece : pieces) {
                ByteBuf in = alloc.directBuffer(Math.max(1, piece.length)).writeBytes(piece);
                try {
                    scanner.feed(in, event -> deliver(t, event, out));
                } finally {
                    in.release();
                }
            }
            ByteBuf rest = scanner.drainRemainder();
            if (rest != null) {
                deliver(t, rest, out);
            }
            t.onEnd(clean, buf -> collect(buf, out));
        } finally {
            scanner.release();
        }
        return out;
    }

    static List<String> run(byte[] all) {
        return run(newTranslator(), List.of(all), true);
    }

    private static void deliver(StreamTranslator t, ByteBuf event, List<String> out) {
        try {
            t.onEvent(event, buf -> collect(buf, out));
        } finally {
            event.release();
        }
    }

    private static void collect(ByteBuf buf, List<String> out) {
        try {
            out.add(buf.toString(StandardCharsets.UTF_8));
        } finally {
            buf.release();
        }
    }

    /** The events with generated ids replaced by {@code msg_ID} / {@code toolu_ID}, as one text. */
    static String text(List<String> events) {
        return ChatResponseToMessagesTest.normaliseIds(String.join("", events));
    }

    /**
     * Every event is {@code event: <type>\ndata: <compact json>\n\n} with the JSON's type equal to the event
     * name, and the sequence follows 5.10: message_start, blocks with indexes 0, 1, … that never interleave and
     * whose deltas fit their kind, message_delta, message_stop — or an error event that ends everything.
     * Pings may appear anywhere after message_start. The stream must be terminated.
     */
    static void assertWellFormed(List<String> events) {
        boolean started = false;
        boolean ended = false;
        boolean deltaSeen = false;
        int nextIndex = 0;
        String openKind = null;
        for (int i = 0; i < events.size(); i++) {
            String e = events.get(i);
            String at = "event " + i + " of " + events;
            assertThat(ended).as("nothing after the terminal event: " + at).isFalse();
            Matcher m = EVENT.matcher(e);
            assertThat(m.matches()).as("framing of " + at).isTrue();
            String type = m.group(1);
            JsonNode json = parse(m.group(2), at);
            assertThat(json.path("type").asText()).as("JSON type = event name: " + at).isEqualTo(type);
            try {
                assertThat(m.group(2)).as("compact: " + at)
                        .isEqualTo(new String(MessagesRequestToChat.MAPPER.writeValueAsBytes(json), StandardCharsets.UTF_8));
            } catch (IOException ex) {
                throw new AssertionError(ex);
            }
            if ("error".equals(type)) {
                assertThat(json.path("error").path("type").asText()).as(at).isIn("api_error", "overloaded_error");
                assertThat(json.path("error").path("message").isTextual()).as(at).isTrue();
                ended = true;
                continue;
            }
            if (!started) {
                assertThat(type).as("first event: " + at).isEqualTo("message_start");
                JsonNode msg = json.path("message");
                assertThat(msg.path("id").asText()).matches("msg_[0-9A-Za-z]{24}");
                assertThat(msg.path("content").isArray() && msg.path("content").isEmpty()).as(at).isTrue();
                assertThat(msg.path("stop_reason").isNull()).as(at).isTrue();
                for (String f : new String[] {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                        "cache_read_input_tokens"}) {
                    assertThat(msg.path("usage").path(f).isIntegralNumber()).as(f + " in " + at).isTrue();
                }
                started = true;
                continue;
            }
            switch (type) {
                case "ping" -> {
                }
                case "content_block_start" -> {
                    assertThat(openKind).as("blocks never interleave: " + at).isNull();
                    assertThat(deltaSeen).as(at).isFalse();
                    assertThat(json.path("index").asInt(-1)).as("index order: " + at).isEqualTo(nextIndex);
                    openKind = json.path("content_block").path("type").asText();
                    assertThat(openKind).as(at).isIn("text", "thinking", "redacted_thinking", "tool_use");
                    if ("tool_use".equals(openKind)) {
                        assertThat(json.path("content_block").path("id").asText()).matches("[A-Za-z0-9_-]+");
                        assertThat(json.path("content_block").path("input").isObject()).as(at).isTrue();
                    }
                }
                case "content_block_delta" -> {
                    assertThat(openKind).as("delta needs an open block: " + at).isNotNull();
                    assertThat(json.path("index").asInt(-1)).as(at).isEqualTo(nextIndex);
                    String delta = json.path("delta").path("type").asText();
                    switch (openKind) {
                        case "text" -> assertThat(delta).as(at).isEqualTo("text_delta");
                        case "thinking" -> assertThat(delta).as(at).isIn("thinking_delta", "signature_delta");
                        case "tool_use" -> assertThat(delta).as(at).isEqualTo("input_json_delta");
                        default -> throw new AssertionError("no deltas for " + openKind + ": " + at);
                    }
                }
                case "content_block_stop" -> {
                    assertThat(openKind).as(at).isNotNull();
                    assertThat(json.path("index").asInt(-1)).as(at).isEqualTo(nextIndex);
                    openKind = null;
                    nextIndex++;
                }
                case "message_delta" -> {
                    assertThat(openKind).as("all blocks closed before message_delta: " + at).isNull();
                    assertThat(json.path("delta").path("stop_reason").asText()).as(at)
                            .isIn("end_turn", "max_tokens", "tool_use", "refusal");
                    assertThat(json.path("delta").path("stop_sequence").isNull()).as(at).isTrue();
                    assertThat(json.path("usage").path("output_tokens").isIntegralNumber()).as(at).isTrue();
                    deltaSeen = true;
                }
                case "message_stop" -> {
                    assertThat(deltaSeen).as("message_delta before message_stop: " + at).isTrue();
                    ended = true;
                }
                default -> throw new AssertionError("unexpected event type " + type + ": " + at);
            }
        }
        assertThat(ended).as("terminated by message_stop or error: " + events).isTrue();
    }

    private static JsonNode parse(String json, String at) {
        try {
            return MessagesRequestToChat.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + at, e);
        }
    }
}
