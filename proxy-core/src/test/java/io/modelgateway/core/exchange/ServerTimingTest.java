package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The Server-Timing value, checked against the JDK's decimal arithmetic (milliseconds, three decimals, truncated). */
class ServerTimingTest {
    private static String reference(long nanos) {
        return new BigDecimal(nanos / 1000).movePointLeft(3).setScale(3, RoundingMode.DOWN).toPlainString();
    }

    @Test
    void value_gatewayAndUpstreamParts_asMillisecondsWithThreeDecimals() {
        Random rnd = new Random(3);
        long[] fixed = {0, 999, 1000, 1_000_000, 1_234_567, 59_999_999_999L, Long.MAX_VALUE / 4};
        for (int i = 0; i < 2000; i++) {
            long start = 1_000_000_000L;
            long upstream = i < fixed.length ? fixed[i] : (long) (rnd.nextDouble() * Math.pow(10, rnd.nextInt(15)));
            long gateway = i < fixed.length ? fixed[fixed.length - 1 - i] : rnd.nextInt(50_000_000);
            ExchangeRecord record = new ExchangeRecord("req", Endpoint.CHAT_COMPLETIONS, start, 0, 0);
            record.upstreamSent(start + 10);
            record.upstreamHead(start + 10 + upstream);
            long now = start + gateway + upstream;

            assertThat(ServerTiming.value(record, now).toString())
                    .isEqualTo("gateway;dur=" + reference(gateway) + ", upstream;dur=" + reference(upstream));
        }
    }

    @Test
    void value_noUpstreamAsked_gatewayPartOnly() {
        ExchangeRecord record = new ExchangeRecord("req", Endpoint.CHAT_COMPLETIONS, 5_000, 0, 0);

        assertThat(ServerTiming.value(record, 5_000 + 12_345_678).toString()).isEqualTo("gateway;dur=12.345");
        assertThat(ServerTiming.value(record, 5_000).toString()).isEqualTo("gateway;dur=0.000");
    }
}
