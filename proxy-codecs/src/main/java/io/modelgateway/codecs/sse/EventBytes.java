package io.modelgateway.codecs.sse;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

/**
 * One stream event's bytes copied into an array, once, for the checks every passed-through event gets (the data
 * check, the error check and the usage search) to read plain array elements. Read through the event buffer itself —
 * a slice of the upstream's read, or a composite when the event spans reads — every byte costs a call that checks
 * the index and the parent buffer's reference count; profiled, those checked reads were a tenth of a pass-through
 * stream's CPU. One bulk copy per event makes one such check.
 *
 * <p>The array is the thread's (an event loop's), reused from event to event: a view is valid until the next
 * {@link #of} on the same thread, so a caller takes it, runs its checks and lets go before anything else can handle
 * an event. Events longer than {@value #KEPT} bytes get an array of their own for that event, so a rare large event
 * does not keep a large array alive. The copy never changes the event (its indexes and bytes stay as they were).
 */
public final class EventBytes {
    /** The longest event whose bytes go into the thread's reused array. */
    static final int KEPT = 16 * 1024;
    private static final FastThreadLocal<EventBytes> THREAD = new FastThreadLocal<>() {
        @Override
        protected EventBytes initialValue() {
            return new EventBytes();
        }
    };

    private byte[] kept = new byte[1024];
    private byte[] bytes;
    private int length;

    private EventBytes() {
    }

    /** The readable bytes of {@code event}, in this thread's view (valid until the thread's next call). */
    public static EventBytes of(ByteBuf event) {
        return of(event, event.readerIndex(), event.readableBytes());
    }

    /** The {@code n} bytes of {@code buf} from {@code index}, in this thread's view (as {@link #of(ByteBuf)}). */
    public static EventBytes of(ByteBuf buf, int index, int n) {
        EventBytes view = THREAD.get();
        view.fill(buf, index, n);
        return view;
    }

    private void fill(ByteBuf buf, int index, int n) {
        if (n > kept.length && n <= KEPT) {
            kept = new byte[Math.min(KEPT, Math.max(n, 2 * kept.length))];
        }
        bytes = n <= kept.length ? kept : new byte[n];
        buf.getBytes(index, bytes, 0, n);
        length = n;
    }

    /** The array holding the event's bytes at {@code [0, length())}; longer than that, beyond which it means nothing. */
    public byte[] bytes() {
        return bytes;
    }

    /** The event's length in bytes. */
    public int length() {
        return length;
    }
}
