package io.modelgateway.core.exchange;

import io.netty.buffer.ByteBuf;
import java.util.Objects;

/**
 * A non-negative whole number's decimal text as a header value that changes with every answer (a remaining count):
 * the number and its length, each character worked out when read — the encoders read a value by {@code length} and
 * {@code charAt} — instead of a {@code String} and its array per answer. Its static helpers count and write such a
 * number's digits for the heads the gateway writes as bytes.
 */
public final class DecimalText implements CharSequence {
    private static final long[] POWERS = new long[19];

    static {
        POWERS[0] = 1;
        for (int i = 1; i < POWERS.length; i++) {
            POWERS[i] = 10 * POWERS[i - 1];
        }
    }

    private final long value;
    private final int length;

    public DecimalText(long value) {
        if (value < 0) {
            throw new IllegalArgumentException("negative: " + value);
        }
        this.value = value;
        this.length = digitCount(value);
    }

    /** How many decimal digits {@code value} (not negative) has. */
    public static int digitCount(long value) {
        int n = 1;
        while (n < POWERS.length && value >= POWERS[n]) {
            n++;
        }
        return n;
    }

    /** Writes the decimal digits of {@code value} (not negative) to {@code out}. */
    public static void write(ByteBuf out, long value) {
        for (int i = digitCount(value) - 1; i >= 0; i--) {
            out.writeByte((int) ('0' + value / POWERS[i] % 10));
        }
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public char charAt(int index) {
        Objects.checkIndex(index, length);
        return (char) ('0' + value / POWERS[length - 1 - index] % 10);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
        return toString().subSequence(start, end);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
