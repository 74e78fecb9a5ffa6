package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ChunkFrame;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/**
 * Right below the HTTP/1.1 codec: a {@link ChunkFrame} the codec let through leaves as its buffer, which already holds
 * the chunk's framing (taken out of the frame, which its writer may then reuse); everything else passes untouched.
 * Stateless, shared by all connections.
 */
@ChannelHandler.Sharable
public final class ChunkFrameUnwrapper extends ChannelOutboundHandlerAdapter {
    public static final ChunkFrameUnwrapper INSTANCE = new ChunkFrameUnwrapper();

    private ChunkFrameUnwrapper() {
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ctx.write(msg instanceof ChunkFrame frame ? frame.take() : msg, promise);
    }
}
