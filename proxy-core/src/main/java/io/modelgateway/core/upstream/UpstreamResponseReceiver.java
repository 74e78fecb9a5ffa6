package io.modelgateway.core.upstream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;

/**
 * Last handler of an upstream connection's pipeline: hands every response part to the exchange that
 * currently holds the connection. A pooled connection has no listener; anything it receives then is
 * unexpected, so it is released and the connection closed (it will not be handed out again).
 */
public final class UpstreamResponseReceiver extends ChannelInboundHandlerAdapter {
    private UpstreamListener listener;

    public void listener(UpstreamListener listener) {
        this.listener = listener;
    }

    public UpstreamListener listener() {
        return listener;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        UpstreamListener l = listener;
        if (l == null || !(msg instanceof HttpObject)) {
            ReferenceCountUtil.release(msg);
            ctx.close();
            return;
        }
        l.onUpstreamMessage((HttpObject) msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        UpstreamListener l = listener;
        if (l != null) {
            l.onUpstreamReadComplete();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        UpstreamListener l = listener;
        listener = null;
        if (l != null) {
            l.onUpstreamClosed(null);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        UpstreamListener l = listener;
        listener = null;
        ctx.close();
        if (l != null) {
            l.onUpstreamClosed(cause);
        }
    }
}
