package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * One buffer per event loop thread, lent again and again for work that usually ends within the turn that started
 * it: an answer's chunk that the socket takes whole when it is flushed, a simulated event that the answer writer
 * copies. A pooled buffer per use would be new memory every time (the pool hands out its segments in turn, so each
 * use writes cache lines that have gone cold); the loop's one buffer stays in the cache. On streams of small events
 * that copy was a visible part of the loop (10,000 paced streams: 5.3 % of the core with a pooled buffer per read,
 * most of it waiting for the fresh buffer's cache lines; 2.5 % with the loop's).
 *
 * <p>Ownership: this keeps one reference to its buffer and {@link #take} gives the caller a second one, which the
 * caller hands on or releases as with any buffer. The buffer is lent again only when this holds the last
 * reference, so whatever still holds it (a write not yet done, a piece a handler kept) is never overwritten: a
 * {@code take} meanwhile gets a new buffer of the size it asks for, and the loop keeps its own. A buffer that grew past
 * {@code keptBytes} is let go rather than lent again. The loop's buffer is released when its thread ends; on a thread
 * that would not clean it up (not an event loop's), every {@code take} is a plain allocation.
 */
public final class LoopBuffer {
    private final int keptBytes;
    private final FastThreadLocal<Held> held = new FastThreadLocal<>() {
        @Override
        protected Held initialValue() {
            return new Held();
        }

        @Override
        protected void onRemoval(Held h) {
            if (h != null && h.buf != null) {
                h.buf.release();
            }
        }
    };

    /** The loop's buffer and the allocator it came from. */
    private static final class Held {
        ByteBuf buf;
        ByteBufAllocator from;
    }

    /** @param keptBytes the size of the loop's buffer: a use that asks for no more gets one of this size */
    public LoopBuffer(int keptBytes) {
        this.keptBytes = keptBytes;
    }

    /**
     * An empty direct buffer of at least {@code capacity} bytes, the caller owning one reference: the loop's own when
     * nothing else holds it and it came from {@code alloc}; a new one of {@code capacity} bytes when the loop's is
     * still held or {@code capacity} is more than {@code keptBytes}; else a new one of {@code keptBytes}, which becomes
     * the loop's own. A channel given an allocator of its own (one that counts or refuses) so still gets every buffer
     * from that allocator.
     */
    public ByteBuf take(ByteBufAllocator alloc, int capacity) {
        if (capacity > keptBytes || !FastThreadLocalThread.currentThreadWillCleanupFastThreadLocals()) {
            return alloc.directBuffer(capacity); // not one to lend: the loop keeps its own
        }
        Held h = held.get();
        ByteBuf b = h.buf;
        if (b != null) {
            if (h.from == alloc && b.capacity() == keptBytes) { // made at keptBytes, and capacity <= keptBytes here
                if (b.refCnt() == 1) {
                    return b.clear().retain();
                }
                // Still held: a write of it not done yet. On io_uring a write completes on a later turn of the loop,
                // so every use after the first in one turn comes here; it gets a buffer of its own size and the loop
                // keeps its own for a later use. A kept-size buffer per such use had the allocator make and free
                // whole chunks of them (14.7 % of a profile's samples at 10,000 paced streams; about 1 % of the CPU
                // per stream when measured).
                return alloc.directBuffer(capacity);
            }
            h.buf = null;
            h.from = null;
            b.release(); // grown by a user (so not lent again), or from another allocator
        }
        b = alloc.directBuffer(keptBytes);
        h.buf = b.retain();
        h.from = alloc;
        return b;
    }
}
