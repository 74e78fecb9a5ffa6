package io.modelgateway.core.limit.shared;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.redis.ArrayHeaderRedisMessage;
import io.netty.handler.codec.redis.BulkStringHeaderRedisMessage;
import io.netty.util.ReferenceCountUtil;

/**
 * Sits between Netty's {@code RedisDecoder} and the aggregators of a {@link RedisLink} and closes the connection
 * on a reply far larger than any the shared limits get: an array of more than {@link #MAX_ARRAY} elements or a bulk
 * string of more than {@link #MAX_BULK} bytes. The aggregators would otherwise size their buffers by what the peer
 * announces (up to 512 MB a message), so a broken or hostile server could exhaust the heap with one header.
 *
 * <p>Replies within the bounds pass on untouched; one past them is released here, and the connection's calls fail
 * as for a lost connection.
 */
final class ReplyBounds extends ChannelInboundHandlerAdapter {
    /** admit.lua answers 13 integers; nothing else answers an array. */
    static final int MAX_ARRAY = 64;
    /** Bulk strings: a script's SHA (40 bytes) from SCRIPT LOAD. */
    static final int MAX_BULK = 64 * 1024;

    /** Tripped: the rest of what was read (the decoder goes on with the buffer in hand) is dropped too. */
    private boolean tripped;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (tripped) {
            ReferenceCountUtil.release(msg);
            return;
        }
        boolean tooLarge = msg instanceof ArrayHeaderRedisMessage a && a.length() > MAX_ARRAY
                || msg instanceof BulkStringHeaderRedisMessage b && b.bulkStringLength() > MAX_BULK;
        if (tooLarge) {
            tripped = true;
            ReferenceCountUtil.release(msg);
            ctx.close();
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
