package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.translate.Usage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StreamUsageTrackerTest {

    @Test
    void openAiStream_usageChunkIsRecognisedAndCounted() {
        StreamUsageTracker t = new StreamUsageTracker();
        assertThat(feed(t, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":null}\n\n")).isFalse();
        assertThat(feed(t, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a \\\"usage\\\":{\\\"x\\\":1}\"}}],\"usage\":null}\n\n")).isFalse();
        assertThat(t.counts()).isNull();
        assertThat(feed(t, "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n")).isTrue();
        assertThat(feed(t, "data: [DONE]\n\n")).isFalse();
        Usage u = t.counts().usage();
        assertThat(u.promptTokens()).isEqualTo(9);
        assertThat(u.completionTokens()).isEqualTo(2);
        assertThat(t.otherEvents()).isEqualTo(3);
    }

    @Test
    void usageOnAChunkWithChoices_isCountedButNotUsageOnly() {
        StreamUsageTracker t = new StreamUsageTracker();
        assertThat(feed(t, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\r\n\r\n")).isFalse();
        assertThat(t.counts().usage().totalTokens()).isEqualTo(2);
    }

    @Test
    void anthropicStream_inputFromMessageStart_outputFromMessageDelta() {
        StreamUsageTracker t = new StreamUsageTracker();
        assertThat(feed(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],"
                + "\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":4,\"output_tokens\":1}}}\n\n")).isFalse();
        feed(t, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n");
        assertThat(t.counts().usage().completionTokens()).isEqualTo(1);
        feed(t, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\n\n");
        Usage u = t.counts().usage();
        assertThat(u.promptTokens()).isEqualTo(24);
        assertThat(u.completionTokens()).isEqualTo(15);
    }

    @Test
    void openAiUsageChunk_absurdCounts_stillRecognisedButNotBelieved() {
        for (String count : new String[] {"1000000000000000000", "9223372036854775807", "99999999999999999999999",
            "-3", "1e18", "2.5"}) {
            StreamUsageTracker t = new StreamUsageTracker();
            feed(t, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n");

            boolean usageOnly = feed(t, "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":" + count
                    + ",\"completion_tokens\":2,\"total_tokens\":" + count + "}}\n\n");

            assertThat(usageOnly).as("%s: still the usage chunk, withheld from a caller who did not ask", count)
                    .isTrue();
            assertThat(t.counts().implausible()).as(count).isTrue();
            assertThat(t.counts().implausibleField()).isEqualTo("prompt_tokens");
            assertThat(t.complete()).isTrue();
            assertThat(t.otherEvents()).isEqualTo(1);
        }
    }

    @Test
    void anthropicStream_longMaxInMessageStart_orAFloatInMessageDelta_isNotBelieved() {
        StreamUsageTracker start = new StreamUsageTracker();
        feed(start, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],"
                + "\"usage\":{\"input_tokens\":9223372036854775807,\"output_tokens\":1}}}\n\n");
        feed(start, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                + "\"usage\":{\"output_tokens\":15}}\n\n");
        StreamUsageTracker delta = new StreamUsageTracker();
        feed(delta, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],"
                + "\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n");
        feed(delta, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                + "\"usage\":{\"output_tokens\":1.0E18}}\n\n");

        assertThat(start.counts().implausible()).isTrue();
        assertThat(start.counts().implausibleField()).isEqualTo("input_tokens");
        assertThat(start.counts().usage().promptTokens()).as("the absurd count was not stored").isZero();
        assertThat(delta.counts().implausible()).isTrue();
        assertThat(delta.counts().implausibleField()).isEqualTo("output_tokens");
        assertThat(delta.counts().usage().completionTokens()).isEqualTo(1);
    }

    @Test
    void usageEventTheParserCannotRead_makesTheUsageUnknown() {
        StreamUsageTracker t = new StreamUsageTracker();
        feed(t, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\n");

        // A number past the parser's own length limit: the event cannot be read, so neither can its usage.
        feed(t, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + "9".repeat(2000) + "}}\n\n");

        assertThat(t.counts().implausible()).isTrue();
        assertThat(t.counts().implausibleField()).isEqualTo("usage");
    }

    /**
     * The payload is the event's data lines joined by LF, whatever the line ends (CR LF, CR, LF), with or without the
     * space after the colon, between other fields; the usage split over three data lines is read whole, and its
     * non-ASCII string values do not disturb it.
     */
    @Test
    void usageEvent_dataOverSeveralLinesAndAnyLineEnds_isParsed() {
        String[] ends = {"\n", "\r\n", "\r"};
        for (String nl : ends) {
            StreamUsageTracker t = new StreamUsageTracker();
            String event = "event: message_delta" + nl + "id: 7" + nl
                    + "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"note\":\"caf\u00e9 \u2603\"}," + nl
                    + "data:\"usage\":{\"output_tokens\":" + nl
                    + "data: 15}}" + nl + nl;
            assertThat(feed(t, event)).isFalse();
            assertThat(t.complete()).as("line end %s", nl.replace("\r", "CR").replace("\n", "LF")).isTrue();
            assertThat(t.counts().usage().output()).isEqualTo(15);
        }
        StreamUsageTracker one = new StreamUsageTracker();
        assertThat(feed(one, "data:{\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":1}}\r\n\r\n"))
                .as("one data line, no space, CR LF").isTrue();
        assertThat(one.counts().usage().promptTokens()).isEqualTo(4);
    }

    /**
     * A usage chunk with a byte that is not UTF-8 in one of its strings (a lone 0xFF): Jackson's byte parser refuses
     * it, a text decode replaces it, and the usage is read as a client decoding the stream as text would read it.
     */
    @Test
    void usageEventWithABadUtf8Byte_isStillRead() {
        StreamUsageTracker t = new StreamUsageTracker();
        byte[] head = "data: {\"choices\":[],\"note\":\"a".getBytes(StandardCharsets.US_ASCII);
        byte[] tail = "b\",\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\n"
                .getBytes(StandardCharsets.US_ASCII);
        ByteBuf b = Unpooled.buffer().writeBytes(head).writeByte(0xFF).writeBytes(tail);
        try {
            assertThat(t.onEvent(b)).as("a usage-only chunk").isTrue();
        } finally {
            b.release();
        }
        assertThat(t.counts().implausible()).isFalse();
        assertThat(t.counts().usage().promptTokens()).isEqualTo(9);
        assertThat(t.counts().usage().completionTokens()).isEqualTo(2);
        assertThat(t.otherEvents()).isZero();
    }

    @Test
    void usageObjectAt_findsOnlyRealKeysWithObjectValues() {
        assertThat(at("{\"usage\":null}")).isEqualTo(-1);
        assertThat(at("{\"x\":\"\\\"usage\\\":{}\"}")).isEqualTo(-1);
        assertThat(at("{\"x\":\"\\\\\",\"usage\" : {}}")).isPositive();
        assertThat(at("{\"usage\"")).isEqualTo(-1);
        assertThat(at("{\"usageMetadata\":{\"x\":1}}")).as("Gemini's key").isEqualTo(1);
        assertThat(at("{\"usageMetadatax\":{},\"usageMeta\":{},\"xusage\":{}}")).isEqualTo(-1);
        assertThat(at("{\"a\":\"usage\",\"u\":\"\\\"usage\",\"usage\":{}}")).isEqualTo(27);
        assertThat(at("{\"usage\":{\"n\":1},\"b\":\"\\\"usage\\\":{}\"}")).as("the key, not the string after it")
                .isEqualTo(1);
    }

    /**
     * The search jumps from quote to quote backwards: the key is found at the same place whatever the buffer — a
     * slice starting inside a larger buffer, direct memory, or a composite cut at every byte — and quotes of other
     * keys and of strings before and after it are passed over. The expected index is the text's own last
     * {@code "usage":{} (every case is ASCII, so characters are bytes).
     */
    @Test
    void usageObjectAt_sameIndexInSlicesDirectAndCompositeBuffers() {
        String[] events = {
            "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                    + "\"usage\":{\"output_tokens\":15}}\n\n",
            "data: {\"a\":\"\\\"usage\\\":{}\",\"usage\":{\"x\":1},\"b\":\"q\\\"\"}\n\n",
        };
        for (String e : events) {
            int expected = e.lastIndexOf("\"usage\":{");
            byte[] bytes = e.getBytes(StandardCharsets.US_ASCII);
            ByteBuf wide = Unpooled.buffer(bytes.length + 10).writeZero(7).writeBytes(bytes).writeZero(3);
            ByteBuf direct = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
            try {
                ByteBuf slice = wide.slice(7, bytes.length);
                assertThat(StreamUsageTracker.usageObjectAt(slice)).as(e).isEqualTo(expected);
                assertThat(StreamUsageTracker.usageObjectAt(direct)).as(e).isEqualTo(expected);
                for (int cut = 0; cut <= bytes.length; cut++) {
                    CompositeByteBuf c = Unpooled.compositeBuffer();
                    c.addComponent(true, Unpooled.wrappedBuffer(bytes, 0, cut));
                    c.addComponent(true, Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
                    try {
                        assertThat(StreamUsageTracker.usageObjectAt(c)).as(e + " cut at " + cut).isEqualTo(expected);
                    } finally {
                        c.release();
                    }
                }
            } finally {
                wide.release();
                direct.release();
            }
        }
        String none = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                + "\"delta\":{\"type\":\"text_delta\",\"text\":\"usage\"}}\n\n";
        assertThat(at(none)).isEqualTo(-1);
    }

    /**
     * The word-at-a-time search against a plain one written here with {@code String} methods (the key's rules as the
     * search's comment gives them: the last {@code "usage"} or {@code "usageMetadata"} key, not after an odd run of
     * backslashes, then a colon; its index when the value opens an object, else -1), on random texts made of the
     * pieces that matter — quotes, backslashes, {@code u}, parts and whole copies of the key, colons, braces, spaces —
     * of every length from 0 to 90, so that keys and near-keys fall at every offset of the eight-byte words and across
     * their edges.
     */
    @Test
    void usageObjectAt_agreesWithAPlainSearch_onRandomTexts() {
        String[] pieces = {"\"", "\\", "u", "usage", "\"usage\"", "\"usage\":{", "\"usage\": {}", "\"usage\":null",
            "\"usageMetadata\":{", "Metadata", ":", " ", "{", "}", "x", "\"u", "\\\"", "\t"};
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        int found = 0;
        for (int n = 0; n < 200_000; n++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(91);
            while (text.length() < length) {
                text.append(pieces[random.nextInt(pieces.length)]);
            }
            String s = text.substring(0, length);
            int expected = plainUsageObjectAt(s);
            found += expected >= 0 ? 1 : 0;
            byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
            assertThat(StreamUsageTracker.usageObjectAt(bytes, bytes.length)).as(s).isEqualTo(expected);
            byte[] longer = java.util.Arrays.copyOf(bytes, bytes.length + 9);
            java.util.Arrays.fill(longer, bytes.length, longer.length, (byte) '"');
            assertThat(StreamUsageTracker.usageObjectAt(longer, bytes.length)).as("bytes past the end: " + s)
                    .isEqualTo(expected);
        }
        assertThat(found).as("texts holding a real key").isGreaterThan(10_000);
    }

    private static int plainUsageObjectAt(String s) {
        for (int q = s.length() - 1; q >= 0; q--) {
            int after;
            if (s.startsWith("\"usage\"", q)) {
                after = q + 7;
            } else if (s.startsWith("\"usageMetadata\"", q)) {
                after = q + 15;
            } else {
                continue;
            }
            int backslashes = 0;
            while (q - backslashes - 1 >= 0 && s.charAt(q - backslashes - 1) == '\\') {
                backslashes++;
            }
            if (backslashes % 2 == 1) {
                continue;
            }
            String rest = s.substring(after).stripLeading();
            if (!rest.startsWith(":")) {
                continue;
            }
            return rest.substring(1).stripLeading().startsWith("{") ? q : -1;
        }
        return -1;
    }

    /**
     * Contract 12.8: a Responses API stream's usage is on its final event only ({@code response.completed},
     * {@code response.incomplete}), inside {@code response}; the earlier events carry {@code "usage":null}. Its
     * {@code input_tokens} include the cached tokens, as OpenAI's {@code prompt_tokens} do.
     */
    @Test
    void responsesStream_usageFromTheFinalResponse_cachedInsideInput() {
        StreamUsageTracker t = new StreamUsageTracker();
        feed(t, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":"
                + "{\"id\":\"resp_1\",\"output\":[],\"usage\":null}}\n\n");
        feed(t, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,"
                + "\"delta\":\"the \\\"usage\\\":{\\\"input_tokens\\\":1}\"}\n\n");
        assertThat(t.counts()).isNull();
        assertThat(t.complete()).isFalse();
        assertThat(feed(t, "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":9,"
                + "\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"type\":\"message\"}],"
                + "\"usage\":{\"input_tokens\":1400,\"input_tokens_details\":{\"cached_tokens\":1000},"
                + "\"output_tokens\":50,\"output_tokens_details\":{\"reasoning_tokens\":20},\"total_tokens\":1450}}}\n\n"))
                .as("never withheld: a Responses event is not a chat usage chunk").isFalse();
        assertThat(t.complete()).isTrue();
        Usage u = t.counts().usage();
        assertThat(u.input()).as("uncached input").isEqualTo(400);
        assertThat(u.cacheRead()).isEqualTo(1000);
        assertThat(u.cacheCreation()).isZero();
        assertThat(u.output()).isEqualTo(50);
        assertThat(u.reasoning()).isEqualTo(20);
    }

    @Test
    void responsesStream_incompleteFinalEvent_countsToo() {
        StreamUsageTracker t = new StreamUsageTracker();
        feed(t, "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"sequence_number\":5,"
                + "\"response\":{\"status\":\"incomplete\",\"usage\":{\"input_tokens\":12,\"input_tokens_details\":"
                + "{\"cached_tokens\":0},\"output_tokens\":16,\"output_tokens_details\":{\"reasoning_tokens\":0},"
                + "\"total_tokens\":28}}}\n\n");
        assertThat(t.complete()).isTrue();
        assertThat(t.counts().usage().totalTokens()).isEqualTo(28);
    }

    private static int at(String s) {
        ByteBuf b = Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
        try {
            return StreamUsageTracker.usageObjectAt(b);
        } finally {
            b.release();
        }
    }

    private static boolean feed(StreamUsageTracker t, String event) {
        ByteBuf b = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
        try {
            return t.onEvent(b);
        } finally {
            b.release();
        }
    }
}
