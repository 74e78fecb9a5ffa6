package io.modelgateway.core.server;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.exchange.ApiPaths;
import io.modelgateway.core.exchange.ConnectionEvent;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code request_timeout_ms} for one HTTP/2 stream, right after the stream's frame-to-HTTP codec: a request not
 * received whole within that time of its stream's opening (a body trickled in) is answered 408 in the style of its
 * path and the stream is reset, as {@code RequestTimeouts} answers and closes an HTTP/1.1 connection. Idle timeouts
 * are the connection's ({@link Http2ConnectionGuard}): a stream is never idle, it ends with its answer. One timer
 * per stream, cancelled when the connection's {@link ConnectionEvent#REQUEST_RECEIVED} signal says the request is
 * whole. Event-loop confined; one per stream.
 */
public final class StreamRequestTimeout extends ChannelInboundHandlerAdapter {
    private final long timeoutMs;
    private ApiStyle style = ApiStyle.OPENAI;
    private ScheduledFuture<?> timer;
    private boolean received;
    private boolean timedOut;

    public StreamRequestTimeout(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timer = ctx.executor().schedule(() -> timeOut(ctx), timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (timedOut) {
            ReferenceCountUtil.release(msg); // answered 408 already; the rest is not read
            return;
        }
        if (msg instanceof HttpRequest request) {
            style = ApiPaths.styleForPath(ApiPaths.path(request.uri()));
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ConnectionEvent.REQUEST_RECEIVED) {
            received = true;
            cancel();
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void timeOut(ChannelHandlerContext ctx) {
        timer = null;
        if (received || !ctx.channel().isActive()) {
            return;
        }
        timedOut = true;
        GatewayError error = new GatewayError(ErrorKind.REQUEST_TIMEOUT, "The request was not received in time; send"
                + " the whole request within " + timeoutMs + " ms.", null, null);
        // Not kept alive: the stream is reset once the answer is out, so the client sends no more of the body.
        HttpResponses.sendError(ctx, style, error, Ids.requestId(), false);
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancel();
    }
}
