package io.modelgateway.codecs.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.function.Consumer;

/**
 * Finds server-sent-event boundaries (a blank line: {@code \n\n}, {@code \r\n\r\n} or {@code \r\r}) in a
 * stream of upstream buffers and hands each complete event on as a range of those buffers ({@link EventSink}) —
 * of a composite of slices when an event spans reads. No event is decoded or copied (design rule 3): the search for
 * line ends reads a scratch copy of the bytes fed in (one bulk copy per read, into the event loop's array), the
 * events handed on are ranges of the buffers themselves, and their bytes, in order, are exactly the bytes fed in. A
 * range costs no object: a sink that copies the event (the HTTP/1.1 answer writer merges a read's events into one
 * chunk) makes none, and one that keeps it takes a retained slice itself ({@link #feed(ByteBuf, Consumer)} does that
 * for every event).
 *
 * <p>Bounded, as everything a peer decides the size of: no event may be longer than {@code maxEventBytes} (every line is inside an
 * event, so that bounds lines too). Past it {@link #feed} returns false, drops what it held and takes nothing
 * more: the stream cannot go on. The check is one length comparison per event. An event that spans more than
 * {@value #MAX_SLICES} pieces is copied into one growing buffer from then on, so a peer that trickles an event in
 * tiny pieces costs work in proportion to its bytes (a composite would be consolidated again and again) and
 * the memory held stays within about twice the limit.
 *
 * <p>Ownership: {@link #feed} does not release its input (the caller does, as usual); an event handed to a sink is
 * lent for the call only (the sink retains what it keeps), one handed to a consumer carries its own reference, which
 * the consumer must write or release. Bytes of
 * an unfinished event are held (retained, or copied as said above) until the event completes,
 * {@link #drainRemainder} takes them, or {@link #release} drops them. One scanner per stream; not thread-safe
 * (event-loop confined).
 */
public final class SseEventScanner {
    /** Receives each complete event as {@code length} bytes of {@code buf} from {@code index}, lent for the call only. */
    @FunctionalInterface
    public interface EventSink {
        void event(ByteBuf buf, int index, int length);
    }

    /** The default longest event: far above any real provider's (a large tool call's arguments come in pieces). */
    public static final int DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;
    /** Pieces of one unfinished event held as slices; a longer event is copied into one buffer. */
    static final int MAX_SLICES = 16;
    private static final long LFS = ByteWords.spread((byte) '\n');
    private static final long CRS = ByteWords.spread((byte) '\r');
    private static final long BELOW_CR = ByteWords.spread((byte) ('\r' + 1));

    private final ByteBufAllocator alloc;
    private final int maxEventBytes;
    /** The byte {@link #nextLineEnd} stopped at: CR or LF. */
    private byte found;
    /**
     * The current, unfinished event from earlier reads: a composite of up to {@link #MAX_SLICES} slices, or one
     * buffer the pieces are copied into; null when none.
     */
    private ByteBuf pending;
    /** An event passed the limit: the stream is over for this scanner. */
    private boolean overflowed;
    /** Consecutive line ends seen at the end of the data so far (a CR LF pair counts once). */
    private int lineEnds;
    /** The last byte seen was CR, so an LF right after it belongs to the same line end. */
    private boolean lastWasCr;

    /** A scanner with the {@link #DEFAULT_MAX_EVENT_BYTES default limit}. */
    public SseEventScanner(ByteBufAllocator alloc) {
        this(alloc, DEFAULT_MAX_EVENT_BYTES);
    }

    /** @param maxEventBytes the longest event accepted, in bytes (at least 1) */
    public SseEventScanner(ByteBufAllocator alloc, int maxEventBytes) {
        if (maxEventBytes < 1) {
            throw new IllegalArgumentException("maxEventBytes must be positive");
        }
        this.alloc = alloc;
        this.maxEventBytes = maxEventBytes;
    }

    /**
     * Scans {@code in} (its readable bytes, which are left untouched) and emits every event it completes.
     *
     * @return false when an event grew past the limit: the events before it were emitted, the rest is dropped, and
     *         every later call returns false at once
     */
    public boolean feed(ByteBuf in, EventSink onEvent) {
        if (overflowed) {
            return false;
        }
        Window window = Window.THREAD.get();
        try {
            return scan(in, window, onEvent);
        } finally {
            window.buf = null; // the next feed copies afresh: a pooled buffer object may come back as another buffer
        }
    }

    /** As {@link #feed(ByteBuf, EventSink)}, each event handed on as a retained slice the consumer owns. */
    public boolean feed(ByteBuf in, Consumer<ByteBuf> onEvent) {
        return feed(in, (buf, index, length) -> onEvent.accept(buf.retainedSlice(index, length)));
    }

    private boolean scan(ByteBuf in, Window window, EventSink onEvent) {
        int start = in.readerIndex();
        int end = in.writerIndex();
        int eventStart = start;
        int i = start;
        if (lineEnds >= 2 && lastWasCr && start < end && in.getByte(start) != '\n') {
            // The previous read ended on the CR of a blank line and no LF followed: that event is complete.
            eventStart = emit(in, start, start, onEvent);
            if (eventStart < 0) {
                return false;
            }
            lineEnds = 0;
            lastWasCr = false;
        }
        while (i < end) {
            int j = nextLineEnd(window, in, i, end);
            if (j < 0) {
                lineEnds = 0;
                lastWasCr = false;
                break;
            }
            if (j > i) {
                lineEnds = 0;
                lastWasCr = false;
            }
            byte b = found;
            if (b == '\n' && lastWasCr) {
                lastWasCr = false; // second half of CR LF; already counted
                if (lineEnds >= 2) {
                    eventStart = emit(in, eventStart, j + 1, onEvent);
                    if (eventStart < 0) {
                        return false;
                    }
                    lineEnds = 0;
                }
            } else {
                lineEnds++;
                lastWasCr = b == '\r';
                if (lineEnds >= 2) {
                    // A CR may be followed by its LF in the next byte (or the next read); in that case the
                    // event ends after the LF, which the branch above handles.
                    boolean lfMayFollow = b == '\r' && (j + 1 >= end || in.getByte(j + 1) == '\n');
                    if (!lfMayFollow) {
                        eventStart = emit(in, eventStart, j + 1, onEvent);
                        if (eventStart < 0) {
                            return false;
                        }
                        lineEnds = 0;
                        lastWasCr = false;
                    }
                }
            }
            i = j + 1;
        }
        if (eventStart < end) {
            int n = end - eventStart;
            if ((pending == null ? 0L : pending.readableBytes()) + n > maxEventBytes) {
                overflow();
                return false;
            }
            append(in, eventStart, n);
        }
        return true;
    }

    /** Hands on the event ending at {@code eventEnd}; returns where the next one starts, or -1 past the limit. */
    private int emit(ByteBuf in, int eventStart, int eventEnd, EventSink onEvent) {
        int n = eventEnd - eventStart;
        if (pending == null) {
            if (n > maxEventBytes) {
                return overflow();
            }
            onEvent.event(in, eventStart, n);
            return eventEnd;
        }
        if ((long) pending.readableBytes() + n > maxEventBytes) {
            return overflow();
        }
        append(in, eventStart, n);
        ByteBuf event = pending;
        pending = null;
        try {
            onEvent.event(event, event.readerIndex(), event.readableBytes());
        } finally {
            event.release();
        }
        return eventEnd;
    }

    /** Adds {@code n} bytes of {@code in} to the unfinished event: as a slice while there are few, else copied. */
    private void append(ByteBuf in, int from, int n) {
        if (n == 0) {
            return;
        }
        if (pending == null) {
            CompositeByteBuf slices = alloc.compositeBuffer(MAX_SLICES);
            pending = slices;
            slices.addComponent(true, in.retainedSlice(from, n));
        } else if (pending instanceof CompositeByteBuf slices && slices.numComponents() < MAX_SLICES) {
            slices.addComponent(true, in.retainedSlice(from, n));
        } else {
            if (pending instanceof CompositeByteBuf slices) {
                ByteBuf copy = alloc.buffer(Math.min(maxEventBytes, 2 * (slices.readableBytes() + n)));
                copy.writeBytes(slices);
                slices.release();
                pending = copy;
            }
            pending.writeBytes(in, from, n); // grows by doubling: linear in the event's length overall
        }
    }

    /**
     * The index of the first CR or LF in {@code in[from, end)}, or -1; {@link #found} says which. The bytes are read
     * from the thread's {@link Window}, a copy of up to {@value Window#SIZE} of them made with one bulk
     * {@code getBytes}, eight bytes at a step ({@link ByteWords}); read through the buffer instead, each byte costs a
     * call that checks the index and, on a slice, its parent's reference count.
     */
    private int nextLineEnd(Window w, ByteBuf in, int from, int end) {
        while (from < end) {
            if (w.owner != this || w.buf != in || from < w.start || from >= w.start + w.length) {
                int n = Math.min(Window.SIZE, end - from);
                in.getBytes(from, w.bytes, 0, n);
                w.owner = this;
                w.buf = in;
                w.start = from;
                w.length = n;
            }
            byte[] a = w.bytes;
            int n = w.length;
            int k = from - w.start;
            for (; k + 8 <= n; k += 8) {
                long word = ByteWords.word(a, k);
                if (ByteWords.anyBelow(word, BELOW_CR) == 0) {
                    continue; // no byte below 14 in these eight: neither CR (13) nor LF (10)
                }
                long ends = ByteWords.equalBytes(word, LFS) | ByteWords.equalBytes(word, CRS);
                if (ends != 0) {
                    k += ByteWords.firstMarked(ends);
                    found = a[k];
                    return w.start + k;
                }
            }
            for (; k < n; k++) {
                byte b = a[k];
                if (b == '\n' || b == '\r') {
                    found = b;
                    return w.start + k;
                }
            }
            from = w.start + n;
        }
        return -1;
    }

    /**
     * An event loop's copy of the bytes being scanned: {@code bytes[0, length)} are {@code buf[start, start + length)}.
     * Valid only inside the {@link #feed} of the scanner that made it ({@code owner}; an event handler that feeds
     * another scanner on the same thread takes it over, and the first scanner copies again) and cleared when that
     * feed returns.
     */
    private static final class Window {
        static final int SIZE = 8192;
        static final FastThreadLocal<Window> THREAD = new FastThreadLocal<>() {
            @Override
            protected Window initialValue() {
                return new Window();
            }
        };

        final byte[] bytes = new byte[SIZE];
        SseEventScanner owner;
        ByteBuf buf;
        int start;
        int length;
    }

    /** The event in progress passed the limit: drop it; the scanner takes nothing more. */
    private int overflow() {
        overflowed = true;
        release();
        lineEnds = 0;
        lastWasCr = false;
        return -1;
    }

    /** Whether an event passed the limit ({@link #feed} returned false). */
    public boolean overflowed() {
        return overflowed;
    }

    /** The longest event this scanner accepts, in bytes. */
    public int maxEventBytes() {
        return maxEventBytes;
    }

    /** Takes the bytes of an unfinished event (the caller owns them), or null when there are none. */
    public ByteBuf drainRemainder() {
        ByteBuf r = pending;
        pending = null;
        lineEnds = 0;
        lastWasCr = false;
        return r;
    }

    /** Drops any held bytes; call when the stream is abandoned. */
    public void release() {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }
}
