package io.modelgateway.core.simulator;

import io.netty.buffer.ByteBuf;

/**
 * One server-sent event of a simulated stream: its bytes in UTF-8, framing included, ending with the blank line
 * ({@code "data: {...}\n\n"} or {@code "event: x\ndata: {...}\n\n"}), and when it is due.
 *
 * <p>The bytes are held as the parts they were assembled from, in order, and none is ever modified: a chat stream's
 * events share their per-stream prefix ({@code data: {"id":…,"choices":[}) and suffix, and the JSON around a token,
 * so an event costs about 55 bytes (this object and its array of parts) instead of about 240 (a copy of its bytes).
 * A stream's token events are made only when due ({@link SimEvents}); the others are held from the start.
 */
public final class SimEvent {

    private final long delayNanos;
    private final byte[][] parts;
    private final int length;

    /** An event whose bytes are one array. */
    public SimEvent(long delayNanos, byte[] bytes) {
        this(delayNanos, new byte[][] {bytes});
    }

    /** An event whose bytes are {@code parts} one after the other (the array is kept, not copied). */
    SimEvent(long delayNanos, byte[][] parts) {
        this.delayNanos = delayNanos;
        this.parts = parts;
        this.length = length(parts);
    }

    static int length(byte[][] parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        return n;
    }

    /** How long after the previous event was due (or the head, for the first) this one is due. */
    public long delayNanos() {
        return delayNanos;
    }

    /** The number of bytes of the event. */
    public int length() {
        return length;
    }

    /** The event's bytes as one array (a new one unless the event is one part; either way not to be modified). */
    public byte[] bytes() {
        return parts.length == 1 ? parts[0] : concat(parts);
    }

    static byte[] concat(byte[][] parts) {
        byte[] out = new byte[length(parts)];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /** Writes the event's bytes to {@code out}. */
    public void writeTo(ByteBuf out) {
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
    }
}
