package io.modelgateway.core.observe;

/**
 * The fixed, logarithmic buckets {@link LiveStats} counts latencies in: bucket 0 holds everything under
 * {@value #BASE_NANOS} ns, bucket {@code i ≥ 1} the times from {@code BASE·2^((i-1)/4)} up to {@code BASE·2^(i/4)},
 * and the last one everything from about ten minutes up. Four buckets per doubling keep a percentile read from them
 * within ±9% of the true value (the middle of its bucket is reported), with {@value #COUNT} counters per histogram.
 *
 * <p>{@link #index} is a few arithmetic operations and three comparisons, no logarithm: it runs on the event loops
 * at the end of every exchange.
 */
final class LatencyBuckets {
    /** Counters per histogram. */
    static final int COUNT = 96;
    /** The lower bound of bucket 1: 50 µs. */
    static final long BASE_NANOS = 50_000;

    private static final double Q1 = Math.pow(2, 0.25);
    private static final double Q2 = Math.pow(2, 0.5);
    private static final double Q3 = Math.pow(2, 0.75);

    private LatencyBuckets() {
    }

    /** The bucket of {@code nanos} (negative counts as 0). */
    static int index(long nanos) {
        if (nanos < BASE_NANOS) {
            return 0;
        }
        double x = (double) nanos / BASE_NANOS; // ≥ 1
        int octave = Math.getExponent(x);
        double fraction = x / Math.scalb(1.0, octave); // in [1, 2)
        int quarter = fraction < Q1 ? 0 : fraction < Q2 ? 1 : fraction < Q3 ? 2 : 3;
        int i = 1 + 4 * octave + quarter;
        return Math.min(i, COUNT - 1);
    }

    /** The lower bound of bucket {@code i}, in nanoseconds. */
    static double lowerNanos(int i) {
        return i == 0 ? 0 : BASE_NANOS * Math.pow(2, (i - 1) / 4.0);
    }

    /** What a percentile falling into bucket {@code i} is reported as: its geometric middle, in nanoseconds. */
    static double representativeNanos(int i) {
        if (i == 0) {
            return BASE_NANOS / 2.0;
        }
        if (i == COUNT - 1) {
            return lowerNanos(i);
        }
        return BASE_NANOS * Math.pow(2, (i - 1) / 4.0 + 0.125);
    }

    /**
     * The {@code q}-quantile ({@code 0 < q ≤ 1}) of the counts {@code counts[from .. from + COUNT)}, in
     * milliseconds; NaN when they hold nothing. The rank is {@code ceil(q·total)}, as Prometheus and HdrHistogram
     * count it.
     */
    static double quantileMillis(long[] counts, int from, double q) {
        long total = 0;
        for (int i = 0; i < COUNT; i++) {
            total += counts[from + i];
        }
        if (total == 0) {
            return Double.NaN;
        }
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < COUNT; i++) {
            seen += counts[from + i];
            if (seen >= rank) {
                return representativeNanos(i) / 1e6;
            }
        }
        return representativeNanos(COUNT - 1) / 1e6;
    }
}
