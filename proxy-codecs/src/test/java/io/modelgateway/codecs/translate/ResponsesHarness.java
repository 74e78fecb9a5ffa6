package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.resource;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Responses API translators as the proxy drives them, for the golden, cut and fuzz tests: the request
 * translators with a fixed response id and time, and upstream stream bytes through {@link SseEventScanner} into
 * the stream translator of a translated request (events borrowed and released, the remainder handed over, then
 * {@code onEnd}), the caller's events collected as text. Generated item ids are normalised ({@code msg_ID},
 * {@code fc_ID}, {@code rs_ID}, {@code call_ID}).
 *
 * <p>Golden files are checked in and were reviewed by hand against the openai SDK's types; {@code
 * -Dgolden.write=true} rewrites a missing or differing one instead of failing (for review in the diff).
 */
final class ResponsesHarness {
    static final String DIR = "r/";
    static final String RESPONSE_ID = "resp_0123456789abcdefghijklmn";
    static final long CREATED_AT = 1_767_225_600L;
    private static final Pattern ITEM_ID = Pattern.compile("\\b(msg|fc|rs|call)_[0-9A-Za-z]{24}\\b");
    private static final Pattern EVENT = Pattern.compile("event: ([a-z_.]+)\ndata: ([^\r\n]*)\n\n");

    /** The request an answer translator is made for: function tools, and text.format for json answers. */
    private static final byte[] ANSWER_REQUEST = ("{\"model\":\"gpt-caller\",\"input\":\"Hi\",\"tools\":[{\"type\":"
            + "\"function\",\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":"
            + "{\"type\":\"string\"}}}}]}").getBytes(StandardCharsets.UTF_8);
    private static final byte[] JSON_ANSWER_REQUEST = ("{\"model\":\"gpt-caller\",\"input\":\"Hi\",\"text\":{\"format\":"
            + "{\"type\":\"json_schema\",\"name\":\"w\",\"schema\":{\"type\":\"object\"}}}}")
            .getBytes(StandardCharsets.UTF_8);

    private ResponsesHarness() {
    }

    enum Upstream { CHAT, ANTHROPIC }

    static TranslatedRequest translate(Upstream upstream, byte[] request, ByteBufAllocator alloc)
            throws TranslationException {
        ByteBuf body = Unpooled.wrappedBuffer(request);
        if (upstream == Upstream.CHAT) {
            return ResponsesRequestToChat.translate(alloc, body, new ResponsesRequestToChatOptions("gpt-up", true,
                    true, false, 1 << 20), RESPONSE_ID, CREATED_AT);
        }
        return ResponsesRequestToMessages.translate(alloc, body, new ResponsesRequestToMessagesOptions("claude-up",
                8192, false, 1 << 20), RESPONSE_ID, CREATED_AT);
    }

    /** The answer translator of the request golden {@code name} needs (json answers need text.format). */
    static ResponseTranslator answerTranslator(Upstream upstream, String name) {
        try {
            TranslatedRequest t = translate(upstream, name.startsWith("json-response") ? JSON_ANSWER_REQUEST
                    : ANSWER_REQUEST, ByteBufAllocator.DEFAULT);
            t.body().release();
            return t.response();
        } catch (TranslationException e) {
            throw new AssertionError(e);
        }
    }

    /** Feeds {@code pieces} (each its own direct buffer) and ends the stream; returns the caller's events. */
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

    static String normaliseIds(String s) {
        return ITEM_ID.matcher(s).replaceAll("$1_ID");
    }

    static String text(List<String> events) {
        return normaliseIds(String.join("", events));
    }

    /** Compares with the golden file, or (with -Dgolden.write=true) writes it. */
    static void assertGolden(String actual, String name) {
        if (Boolean.getBoolean("golden.write")) {
            try {
                Path p = Path.of("src/test/resources/io/modelgateway/codecs/translate/" + DIR + name);
                if (!Files.exists(p) || !Files.readString(p).equals(actual)) {
                    Files.writeString(p, actual);
                }
                return;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        assertThat(actual).as(name).isEqualTo(new String(resource(DIR + name), StandardCharsets.UTF_8));
    }

    /**
     * Contract 12.5: every event is {@code event: <type>\ndata: <json>\n\n} (or a keep-alive comment) with the JSON's
     * {@code type} = the event name and {@code sequence_number} 0, 1, 2, …; the first two are
     * {@code response.created} and {@code response.in_progress}; items open and close in order, their deltas inside
     * them; the last event is {@code response.completed}, {@code response.incomplete} or {@code response.failed},
     * and the final response's {@code output} holds every item that was added.
     */
    static void assertWellFormed(List<String> events) {
        long sequence = 0;
        boolean ended = false;
        int itemsAdded = 0;
        int openItem = -1;
        for (int i = 0; i < events.size(); i++) {
            String e = events.get(i);
            String at = "event " + i + " of " + events;
            if (e.startsWith(":")) {
                continue;
            }
            assertThat(ended).as("nothing after the final event: " + at).isFalse();
            Matcher m = EVENT.matcher(e);
            assertThat(m.matches()).as("framing of " + at).isTrue();
            String type = m.group(1);
            JsonNode json;
            try {
                json = ResponsesRequestToChat.JSON.readTree(m.group(2));
            } catch (IOException ex) {
                throw new AssertionError("not JSON: " + at, ex);
            }
            assertThat(json.path("type").asText()).as("type = event name: " + at).isEqualTo(type);
            assertThat(json.path("sequence_number").asLong(-1)).as("sequence_number: " + at).isEqualTo(sequence);
            if (sequence == 0) {
                assertThat(type).as("every stream begins with response.created (the SDKs' helpers need it): " + at)
                        .isEqualTo("response.created");
            } else if (sequence == 1) {
                assertThat(type).as(at).isEqualTo("response.in_progress");
            }
            sequence++;
            switch (type) {
                case "response.output_item.added" -> {
                    assertThat(openItem).as("one item open at a time: " + at).isEqualTo(-1);
                    assertThat(json.path("output_index").asInt()).as(at).isEqualTo(itemsAdded);
                    openItem = itemsAdded++;
                }
                case "response.output_item.done" -> {
                    assertThat(json.path("output_index").asInt()).as(at).isEqualTo(openItem);
                    openItem = -1;
                }
                case "response.completed", "response.incomplete", "response.failed" -> {
                    ended = true;
                    JsonNode response = json.path("response");
                    assertThat(response.path("id").asText()).isEqualTo(RESPONSE_ID);
                    assertThat(response.path("output").size()).as("final output: " + at).isEqualTo(itemsAdded);
                    if (!type.equals("response.failed")) {
                        assertThat(openItem).as("every item closed before " + at).isEqualTo(-1);
                        assertThat(response.path("usage").isObject()).as(at).isTrue();
                    }
                }
                case "response.created", "response.in_progress" -> assertThat(itemsAdded).as(at).isZero();
                default -> assertThat(openItem).as("a delta inside an open item: " + at).isGreaterThanOrEqualTo(0);
            }
        }
        assertThat(ended).as("the stream ends with its final event: " + events).isTrue();
    }
}
