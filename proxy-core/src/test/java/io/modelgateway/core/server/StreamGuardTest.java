package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ChunkFrame;
import io.modelgateway.core.exchange.ChunkOut;
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

    /**
     * On HTTP/1.1 a stream's chunks enter below the codec ({@link ChunkOut}) and never pass the guard: they count as
     * output all the same, so a stream whose events keep coming that way gets no keep-alive, and one whose chunks stop
     * gets it an interval after the last.
     */
    @Test
    void chunksWrittenBelowTheGuard_countAsOutput() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(ChunkEntry.INSTANCE);
        ch.pipeline().addLast(new AnswerBoundary());
        ch.pipeline().addLast(new StreamGuard(INTERVAL));
        ChunkOut chunks = new ChunkOut(ch.pipeline().firstContext());
        ch.attr(ChunkOut.KEY).set(chunks);
        request(ch, "/api/v1/chat/completions");
        ch.writeOutbound(streamHead());
        assertThat(written(ch)).containsExactly("<head>");
        for (int i = 0; i < 3; i++) {
            ch.advanceTimeBy(10, TimeUnit.SECONDS);
            ch.runScheduledPendingTasks();
            ByteBuf event = ChunkFrame.newBuffer(ch.alloc(), 32).writeBytes("data: {}\n\n".getBytes(StandardCharsets.UTF_8));
            ChunkFrame.frame(event);
            chunks.write(event);
            chunks.flush();
            assertThat(writtenBytes(ch)).as("after %d s: the chunk, no keep-alive", 10 * (i + 1))
                    .containsExactly("a\r\ndata: {}\n\n\r\n");
        }
        ch.advanceTimeBy(14, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).isEmpty();
        ch.advanceTimeBy(1, TimeUnit.SECONDS);
        ch.runScheduledPendingTasks();
        assertThat(written(ch)).as("15 s after the last chunk").containsExactly(": keep-alive\n\n");
        ch.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
        written(ch);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    /** Raw buffers written so far (chunks that entered below the codec), as text, releasing them. */
    private static List<String> writtenBytes(EmbeddedChannel ch) {
        List<String> out = new ArrayList<>();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            assertThat(o).isInstanceOf(ByteBuf.class);
            out.add(((ByteBuf) o).toString(StandardCharsets.UTF_8));
            ReferenceCountUtil.release(o);
        }
        return out;
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
