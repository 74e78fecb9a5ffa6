package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Golden transcripts of the chat → Anthropic direction (resources under {@code c2a/}), and JSON tree
 * comparison that ignores key order and how a number is spelled ({@code 1.0} = {@code 1}).
 */
final class ChatCallerTranscripts {
    static final String ID = "chatcmpl-TEST0000000000000000000000";
    static final long CREATED = 1787300000L;
    static final String FALLBACK_MODEL = "claude-fallback";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ChatCallerTranscripts() {
    }

    /** A resource under {@code c2a/} as text. */
    static String text(String path) {
        try (InputStream in = ChatCallerTranscripts.class.getResourceAsStream("c2a/" + path)) {
            if (in == null) {
                throw new IllegalArgumentException("no resource c2a/" + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] bytes(String path) {
        return text(path).getBytes(StandardCharsets.UTF_8);
    }

    static ByteBuf buf(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    static JsonNode tree(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads and releases. */
    static String string(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }

    /** The same JSON tree, keys sorted and numbers normalised, pretty-printed for a readable diff. */
    static String canonical(String json) {
        try {
            return JSON.writeValueAsString(normalise(tree(json)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void assertSameJson(String actual, String expected) {
        assertThat(actual).as("compact JSON: no raw line breaks").doesNotContain("\n");
        assertThat(canonical(actual)).isEqualTo(canonical(expected));
    }

    /** A stream translator with the transcripts' fixed id, time and fallback model. */
    static MessagesStreamToChat streamTranslator(boolean includeUsage, boolean exclude, boolean json) {
        return new MessagesStreamToChat(ByteBufAllocator.DEFAULT, ID, CREATED, FALLBACK_MODEL, includeUsage, exclude,
                json);
    }

    /**
     * Feeds {@code upstream}, cut at the given offsets into separate direct buffers, through an SseEventScanner
     * into {@code t} as the gateway does (the unfinished remainder as a last event, then a clean end), and
     * returns the caller's bytes. Each output event is checked for well-formedness; every buffer is released.
     */
    static String stream(StreamTranslator t, byte[] upstream, int... cuts) {
        return stream(true, t, upstream, cuts);
    }

    /** As above; {@code validate} false skips the per-event JSON check (for the thousands of cut runs). */
    static String stream(boolean validate, StreamTranslator t, byte[] upstream, int... cuts) {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        StringBuilder out = new StringBuilder();
        boolean[] terminal = {false};
        java.util.function.Consumer<ByteBuf> sink = b -> {
            try {
                assertThat(terminal[0]).as("nothing after the terminal event").isFalse();
                String e = b.toString(StandardCharsets.UTF_8);
                if (validate) {
                    assertWellFormedChatEvent(e);
                }
                terminal[0] = isTerminal(e);
                assertThat(t.finished()).as("finished() once the terminal event is out").isEqualTo(terminal[0]);
                out.append(e);
            } finally {
                b.release();
            }
        };
        java.util.function.Consumer<ByteBuf> onEvent = e -> {
            try {
                t.onEvent(e, sink);
            } finally {
                e.release();
            }
        };
        int from = 0;
        for (int i = 0; i <= cuts.length; i++) {
            int to = i < cuts.length ? cuts[i] : upstream.length;
            if (to > from) {
                ByteBuf in = Unpooled.directBuffer(to - from).writeBytes(upstream, from, to - from);
                try {
                    scanner.feed(in, onEvent);
                } finally {
                    in.release();
                }
            }
            from = Math.max(from, to);
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            onEvent.accept(rest);
        }
        scanner.release();
        t.onEnd(true, sink);
        assertThat(t.finished()).isTrue();
        assertThat(terminal[0]).as("the stream ends with [DONE] or an error event").isTrue();
        return out.toString();
    }

    private static boolean isTerminal(String s) {
        return s.equals("data: [DONE]\n\n") || s.startsWith("data: {\"error\"");
    }

    /** One SSE event of the OpenAI style: a single {@code data:} line of compact JSON (or [DONE]), or the keep-alive comment. */
    static void assertWellFormedChatEvent(String e) {
        if (e.equals(": keep-alive\n\n")) {
            return;
        }
        assertThat(e).startsWith("data: ").endsWith("\n\n");
        String payload = e.substring(6, e.length() - 2);
        assertThat(payload).doesNotContain("\n").doesNotContain("\r");
        if (payload.equals("[DONE]")) {
            return;
        }
        JsonNode json = tree(payload);
        assertThat(json.isObject()).as(payload).isTrue();
        if (json.has("error")) {
            assertThat(json.get("error").fieldNames()).toIterable().containsExactly("message", "type", "param", "code");
        } else {
            assertThat(json.get("object").asText()).isEqualTo("chat.completion.chunk");
            assertThat(json.get("choices").isArray()).isTrue();
        }
    }

    private static JsonNode normalise(JsonNode n) {
        if (n.isObject()) {
            List<String> names = new ArrayList<>();
            n.fieldNames().forEachRemaining(names::add);
            Collections.sort(names);
            ObjectNode o = NODES.objectNode();
            for (String name : names) {
                o.set(name, normalise(n.get(name)));
            }
            return o;
        }
        if (n.isArray()) {
            ArrayNode a = NODES.arrayNode();
            n.forEach(e -> a.add(normalise(e)));
            return a;
        }
        if (n.isNumber()) {
            return NODES.numberNode(n.decimalValue().stripTrailingZeros());
        }
        return n;
    }
}
