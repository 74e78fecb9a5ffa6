package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PipeliningGateTest {

    /** Records requests passed on (and releases them); the test decides when to answer. */
    static final class Seen extends ChannelInboundHandlerAdapter {
        final List<String> uris = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            uris.add(((FullHttpRequest) msg).uri());
            ReferenceCountUtil.release(msg);
        }
    }

    private static FullHttpRequest request(String uri) {
        return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri, Unpooled.buffer(0));
    }

    @Test
    void pipelinedRequests_passOneAtATime_afterEachAnswerIsComplete() {
        Seen seen = new Seen();
        PipeliningGate gate = new PipeliningGate();
        EmbeddedChannel ch = new EmbeddedChannel(new AnswerBoundary(), gate, seen);
        ch.writeInbound(request("/a"), request("/b"), request("/c"));
        assertThat(seen.uris).containsExactly("/a");
        assertThat(gate.heldCount()).isEqualTo(2);
        assertThat(ch.config().isAutoRead()).isFalse();

        ch.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        ch.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer(new byte[] {1})));
        ch.runPendingTasks();
        assertThat(seen.uris).as("an answer in progress holds the next request").containsExactly("/a");
        ch.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
        ch.runPendingTasks();
        assertThat(seen.uris).containsExactly("/a", "/b");

        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        ch.runPendingTasks();
        assertThat(seen.uris).as("a 1xx answer completes nothing").containsExactly("/a", "/b");
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.UNAUTHORIZED));
        ch.runPendingTasks();
        assertThat(seen.uris).containsExactly("/a", "/b", "/c");
        assertThat(ch.config().isAutoRead()).isTrue();
        Object out;
        while ((out = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(out);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void requestsOneAtATime_passAtOnce_andReadingNeverStops() {
        // The common case: each request comes after the answer ahead of it. Nothing is held, so nothing waits for a
        // later turn of the loop (the gate queues no task then) and reading stays on.
        Seen seen = new Seen();
        PipeliningGate gate = new PipeliningGate();
        EmbeddedChannel ch = new EmbeddedChannel(new AnswerBoundary(), gate, seen);
        for (String uri : List.of("/a", "/b", "/c")) {
            ch.writeInbound(request(uri));
            assertThat(seen.uris).last().isEqualTo(uri);
            ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
            assertThat(gate.heldCount()).isZero();
            assertThat(ch.config().isAutoRead()).isTrue();
        }
        assertThat(seen.uris).containsExactly("/a", "/b", "/c");
        // A request pipelined behind a running answer is still held, and passes once that answer is complete.
        ch.writeInbound(request("/d"), request("/e"));
        assertThat(seen.uris).last().isEqualTo("/d");
        assertThat(ch.config().isAutoRead()).isFalse();
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        ch.runPendingTasks();
        assertThat(seen.uris).last().isEqualTo("/e");
        assertThat(ch.config().isAutoRead()).isTrue();
        Object out;
        while ((out = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(out);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void connectionClosed_heldRequestsAreReleased() {
        Seen seen = new Seen();
        EmbeddedChannel ch = new EmbeddedChannel(new AnswerBoundary(), new PipeliningGate(), seen);
        FullHttpRequest held = request("/b");
        ch.writeInbound(request("/a"), held);
        assertThat(held.refCnt()).isEqualTo(1);
        ch.close();
        assertThat(held.refCnt()).isZero();
        assertThat(seen.uris).containsExactly("/a");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
