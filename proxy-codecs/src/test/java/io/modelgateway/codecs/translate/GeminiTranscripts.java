package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Golden transcripts of the Gemini direction (resources under {@code gemini/}): Gemini requests the translators
 * write, and Gemini answers and {@code alt=sse} streams they read, each beside what a chat or messages caller is
 * sent. Streams run through the real {@link SseEventScanner} as in the gateway, cut wherever the test says; the
 * generated ids are written as {@code msg_ID}, {@code toolu_ID} and {@code call_ID}.
 */
final class GeminiTranscripts {
    static final String ID = ChatCallerTranscripts.ID;
    static final long CREATED = ChatCallerTranscripts.CREATED;
    static final String MODEL = "gemini-fallback";
    private static final Pattern MSG_ID = Pattern.compile("msg_[0-9A-Za-z]{24}");
    private static final Pattern TOOLU_ID = Pattern.compile("toolu_[0-9A-Za-z]{24}");
    private static final Pattern CALL_ID = Pattern.compile("call_[0-9A-Za-z]{24}");

    private GeminiTranscripts() {
    }

    static String text(String path) {
        try (InputStream in = GeminiTranscripts.class.getResourceAsStream("gemini/" + path)) {
            if (in == null) {
                throw new IllegalArgumentException("no resource gemini/" + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] bytes(String path) {
        return text(path).getBytes(StandardCharsets.UTF_8);
    }

    static String normaliseIds(String s) {
        return CALL_ID.matcher(TOOLU_ID.matcher(MSG_ID.matcher(s).replaceAll("msg_ID")).replaceAll("toolu_ID"))
                .replaceAll("call_ID");
    }

    static GeminiStreamToChat chatStream(boolean includeUsage, boolean excludeReasoning) {
        return new GeminiStreamToChat(ByteBufAllocator.DEFAULT, ID, CREATED, MODEL, includeUsage, excludeReasoning);
    }

    static GeminiStreamToMessages messagesStream() {
        return new GeminiStreamToMessages(ByteBufAllocator.DEFAULT, MODEL);
    }

    /**
     * Feeds {@code upstream}, cut at the given offsets into separate direct buffers, through an SseEventScanner into
     * {@code t} as the gateway does (the unfinished remainder as a last event, then a clean end); returns the
     * caller's events, every buffer released, ids normalised.
     */
    static List<String> events(StreamTranslator t, byte[] upstream, int... cuts) {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        List<String> out = new ArrayList<>();
        boolean[] ended = {false};
        java.util.function.Consumer<ByteBuf> sink = b -> {
            try {
                assertThat(ended[0]).as("nothing after the terminal event").isFalse();
                String e = b.toString(StandardCharsets.UTF_8);
                ended[0] = e.equals("data: [DONE]\n\n") || e.startsWith("data: {\"error\"")
                        || e.startsWith("event: message_stop\n") || e.startsWith("event: error\n");
                assertThat(t.finished()).as("finished() once the terminal event is out").isEqualTo(ended[0]);
                out.add(normaliseIds(e));
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
        try {
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
        } finally {
            scanner.release();
        }
        t.onEnd(true, sink);
        assertThat(t.finished()).as("the stream ends with its terminator or an error").isTrue();
        return out;
    }

    static String stream(StreamTranslator t, byte[] upstream, int... cuts) {
        return String.join("", events(t, upstream, cuts));
    }
}
