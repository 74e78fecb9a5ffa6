package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ConnectionEvent;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Right after the HTTP codec, where every request comes in and every answer goes out whoever wrote it: tells the
 * whole pipeline when a request was read whole and when its answer was written whole
 * ({@link ConnectionEvent}), as user events fired from the pipeline's head so that handlers on both sides of the
 * codec hear them. An answer is complete when its last part is written ({@link LastHttpContent}, which a full
 * response also is), not counting interim (1xx) answers. Messages pass on untouched. Stateless: one instance serves every connection and stream.
 */
@ChannelHandler.Sharable
public final class AnswerBoundary extends ChannelDuplexHandler {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof LastHttpContent) {
            // Told before the request goes on: its answer may be written (and complete) before this call returns.
            ctx.pipeline().fireUserEventTriggered(ConnectionEvent.REQUEST_RECEIVED);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        boolean completes = msg instanceof LastHttpContent
                && !(msg instanceof HttpResponse r && r.status().codeClass() == HttpStatusClass.INFORMATIONAL);
        ctx.write(msg, promise);
        if (completes) {
            ctx.pipeline().fireUserEventTriggered(ConnectionEvent.ANSWER_COMPLETE);
        }
    }
}
