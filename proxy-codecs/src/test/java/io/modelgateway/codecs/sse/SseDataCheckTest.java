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

    private static boolean looksLikeError(String event) {
        ByteBuf buf = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
        try {
            return SseDataCheck.looksLikeError(buf);
        } finally {
            buf.release();
        }
    }
}
