package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufHolder;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * One HTTP/1.1 chunk of a streamed answer, framed by the gateway itself: the chunk-size line, the data and the CR LF
 * after it, in one buffer. Netty's HTTP encoder frames each content it is given in three buffers (the size line, the
 * data, the CR LF) written as three outbound entries tied together by a promise combiner, which on a stream whose
 * events arrive one per read was a microsecond per event; a frame is one buffer and one entry, and one {@code write}
 * system call instead of a three-part {@code writev}.
 *
 * <p>Not an {@code HttpContent} and not a {@code ByteBuf}, so the HTTP encoder lets it pass as it is (its state stays
 * "in a chunked body"; the answer's last content still goes through it and ends the body); the connection's
 * {@value #HANDLER} handler below the encoder hands the buffer on to the socket (or TLS). The handlers above the
 * encoder that look at written content (the response observer's byte count, the stream guard's last-write time)
 * know this type too. Only on an HTTP/1.1 connection whose answer is chunked: HTTP/2 frames its own data.
 *
 * <p>A frame object can carry one buffer after another ({@link #reframe}): the unwrapper {@linkplain #take takes} the
 * buffer out as it passes, and a frame whose buffer was taken is free again, so one frame per event loop
 * ({@link #ofLoop}) carries the chunks of every answer the loop writes instead of one per read. A frame that was
 * released instead (a write to a closed connection) or is still on its way (a write from outside the event loop waits
 * in its queue) still holds its buffer and is not reused; a new one takes its place.
 */
public final class ChunkFrame implements ByteBufHolder {
    /** The name of the handler that unwraps frames, placed right below the HTTP codec of HTTP/1.1 connections. */
    public static final String HANDLER = "chunk-frames";
    /** Room before the data for the size line: up to eight hex digits, then CR LF. */
    public static final int HEADROOM = 10;

    /** Each event loop's frame ({@link #ofLoop}); one that is still on its way is replaced, not reused. */
    private static final FastThreadLocal<ChunkFrame> LOOP_FRAME = new FastThreadLocal<>();

    /** The framed buffer; null once {@link #take} took it out. */
    private ByteBuf framed;
    private int dataBytes;

    private ChunkFrame(ByteBuf framed, int dataBytes) {
        this.framed = framed;
        this.dataBytes = dataBytes;
    }

    /** The bytes of data in the chunk (without its framing): what the answer's body grew by. */
    public int dataBytes() {
        return dataBytes;
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
     * Frames the readable bytes of {@code b} (made by {@link #newBuffer}, its reader index untouched since): the size
     * line written into the headroom right before them, CR LF after. {@code b} must hold at least one byte: a chunk of
     * size zero ends the body.
     */
    public static ChunkFrame frame(ByteBuf b) {
        int n = fill(b);
        return new ChunkFrame(b, n);
    }

    /**
     * Frames {@code b} as {@link #frame} does, in {@code reused} when that frame is free (its last buffer was taken)
     * and in a new frame otherwise.
     */
    public static ChunkFrame reframe(ChunkFrame reused, ByteBuf b) {
        if (reused == null || reused.framed != null) {
            return frame(b);
        }
        reused.dataBytes = fill(b);
        reused.framed = b;
        return reused;
    }

    /**
     * Frames {@code b} as {@link #frame} does, in the frame of the calling event loop when that one is free: a frame is
     * taken apart on its way down the pipeline, so one per loop carries every chunk its answers write, and it stays
     * in the cache where a frame per answer (touched once an event, on streams paced far apart) would not.
     */
    public static ChunkFrame ofLoop(ByteBuf b) {
        ChunkFrame free = LOOP_FRAME.get();
        ChunkFrame f = reframe(free, b);
        if (f != free) {
            LOOP_FRAME.set(f); // the loop's frame is still on its way (a write waiting in the loop's queue)
        }
        return f;
    }

    /** Takes the framed buffer out (its reference goes with it): the frame is free for {@link #reframe} again. */
    public ByteBuf take() {
        ByteBuf b = content();
        framed = null;
        return b;
    }

    private static int fill(ByteBuf b) {
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

    @Override
    public ByteBuf content() {
        if (framed == null) {
            throw new IllegalReferenceCountException("the frame's buffer was taken");
        }
        return framed;
    }

    @Override
    public ChunkFrame copy() {
        return replace(content().copy());
    }

    @Override
    public ChunkFrame duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public ChunkFrame retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public ChunkFrame replace(ByteBuf content) {
        return new ChunkFrame(content, dataBytes);
    }

    @Override
    public int refCnt() {
        return framed == null ? 0 : framed.refCnt();
    }

    @Override
    public ChunkFrame retain() {
        content().retain();
        return this;
    }

    @Override
    public ChunkFrame retain(int increment) {
        content().retain(increment);
        return this;
    }

    @Override
    public ChunkFrame touch() {
        content().touch();
        return this;
    }

    @Override
    public ChunkFrame touch(Object hint) {
        content().touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return content().release();
    }

    @Override
    public boolean release(int decrement) {
        return content().release(decrement);
    }

    @Override
    public String toString() {
        return "ChunkFrame(" + dataBytes + " bytes of data" + (framed == null ? ", taken)" : ")");
    }
}
