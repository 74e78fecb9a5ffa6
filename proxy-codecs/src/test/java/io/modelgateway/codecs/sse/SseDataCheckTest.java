package io.modelgateway.codecs.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SseDataCheckTest {

    private static boolean plausible(String event) {
        ByteBuf buf = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
        try {
            int before = buf.readerIndex();
            boolean ok = SseDataCheck.plausible(buf);
            assertThat(buf.readerIndex()).isEqualTo(before);
            return ok;
        } finally {
            buf.release();
        }
    }

    @Test
    void jsonEventsInBothStyles_andDone_andCommentsPass() {
        assertThat(plausible("data: {\"id\":\"chatcmpl-1\",\"choices\":[]}\n\n")).isTrue();
        assertThat(plausible("data:{\"a\":1}\r\n\r\n")).isTrue();
        assertThat(plausible("event: content_block_delta\ndata: {\"type\":\"content_block_delta\"}\n\n")).isTrue();
        assertThat(plausible("data: [DONE]\n\n")).isTrue();
        assertThat(plausible(": keep-alive\n\n")).isTrue();
        assertThat(plausible("event: ping\n\n")).isTrue();
        assertThat(plausible("data: {\"a\":1}\nid: 7\n\n")).as("a trailing id line").isTrue();
        assertThat(plausible("data: {\"a\":\ndata: 1}\n\n")).as("multi-line data").isTrue();
    }

    @Test
    void cutOrNonJsonPayloads_fail() {
        assertThat(plausible("data: {\"id\":\"chat\n\n")).as("cut").isFalse();
        assertThat(plausible("event: message_start\ndata: {\"type\":\"mess\n\n")).as("cut, typed").isFalse();
        assertThat(plausible("data: hello world\n\n")).as("text").isFalse();
        assertThat(plausible("data: \n\n")).as("empty").isFalse();
        assertThat(plausible("data:")).as("nothing").isFalse();
        assertThat(plausible("data: [DONE\n\n")).as("cut marker").isFalse();
        assertThat(plausible("data: <html>}\n\n")).as("html").isFalse();
    }

    @Test
    void looksLikeError_errorEventsOfBothStyles_only() {
        assertThat(looksLikeError("event: error\ndata: {\"type\":\"error\"}\n\n")).isTrue();
        assertThat(looksLikeError("event:error\r\ndata: {}\r\n\r\n")).isTrue();
        assertThat(looksLikeError("data: {\"error\":{\"message\":\"x\"}}\n\n")).isTrue();
        assertThat(looksLikeError("data:{\"error\":1}\n\n")).isTrue();
        assertThat(looksLikeError("event: errors\ndata: {}\n\n")).isFalse();
        assertThat(looksLikeError("event: content_block_delta\ndata: {\"error\":1}\n\n")).isFalse();
        assertThat(looksLikeError("data: {\"id\":\"c\",\"error\":null}\n\n")).isFalse();
        assertThat(looksLikeError(": keep-alive\n\n")).isFalse();
    }

    @Test
    void looksLikeError_responsesApiFailedAndErrorEvents_only() {
        assertThat(looksLikeError("event: response.failed\ndata: {\"type\":\"response.failed\"}\n\n")).isTrue();
        assertThat(looksLikeError("event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\"}\n\n")).isTrue();
        assertThat(looksLikeError("event: response.failedx\ndata: {}\n\n")).isFalse();
        assertThat(looksLikeError("event: response.completed\ndata: {\"response\":{\"error\":null}}\n\n")).isFalse();
        assertThat(looksLikeError("event: response.incomplete\ndata: {}\n\n")).isFalse();
    }

    /**
     * The check reads whole words of the buffer: every truncation of these events, in a slice that starts inside a
     * larger buffer, answers as the rule read on the text itself does (a first line naming {@code error} or
     * {@code response.failed}, or a first data payload opening with {@code {"error"}).
     */
    @Test
    void looksLikeError_everyTruncationInASlice_answersAsTheTextRule() {
        String[] events = {
            "event: error\ndata: {}\n\n", "event:error\r\n", "event: response.failed\n", "data: {\"error\":1}\n\n",
            "data:{\"error\"", "data: {\"errors\":1}\n\n", "data: {\"id\":1}\n\n", "event: errorx\n", "evenings\n",
            "datum: x\n", ": c\n\n",
        };
        for (String e : events) {
            for (int n = 0; n <= e.length(); n++) {
                String text = e.substring(0, n);
                byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
                ByteBuf wide = Unpooled.buffer(bytes.length + 9).writeZero(5).writeBytes(bytes).writeZero(4);
                try {
                    assertThat(SseDataCheck.looksLikeError(wide.slice(5, bytes.length))).as("'%s'", text)
                            .isEqualTo(textRule(text));
                } finally {
                    wide.release();
                }
            }
        }
    }

    private static boolean textRule(String e) {
        if (e.startsWith("event:")) {
            String name = e.substring(6);
            name = name.startsWith(" ") ? name.substring(1) : name;
            for (String n : new String[] {"error", "response.failed"}) {
                if (name.equals(n) || name.startsWith(n + "\n") || name.startsWith(n + "\r")) {
                    return true;
                }
            }
            return false;
        }
        if (e.startsWith("data:")) {
            String d = e.substring(5);
            return (d.startsWith(" ") ? d.substring(1) : d).startsWith("{\"error\"");
        }
        return false;
    }

    private static boolean looksLikeError(String event) {
        ByteBuf buf = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
        try {
            return SseDataCheck.looksLikeError(buf);
        } finally {
            buf.release();
        }
    }
}
