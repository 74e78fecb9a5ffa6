package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * One HTTP/1.1 chunk of a streamed answer, framed by the gateway itself: the chunk-size line, the data and the CR LF
 * after it, in one buffer. Netty's HTTP encoder frames each content it is given in three buffers (the size line, the
 * data, the CR LF) written as three outbound entries tied together by a promise combiner, which on a stream whose
 * events arrive one per read was a microsecond per event; a framed chunk is one buffer and one entry, and one
 * {@code write} system call instead of a three-part {@code writev}.
 *
 * <p>A framed chunk enters the pipeline below the HTTP encoder ({@link ChunkOut}, at the context of the
 * {@code chunk-frames} marker handler), so the encoder never sees it: its state stays "in a chunked body", and the
 * answer's last content still goes through it and ends the body. Only on an HTTP/1.1 connection whose answer is
 * chunked: HTTP/2 frames its own data.
 */
public final class ChunkFrame {
    /** Room before the data for the size line: up to eight hex digits, then CR LF. */
    public static final int HEADROOM = 10;

    private ChunkFrame() {
    }

    /**
     * A buffer of {@code capacity} bytes (framing included; it grows when written past) with {@link #HEADROOM} bytes
     * reserved before its writer index, for {@link #frame} to fill.
     */
    public static ByteBuf newBuffer(ByteBufAllocator alloc, int capacity) {
        return withHeadroom(alloc.directBuffer(Math.max(capacity, HEADROOM + 2)));
    }

    /**
     * {@code empty} (a buffer with nothing written, of at least {@code HEADROOM + 2} bytes) made ready as
     * {@link #newBuffer} makes one: {@link #HEADROOM} bytes reserved before its writer index.
     */
    public static ByteBuf withHeadroom(ByteBuf empty) {
        return empty.writerIndex(HEADROOM).readerIndex(HEADROOM);
    }

    /**
     * Frames the readable bytes of {@code b} (made by {@link #newBuffer} or {@link #withHeadroom}, its reader index
     * untouched since) in place: the size line written into the headroom right before them, CR LF after; {@code b}'s
     * readable bytes are then the whole chunk. {@code b} must hold at least one byte: a chunk of size zero ends the
     * body.
     *
     * @return the bytes of data in the chunk (without its framing): what the answer's body grew by
     */
    public static int frame(ByteBuf b) {
        int n = b.readableBytes();
        if (n <= 0 || b.readerIndex() != HEADROOM) {
            throw new IllegalArgumentException("not a frame buffer with data: " + b);
        }
        int digits = (35 - Integer.numberOfLeadingZeros(n)) >>> 2; // hex digits of n, at least one
        int at = HEADROOM - digits - 2;
        for (int i = digits - 1, v = n; i >= 0; i--, v >>>= 4) {
            b.setByte(at + i, HEX[v & 0xF]);
        }
        b.setByte(HEADROOM - 2, '\r');
        b.setByte(HEADROOM - 1, '\n');
        b.readerIndex(at);
        b.writeByte('\r').writeByte('\n');
        return n;
    }

    private static final byte[] HEX = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
}
