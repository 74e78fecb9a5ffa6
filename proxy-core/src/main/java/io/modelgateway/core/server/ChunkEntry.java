package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ChunkOut;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;

/**
 * Marks the place right below an HTTP/1.1 connection's codec where a stream's framed chunks enter the pipeline
 * ({@link ChunkOut} writes from its context). Neither inbound nor outbound, so no event or write ever stops here.
 * Stateless, shared by all connections.
 */
@ChannelHandler.Sharable
public final class ChunkEntry extends ChannelHandlerAdapter {
    public static final ChunkEntry INSTANCE = new ChunkEntry();

    private ChunkEntry() {
    }
}
