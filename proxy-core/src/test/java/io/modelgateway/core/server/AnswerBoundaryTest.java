package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.exchange.ConnectionEvent;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one handler that tells the connection when a request was read whole and its answer written whole. */
class AnswerBoundaryTest {
    /** Records the signals as a handler on each side of the boundary hears them. */
    private static final class Signals extends ChannelInboundHandlerAdapter {
        final List<Object> heard = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            heard.add(evt);
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Test
    void requestReadWhole_andAnswerWrittenWhole_areToldOnBothSidesOfTheBoundary() {
        Signals before = new Signals();
        Signals after = new Signals();
        EmbeddedChannel ch = new EmbeddedChannel(before, new AnswerBoundary(), after);

        ch.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/chat/completions"));
        assertThat(before.heard).isEmpty();
        ch.writeInbound(LastHttpContent.EMPTY_LAST_CONTENT);
        assertThat(before.heard).containsExactly(ConnectionEvent.REQUEST_RECEIVED);
        assertThat(after.heard).containsExactly(ConnectionEvent.REQUEST_RECEIVED);

        // an interim answer, then a streamed one: complete only at its last part
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        ch.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        ch.writeOutbound(new DefaultHttpContent(Unpooled.copiedBuffer(new byte[] {'x'})));
        assertThat(after.heard).containsExactly(ConnectionEvent.REQUEST_RECEIVED);
        ch.writeOutbound(LastHttpContent.EMPTY_LAST_CONTENT);
        assertThat(before.heard).containsExactly(ConnectionEvent.REQUEST_RECEIVED, ConnectionEvent.ANSWER_COMPLETE);
        assertThat(after.heard).containsExactly(ConnectionEvent.REQUEST_RECEIVED, ConnectionEvent.ANSWER_COMPLETE);

        Object o;
        while ((o = ch.readInbound()) != null) {
            ReferenceCountUtil.release(o);
        }
        int written = 0;
        while ((o = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(o);
            written++;
        }
        assertThat(written).as("every part went on to the codec").isEqualTo(4);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
