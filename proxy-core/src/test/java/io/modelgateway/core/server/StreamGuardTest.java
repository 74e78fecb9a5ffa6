package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StreamGuardTest {
    static final long INTERVAL = TimeUnit.SECONDS.toNanos(15);

    private static EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(new AnswerBoundary(), new StreamGuard(INTERVAL));
        return ch;
    }

    private static void request(EmbeddedChannel ch, String path) {
        ch.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path));
        ch.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
        Object in;
        while ((in = ch.readInbound()) != null) {
            ReferenceCountUtil.release(in);
        }
    }

    private static HttpResponse streamHead() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        return head;
    }

    /** The bodies written so far, as text, releasing them. */
    private static List<String> written(EmbeddedChannel ch) {
        List<String> out = new ArrayList<>();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            if (o instanceof HttpContent c) {
                ByteBuf b = c.content();
                out.add(b.toString(StandardCharsets.UTF_8));
            } else if (o instanceof HttpResponse) {
                out.add("<head>");
            }
            ReferenceCountUtil.release(o);
        }
        return out;
    }

    @Test
    void idleChatStream_getsAKeepAliveComment_everyInterval() {
        EmbeddedChannel ch = channel();
        request(ch, "/api/v1/chat/completions");
        ch.writeOutbound(streamHead());
        ch.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer("data: {}\n\n", StandardCharsets.UTF_8)));
        ch.advanceTimeBy(14, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly("<head>", "data: {}\n\n");
        ch.advanceTimeBy(1, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly(": keep-alive\n\n");
        ch.advanceTimeBy(15, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly(": keep-alive\n\n");
        ch.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
        ch.advanceTimeBy(60, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly("").as("no ping after the stream ended");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void idleMessagesStream_getsAPingEvent_andNonStreamsNothing() {
        EmbeddedChannel ch = channel();
        request(ch, "/api/v1/messages?beta=true");
        ch.writeOutbound(streamHead());
        ch.advanceTimeBy(15, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly("<head>", "event: ping\ndata: {\"type\": \"ping\"}\n\n");
        ch.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
        written(ch);
        request(ch, "/api/v1/messages");
        ch.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        ch.advanceTimeBy(60, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).containsExactly("<head>");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void drain_idleConnectionClosesAtOnce() {
        EmbeddedChannel ch = channel();
        ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN);
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void drain_busyConnectionClosesAfterItsAnswer() {
        EmbeddedChannel ch = channel();
        request(ch, "/api/v1/chat/completions");
        ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN);
        assertThat(ch.isOpen()).as("the request is being processed").isTrue();
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        written(ch);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void drainDeadline_openStreamEndsWithTheStylesErrorEvent() {
        EmbeddedChannel ch = channel();
        request(ch, "/api/v1/messages");
        ch.writeOutbound(streamHead());
        ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN);
        ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN_DEADLINE);
        ch.runPendingTasks();
        List<String> out = written(ch);
        assertThat(out).hasSize(3);
        assertThat(out.get(1)).startsWith("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"");
        assertThat(out.get(2)).isEmpty(); // the last chunk: a properly ended response
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
