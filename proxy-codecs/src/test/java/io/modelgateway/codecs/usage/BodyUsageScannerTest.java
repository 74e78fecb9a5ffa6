package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.translate.Usage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BodyUsageScannerTest {
    static final String CHAT = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
            + "\"message\":{\"role\":\"assistant\",\"content\":\"say \\\"usage\\\":{\\\"prompt_tokens\\\":999} ok\"},"
            + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19,"
            + "\"prompt_tokens_details\":{\"cached_tokens\":4},\"completion_tokens_details\":{\"reasoning_tokens\":2}},"
            + "\"system_fingerprint\":\"fp\"}";

    @Test
    void chatAnswer_cutAtEveryByte_findsTheTopLevelUsage() {
        byte[] bytes = CHAT.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= bytes.length; cut++) {
            BodyUsageScanner s = new BodyUsageScanner();
            s.feed(Unpooled.wrappedBuffer(bytes, 0, cut));
            s.feed(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            Usage u = s.counts().usage();
            assertThat(u.promptTokens()).as("cut at %d", cut).isEqualTo(12);
            assertThat(u.completionTokens()).isEqualTo(7);
            assertThat(u.cacheRead()).isEqualTo(4);
            assertThat(u.reasoning()).isEqualTo(2);
        }
    }

    /**
     * Embeddings answers are almost all digits or one long base64 string, which the scanner skips through: the usage
     * after them, strings ending in escaped backslashes and quotes, and brackets inside strings are still seen
     * right wherever the body is cut.
     */
    @Test
    void embeddingsAnswers_floatAndBase64_cutAnywhere_usageAndShapeStillRight() {
        StringBuilder floats = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            floats.append(i == 0 ? "" : ",").append(i % 3 == 0 ? "-" : "").append("0.0").append(i * 7919 % 100000)
                    .append(i % 5 == 0 ? "e-3" : "");
        }
        String base64 = "AAAAvQ+/Pz8=".repeat(150);
        for (String vector : java.util.List.of("[" + floats + "]", "\"" + base64 + "\"")) {
            String body = "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":"
                    + vector + "}],\"note\":\"a \\\\\\\"quoted\\\" ]} usage\\\\\",\"model\":\"e\","
                    + "\"usage\":{\"prompt_tokens\":8,\"total_tokens\":8}}";
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            for (int cut = 0; cut <= bytes.length; cut += 7) {
                BodyUsageScanner s = new BodyUsageScanner();
                s.feed(Unpooled.wrappedBuffer(bytes, 0, cut));
                assertThat(s.wellFormed()).as("prefix of %d bytes", cut).isEqualTo(cut == bytes.length);
                s.feed(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
                assertThat(s.wellFormed()).as("cut at %d", cut).isTrue();
                assertThat(s.counts().usage().promptTokens()).as("cut at %d", cut).isEqualTo(8);
            }
            BodyUsageScanner glued = new BodyUsageScanner();
            glued.feed(Unpooled.wrappedBuffer(bytes));
            glued.feed(Unpooled.wrappedBuffer("{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(glued.wellFormed()).as("two answers glued together").isFalse();
        }
    }

    /**
     * The skips read eight bytes a step: a quote, an escape or a bracket is found in every one of the eight places of
     * a word, after text with multi-byte characters (whose bytes are above 0x7F, never a stop), and a usage-like
     * object inside a string or a nested one never counts.
     */
    @Test
    void stopsAtEveryPlaceInAWord_usageAndShapeStillRight() {
        for (int pad = 0; pad < 24; pad++) {
            String text = "é😀x".repeat(pad / 3) + "y".repeat(pad % 3);
            String json = "{\"a\":\"" + text + "\\\"{[\\\\\",\"n\":[" + "7,".repeat(pad) + "[[1],{\"b\":\""
                    + text + "\"}]],\"m\":{\"usage\":{\"prompt_tokens\":99}},\"s\":\"\\\"usage\\\":{}\","
                    + "\"usage\":{\"prompt_tokens\":" + (pad + 1) + ",\"completion_tokens\":5}}";
            BodyUsageScanner whole = new BodyUsageScanner();
            whole.feed(Unpooled.wrappedBuffer(json.getBytes(StandardCharsets.UTF_8)));

            assertThat(whole.counts().usage().promptTokens()).as(json).isEqualTo(pad + 1);
            assertThat(whole.counts().usage().completionTokens()).isEqualTo(5);
            assertThat(whole.wellFormed()).as(json).isTrue();
            assertThat(wellFormed(json.substring(0, json.length() - 1))).as("cut short: " + json).isFalse();
            assertThat(wellFormed(json + "]")).as("one bracket too many: " + json).isFalse();
        }
    }

    @Test
    void byteByByte_sameAsWhole() {
        BodyUsageScanner s = new BodyUsageScanner();
        for (byte b : CHAT.getBytes(StandardCharsets.UTF_8)) {
            s.feed(Unpooled.wrappedBuffer(new byte[] {b}));
        }
        assertThat(s.counts().usage().totalTokens()).isEqualTo(19);
    }

    @Test
    void anthropicMessage_usageWithCache_isTotalInput() {
        Usage u = scan("{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"usage\"}],"
                + "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":3,"
                + "\"cache_read_input_tokens\":5,\"output_tokens\":8}}");
        assertThat(u.promptTokens()).isEqualTo(18);
        assertThat(u.completionTokens()).isEqualTo(8);
    }

    @Test
    void usageFirst_andNestedUsageKeys_onlyTheTopLevelCounts() {
        Usage u = scan("{ \"usage\" : {\"prompt_tokens\":3,\"total_tokens\":3}, \"data\":[{\"usage\":{\"prompt_tokens\":50}},"
                + "{\"embedding\":[0.1,-2e-3,{\"x\":\"}]\"}]}],\"model\":\"usage\"}");
        assertThat(u.promptTokens()).isEqualTo(3);
        assertThat(u.completionTokens()).isZero();
    }

    @Test
    void directBuffersLargerThanTheScratchArray_sameAsHeap() {
        StringBuilder big = new StringBuilder("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < 3000; i++) {
            big.append(i == 0 ? "" : ",").append("{\"index\":").append(i).append(",\"embedding\":[0.0123,-0.456,7.5e-3]}");
        }
        big.append("],\"usage\":{\"prompt_tokens\":77,\"total_tokens\":77}}");
        byte[] bytes = big.toString().getBytes(StandardCharsets.UTF_8);
        assertThat(bytes.length).isGreaterThan(40_000);
        BodyUsageScanner s = new BodyUsageScanner();
        ByteBuf direct = io.netty.buffer.ByteBufAllocator.DEFAULT.directBuffer(bytes.length);
        try {
            direct.writeBytes(bytes);
            s.feed(direct.slice(0, 20_000));
            s.feed(direct.slice(20_000, bytes.length - 20_000));
        } finally {
            direct.release();
        }
        assertThat(s.counts().usage().promptTokens()).isEqualTo(77);
    }

    @Test
    void oversizedUsageObject_isGivenUp_andALaterOneStillFound() {
        String huge = "{\"usage\":{\"x\":\"" + "a".repeat(10_000) + "\"},\"data\":[],"
                + "\"usage\":{\"prompt_tokens\":4}}";
        assertThat(scan(huge).promptTokens()).isEqualTo(4);
        assertThat(scanCounts("{\"usage\":{\"x\":\"" + "a".repeat(10_000) + "\"}}")).isNull();
    }

    @Test
    void noUsage_orNullUsage_isNull() {
        assertThat(scanCounts("{\"id\":\"x\",\"usage\":null}")).isNull();
        assertThat(scanCounts("{\"id\":\"usage\",\"choices\":[]}")).isNull();
        assertThat(scanCounts("not json at all")).isNull();
    }

    @Test
    void absurdCounts_inEitherStyle_areNotBelieved() {
        String[] counts = {"1000000000000000000", "999999999999999999", "9223372036854775807",
            "99999999999999999999999", "-5", "1e18", "12.5"};
        for (String count : counts) {
            UsageCounts chat = scanCounts("{\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,"
                    + "\"completion_tokens\":" + count + ",\"total_tokens\":19}}");
            UsageCounts message = scanCounts("{\"id\":\"m\",\"type\":\"message\",\"content\":[],\"usage\":"
                    + "{\"input_tokens\":" + count + ",\"output_tokens\":8}}");

            assertThat(chat.implausible()).as(count).isTrue();
            assertThat(chat.implausibleField()).isEqualTo("completion_tokens");
            assertThat(chat.usage().completionTokens()).as("not stored").isZero();
            assertThat(message.implausible()).as(count).isTrue();
            assertThat(message.implausibleField()).isEqualTo("input_tokens");
            assertThat(message.usage().promptTokens()).isZero();
        }
    }

    @Test
    void onlyAbsurdCounts_areStillReported_notTakenForNoUsage() {
        UsageCounts c = scanCounts("{\"usage\":{\"prompt_tokens\":-1,\"completion_tokens\":1e30}}");

        assertThat(c).isNotNull();
        assertThat(c.implausible()).isTrue();
        assertThat(c.known()).isFalse();
    }

    private static Usage scan(String json) {
        return scanCounts(json).usage();
    }

    private static UsageCounts scanCounts(String json) {
        BodyUsageScanner s = new BodyUsageScanner();
        ByteBuf b = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        try {
            s.feed(b);
        } finally {
            b.release();
        }
        return s.counts();
    }

    private static boolean wellFormed(String... pieces) {
        BodyUsageScanner s = new BodyUsageScanner();
        for (String p : pieces) {
            s.feed(Unpooled.wrappedBuffer(p.getBytes(StandardCharsets.UTF_8)));
        }
        return s.wellFormed();
    }

    @Test
    void wellFormed_wholeAnswerCutAtEveryByte_trueForTheWhole_falseForEveryPrefix() {
        byte[] bytes = CHAT.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= bytes.length; cut++) {
            BodyUsageScanner whole = new BodyUsageScanner();
            whole.feed(Unpooled.wrappedBuffer(bytes, 0, cut));
            whole.feed(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            assertThat(whole.wellFormed()).as("split at %d", cut).isTrue();
            if (cut < bytes.length) {
                BodyUsageScanner prefix = new BodyUsageScanner();
                prefix.feed(Unpooled.wrappedBuffer(bytes, 0, cut));
                assertThat(prefix.wellFormed()).as("only the first %d bytes", cut).isFalse();
            }
        }
    }

    @Test
    void wellFormed_whitespaceAroundAndArrays_ok() {
        assertThat(wellFormed(" \r\n\t{\"a\":[1,{\"b\":\"}]\\\"\"}]}\n\n")).isTrue();
        assertThat(wellFormed("[1,2,", "[3]]")).isTrue();
        assertThat(wellFormed("{}")).isTrue();
    }

    @Test
    void wellFormed_garbage_false() {
        assertThat(wellFormed("")).as("empty").isFalse();
        assertThat(wellFormed("   ")).as("blank").isFalse();
        assertThat(wellFormed("<html>{}</html>")).as("html").isFalse();
        assertThat(wellFormed("\"just a string\"")).as("top-level string").isFalse();
        assertThat(wellFormed("42")).as("top-level number").isFalse();
        assertThat(wellFormed("{\"a\":1}}")).as("one close too many").isFalse();
        assertThat(wellFormed("{\"a\":1}{\"b\":2}")).as("two answers glued").isFalse();
        assertThat(wellFormed("{\"a\":1} x")).as("trailing text").isFalse();
        assertThat(wellFormed("{\"a\":\"}")).as("inside a string").isFalse();
        assertThat(wellFormed("{\"id\":\"chat")).as("cut").isFalse();
        assertThat(wellFormed("]{")).as("close first").isFalse();
    }

    /** Contract 12.8: a Responses API answer's top-level usage, whatever the output items hold, cut anywhere. */
    @Test
    void responsesAnswer_cutAtEveryByte_usageByType() {
        String body = "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"type\":"
                + "\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"\\\"usage\\\":{\\\"input_tokens\\\":9}\","
                + "\"annotations\":[]}]},{\"type\":\"function_call\",\"arguments\":\"{\\\"usage\\\":1}\"}],"
                + "\"usage\":{\"input_tokens\":1400,\"input_tokens_details\":{\"cached_tokens\":1000},\"output_tokens\":50,"
                + "\"output_tokens_details\":{\"reasoning_tokens\":20},\"total_tokens\":1450},\"metadata\":{}}";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= bytes.length; cut++) {
            BodyUsageScanner s = new BodyUsageScanner();
            s.feed(Unpooled.wrappedBuffer(bytes, 0, cut));
            s.feed(Unpooled.wrappedBuffer(bytes, cut, bytes.length - cut));
            Usage u = s.counts().usage();
            assertThat(u.input()).as("uncached input, cut at %d", cut).isEqualTo(400);
            assertThat(u.cacheRead()).isEqualTo(1000);
            assertThat(u.output()).isEqualTo(50);
            assertThat(u.reasoning()).isEqualTo(20);
            assertThat(s.wellFormed()).isTrue();
        }
    }
}
