package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RequestBodyAggregatorTest {
    @Test
    void bodyWithinLimit_isAggregated() {
        EmbeddedChannel ch = new EmbeddedChannel(new RequestBodyAggregator(1024));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/chat/completions");
        head.headers().setInt("content-length", 4);
        ch.writeInbound(head, new DefaultHttpContent(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8)),
                new DefaultLastHttpContent(Unpooled.copiedBuffer("  ", StandardCharsets.UTF_8)));
        FullHttpRequest full = ch.readInbound();
        assertThat(full.content().toString(StandardCharsets.UTF_8)).isEqualTo("{}  ");
        full.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void declaredLengthOverLimit_is413InCallerStyleAndCloses() {
        EmbeddedChannel ch = new EmbeddedChannel(new RequestBodyAggregator(1024));
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/messages");
        head.headers().setInt("content-length", 5000);
        ch.writeInbound(head);
        FullHttpResponse r = ch.readOutbound();
        assertThat(r.status().code()).isEqualTo(413);
        assertThat(r.content().toString(StandardCharsets.UTF_8)).contains("\"type\":\"request_too_large\"");
        r.release();
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }
}
