package io.modelgateway.codecs.sse;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Byte searches eight bytes at a time in a {@code byte[]} (SIMD within a register): a {@code long} read from the
 * array, little-endian, so that byte {@code i + k} of the array is bits {@code 8k…8k+7} of the word. For the
 * per-event scans of the stream path, which otherwise read and branch on every byte of every event.
 */
public final class ByteWords {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGH = 0x8080808080808080L;

    private ByteWords() {
    }

    /** The eight bytes {@code a[at, at + 8)} as a little-endian word; {@code at + 8 <= a.length}. */
    public static long word(byte[] a, int at) {
        return (long) LONGS.get(a, at);
    }

    /** {@code b} in every byte of a word, to compare a word against. */
    public static long spread(byte b) {
        return (b & 0xFFL) * ONES;
    }

    /**
     * The top bit of each byte of {@code word} that equals the byte {@code spread} was made of, every other bit
     * zero. Exact: no byte is marked that does not match (the well-known {@code (x - 0x01…) & ~x & 0x80…} form can
     * mark the byte above a match; this one cannot, as no carry crosses a byte).
     */
    public static long equalBytes(long word, long spread) {
        long x = word ^ spread;
        return ~(((x & LOW7) + LOW7) | x | LOW7);
    }

    /** The place (0–7) of the lowest byte a non-zero mask of {@link #equalBytes} marks. */
    public static int firstMarked(long mask) {
        return Long.numberOfTrailingZeros(mask) >>> 3;
    }

    /**
     * Non-zero when some byte of {@code word} is, unsigned, below the byte {@code spread} was made of ({@code n} at
     * most 128); zero when none is. A filter, not a mask: besides the lowest such byte it may mark bytes above it
     * that are not below {@code n} (a borrow runs on), so a caller looks closer at a word it passes. Cheaper than
     * two {@link #equalBytes} tests, and for line ends in JSON text (a byte below 14 is nearly always CR or LF: control
     * characters are escaped in JSON strings) it lets most words go with one test.
     */
    public static long anyBelow(long word, long spread) {
        return (word - spread) & ~word & HIGH;
    }
}
