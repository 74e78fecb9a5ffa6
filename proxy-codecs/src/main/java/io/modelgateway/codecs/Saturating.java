package io.modelgateway.codecs;

/**
 * Long arithmetic that sticks at {@link Long#MAX_VALUE} or {@link Long#MIN_VALUE} instead of wrapping around. Every
 * sum the gateway makes of numbers a peer controls (token counts, usage, limit levels, durations derived from them)
 * goes through here: a wrapped sum turns a huge count into a negative one, which then reads as "nothing used" or
 * breaks whatever refuses negative values. No allocation, no exception; cheap enough for the hot path.
 */
public final class Saturating {
    private Saturating() {
    }

    /** {@code a + b}, or the bound it overflowed past. */
    public static long add(long a, long b) {
        long r = a + b;
        // Overflow iff both operands have the sign opposite to the result's.
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** {@code a - b}, or the bound it overflowed past. */
    public static long subtract(long a, long b) {
        long r = a - b;
        // Overflow iff the operands' signs differ and the result's sign is not a's.
        if (((a ^ b) & (a ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** {@code a * b}, or the bound it overflowed past. */
    public static long multiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        // The product fits iff the high half is only the sign extension of the low half.
        if (high == (low >> 63)) {
            return low;
        }
        return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
}
