package io.modelgateway.core.simulator;

import io.netty.buffer.ByteBuf;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * The events of a simulated stream, in order; immutable. A token's event is not held as an object: the list keeps
 * the token's quoted bytes (a vocabulary word's, shared) and the frame around it (shared by the tokens of a block),
 * the pacer writes the event from them when it is due ({@link #length}, {@link #writeTo}), and a {@link SimEvent} is
 * made only when the list is read as a list (tests). So a stream waiting to send its answer holds about nine bytes
 * per token (two references and how long it waits) where an event object and its array of parts took about sixty,
 * and held them as long as the stream lived — seconds, several young collections, each of which copied them
 * (measured with ten thousand paced streams: proxy-bench/README.md, "Issue #13, 2026-11-30, after S14").
 */
final class SimEvents extends AbstractList<SimEvent> implements RandomAccess {

    /** How long an event waits after the one before it (or the head): nothing, the time to first token, a token. */
    static final byte NO_WAIT = 0;
    static final byte FIRST_TOKEN = 1;
    static final byte TOKEN = 2;

    /** What a token's event is made of around the token's quoted bytes: the same arrays for every token. */
    static final class TokenFrame {
        private final byte[][] before;
        private final byte[][] after;
        private final int length;

        TokenFrame(byte[][] before, byte[][] after) {
            this.before = before;
            this.after = after;
            this.length = SimEvent.length(before) + SimEvent.length(after);
        }

        byte[][] around(byte[] token) {
            byte[][] parts = new byte[before.length + 1 + after.length][];
            System.arraycopy(before, 0, parts, 0, before.length);
            parts[before.length] = token;
            System.arraycopy(after, 0, parts, before.length + 1, after.length);
            return parts;
        }

        void writeTo(byte[] token, ByteBuf out) {
            for (byte[] p : before) {
                out.writeBytes(p);
            }
            out.writeBytes(token);
            for (byte[] p : after) {
                out.writeBytes(p);
            }
        }
    }

    /**
     * Per event: a {@link SimEvent}, its parts ({@code byte[][]}), or a token's quoted bytes ({@code byte[]}, the
     * vocabulary's own) that frames[i] frames.
     */
    private final Object[] sources;
    private final TokenFrame[] frames;
    private final byte[] waits;
    private final long firstTokenNanos;
    private final long tokenNanos;
    private final int size;

    SimEvents(Object[] sources, TokenFrame[] frames, byte[] waits, int size, long firstTokenNanos, long tokenNanos) {
        this.sources = sources;
        this.frames = frames;
        this.waits = waits;
        this.size = size;
        this.firstTokenNanos = firstTokenNanos;
        this.tokenNanos = tokenNanos;
    }

    /** The events of {@code events}, as they are (a list of this kind is returned itself). */
    static SimEvents of(List<SimEvent> events) {
        if (events instanceof SimEvents same) {
            return same;
        }
        Object[] sources = events.toArray();
        for (Object e : sources) {
            Objects.requireNonNull(e, "event");
        }
        return new SimEvents(sources, null, null, sources.length, 0, 0);
    }

    @Override
    public SimEvent get(int i) {
        Objects.checkIndex(i, size);
        Object s = sources[i];
        if (s instanceof SimEvent e) {
            return e;
        }
        return new SimEvent(delayNanos(i), parts(s, frames[i]));
    }

    /** The parts of an event kept as {@code source}: its own ({@code byte[][]}), or a token framed by {@code frame}. */
    static byte[][] parts(Object source, TokenFrame frame) {
        return source instanceof byte[] token ? frame.around(token) : (byte[][]) source;
    }

    /** The number of bytes of event {@code i}, without making it. */
    int length(int i) {
        Objects.checkIndex(i, size);
        Object s = sources[i];
        if (s instanceof byte[] token) {
            return frames[i].length + token.length;
        }
        return s instanceof SimEvent e ? e.length() : SimEvent.length((byte[][]) s);
    }

    /** Writes event {@code i}'s bytes to {@code out}, without making the event. */
    void writeTo(int i, ByteBuf out) {
        Objects.checkIndex(i, size);
        Object s = sources[i];
        if (s instanceof byte[] token) {
            frames[i].writeTo(token, out);
        } else if (s instanceof SimEvent e) {
            e.writeTo(out);
        } else {
            for (byte[] p : (byte[][]) s) {
                out.writeBytes(p);
            }
        }
    }

    /** How long after the one before it event {@code i} is due, without making it. */
    long delayNanos(int i) {
        Objects.checkIndex(i, size);
        if (sources[i] instanceof SimEvent e) {
            return e.delayNanos();
        }
        return switch (waits[i]) {
            case FIRST_TOKEN -> firstTokenNanos;
            case TOKEN -> tokenNanos;
            default -> 0;
        };
    }

    @Override
    public int size() {
        return size;
    }
}
