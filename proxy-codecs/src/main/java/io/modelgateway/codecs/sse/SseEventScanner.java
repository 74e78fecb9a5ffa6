package io.modelgateway.codecs.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.util.ByteProcessor;
import java.util.function.Consumer;

/**
 * Finds server-sent-event boundaries (a blank line: {@code \n\n}, {@code \r\n\r\n} or {@code \r\r}) in a
 * stream of upstream buffers and hands each complete event on as a retained slice of those buffers —
 * a composite of slices when an event spans reads. Nothing is decoded or copied (DESIGN rule 3); the
 * bytes of the events, in order, are exactly the bytes fed in.
 *
 * <p>Ownership: {@link #feed} does not release its input (the caller does, as usual); every event
 * handed to the consumer carries its own reference, which the consumer must write or release. Bytes of
 * an unfinished event are held (retained) until the event completes, {@link #drainRemainder} takes them,
 * or {@link #release} drops them. One scanner per stream; not thread-safe (event-loop confined).
 */
public final class SseEventScanner {
    private final ByteBufAllocator alloc;
    /** Slices of the current, unfinished event from earlier reads; null when none. */
    private CompositeByteBuf pending;
    /** Consecutive line ends seen at the end of the data so far (a CR LF pair counts once). */
    private int lineEnds;
    /** The last byte seen was CR, so an LF right after it belongs to the same line end. */
    private boolean lastWasCr;

    public SseEventScanner(ByteBufAllocator alloc) {
        this.alloc = alloc;
    }

    /** Scans {@code in} (its readable bytes, which are left untouched) and emits every event it completes. */
    public void feed(ByteBuf in, Consumer<ByteBuf> onEvent) {
        int start = in.readerIndex();
        int end = in.writerIndex();
        int eventStart = start;
        int i = start;
        if (lineEnds >= 2 && lastWasCr && start < end && in.getByte(start) != '\n') {
            // The previous read ended on the CR of a blank line and no LF followed: that event is complete.
            eventStart = emit(in, start, start, onEvent);
            lineEnds = 0;
            lastWasCr = false;
        }
        while (i < end) {
            int j = in.forEachByte(i, end - i, ByteProcessor.FIND_CRLF);
            if (j < 0) {
                lineEnds = 0;
                lastWasCr = false;
                break;
            }
            if (j > i) {
                lineEnds = 0;
                lastWasCr = false;
            }
            byte b = in.getByte(j);
            if (b == '\n' && lastWasCr) {
                lastWasCr = false; // second half of CR LF; already counted
                if (lineEnds >= 2) {
                    eventStart = emit(in, eventStart, j + 1, onEvent);
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
                        lineEnds = 0;
                        lastWasCr = false;
                    }
                }
            }
            i = j + 1;
        }
        if (eventStart < end) {
            if (pending == null) {
                pending = alloc.compositeBuffer(16);
            }
            pending.addComponent(true, in.retainedSlice(eventStart, end - eventStart));
        }
    }

    private int emit(ByteBuf in, int eventStart, int eventEnd, Consumer<ByteBuf> onEvent) {
        ByteBuf event;
        if (pending == null) {
            event = in.retainedSlice(eventStart, eventEnd - eventStart);
        } else {
            if (eventEnd > eventStart) {
                pending.addComponent(true, in.retainedSlice(eventStart, eventEnd - eventStart));
            }
            event = pending;
            pending = null;
        }
        onEvent.accept(event);
        return eventEnd;
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
