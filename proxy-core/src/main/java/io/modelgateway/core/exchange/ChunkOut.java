package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.AttributeKey;

/**
 * Where a streamed answer's chunks enter an HTTP/1.1 connection's pipeline: right below its HTTP codec (the context of
 * the {@code chunk-frames} marker handler), already framed by their writer ({@link ChunkFrame#frame}). A chunk of a
 * stream whose events arrive one per read is one write and one flush per event; started here, they pass only what
 * lies below the codec (TLS, the socket) instead of the five handlers above it, which have nothing to do with a
 * chunk in the middle of a body: the codec would let it through, the answer boundary waits for the last content, and
 * the two that look at body writes learn of these otherwise — the exchange's record is stamped by the writer
 * ({@code ExchangeRecord#bodyBytes}), and the stream guard reads {@link #lastWriteNanos} for its keep-alive. The
 * head and the last content (the zero chunk) still go through the codec, in order with these: every handler on the
 * way passes a write on at once, on the channel's event loop.
 *
 * <p>One per HTTP/1.1 connection ({@link #KEY}, set when its pipeline is built); HTTP/2 streams have none (HTTP/2
 * frames its own data). Event-loop confined.
 */
public final class ChunkOut {
    /** Set once per HTTP/1.1 client channel, when its pipeline is built. */
    public static final AttributeKey<ChunkOut> KEY = AttributeKey.valueOf("gateway.chunk-out");

    private final ChannelHandlerContext at;
    /** The event loop's ticker time of the last chunk written here; 0 before the first. */
    private long lastWriteNanos;

    /** @param at the context of the {@code chunk-frames} marker handler, right below the HTTP codec */
    public ChunkOut(ChannelHandlerContext at) {
        this.at = at;
    }

    /** The channel's chunk entry, or null (an HTTP/2 stream, a pipeline built without one). */
    public static ChunkOut of(Channel ch) {
        return ch.attr(KEY).get();
    }

    /**
     * Writes {@code framed} (a buffer {@link ChunkFrame#frame} framed; its reference goes with it) with the channel's
     * void promise, as the writer's other writes go: a failed write comes back through {@code exceptionCaught}.
     */
    public void write(ByteBuf framed) {
        lastWriteNanos = at.executor().ticker().nanoTime();
        at.write(framed, at.voidPromise());
    }

    /** Flushes the channel from here: all that was written to it, through the codec or here, in the order written. */
    public void flush() {
        at.flush();
    }

    /** The event loop's ticker time ({@code executor().ticker()}) of the last chunk written here; 0 before any. */
    public long lastWriteNanos() {
        return lastWriteNanos;
    }
}
