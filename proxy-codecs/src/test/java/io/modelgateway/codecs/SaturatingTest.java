package io.modelgateway.codecs;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class SaturatingTest {
    private static final long MAX = Long.MAX_VALUE;
    private static final long MIN = Long.MIN_VALUE;
    private static final long[] EDGES = {0, 1, -1, 2, -2, 1_000_000_000_000_000_000L, -1_000_000_000_000_000_000L,
        3_037_000_499L, 3_037_000_500L, -3_037_000_500L, MAX, MAX - 1, MIN, MIN + 1, MAX / 2, MIN / 2, 4_294_967_296L};

    @Test
    void add_overflowingEitherWay_sticksAtTheBound() {
        assertThat(Saturating.add(MAX, 1)).isEqualTo(MAX);
        assertThat(Saturating.add(1_000_000_000_000_000_000L * 9, 1_000_000_000_000_000_000L)).isEqualTo(MAX);
        assertThat(Saturating.add(MIN, -1)).isEqualTo(MIN);
        assertThat(Saturating.add(MAX, MIN)).isEqualTo(-1);
        assertThat(Saturating.add(40, 2)).isEqualTo(42);
    }

    @Test
    void subtract_overflowingEitherWay_sticksAtTheBound() {
        assertThat(Saturating.subtract(MIN, 1)).isEqualTo(MIN);
        assertThat(Saturating.subtract(MAX, -1)).isEqualTo(MAX);
        assertThat(Saturating.subtract(0, MIN)).isEqualTo(MAX);
        assertThat(Saturating.subtract(-1, MIN)).isEqualTo(MAX);
        assertThat(Saturating.subtract(44, 2)).isEqualTo(42);
    }

    @Test
    void multiply_overflowingEitherWay_sticksAtTheBound() {
        assertThat(Saturating.multiply(MAX, 2)).isEqualTo(MAX);
        assertThat(Saturating.multiply(MIN, -1)).isEqualTo(MAX);
        assertThat(Saturating.multiply(MIN, 2)).isEqualTo(MIN);
        assertThat(Saturating.multiply(-3_037_000_500L, 3_037_000_500L)).isEqualTo(MIN);
        assertThat(Saturating.multiply(6, 7)).isEqualTo(42);
    }

    @Test
    void everyOperation_onEdgeValues_isTheExactResultClampedToLong() {
        for (long a : EDGES) {
            for (long b : EDGES) {
                BigInteger x = BigInteger.valueOf(a);
                BigInteger y = BigInteger.valueOf(b);
                assertThat(Saturating.add(a, b)).as("%d + %d", a, b).isEqualTo(clamp(x.add(y)));
                assertThat(Saturating.subtract(a, b)).as("%d - %d", a, b).isEqualTo(clamp(x.subtract(y)));
                assertThat(Saturating.multiply(a, b)).as("%d * %d", a, b).isEqualTo(clamp(x.multiply(y)));
            }
        }
    }

    private static long clamp(BigInteger v) {
        return v.max(BigInteger.valueOf(MIN)).min(BigInteger.valueOf(MAX)).longValueExact();
    }
}
