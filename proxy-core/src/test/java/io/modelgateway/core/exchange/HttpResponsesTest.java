package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

/** The retry headers a 429/503/529 always carries, whatever numbers a provider put in its own. */
class HttpResponsesTest {

    private static HttpHeaders retry(String name, String value) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set(name, value);
        HttpResponses.ensureRetryHeaders(h, 429);
        return h;
    }

    @Test
    void secondsOnly_getsTheMillisecondsToo_andMillisecondsOnly_theSecondsRoundedUp() {
        assertThat(retry("retry-after", "7").get("retry-after-ms")).isEqualTo("7000");
        assertThat(retry("retry-after-ms", "1500").get("retry-after")).isEqualTo("2");
        HttpHeaders none = new DefaultHttpHeaders();
        HttpResponses.ensureRetryHeaders(none, 503);
        assertThat(none.get("retry-after")).isEqualTo("1");
        assertThat(none.get("retry-after-ms")).isEqualTo("1000");
    }

    /** A hostile or broken provider's values never wrap into a negative wait or go below zero. */
    @Test
    void hugeOrNegativeNumbers_saturate_neverWrapNegative() {
        assertThat(retry("retry-after", String.valueOf(Long.MAX_VALUE / 10)).get("retry-after-ms"))
                .isEqualTo(String.valueOf(Long.MAX_VALUE));
        assertThat(retry("retry-after", "-5").get("retry-after-ms")).isEqualTo("0");
        assertThat(retry("retry-after-ms", String.valueOf(Long.MAX_VALUE)).get("retry-after"))
                .isEqualTo(String.valueOf(Long.MAX_VALUE / 1000));
        assertThat(retry("retry-after-ms", "-5000").get("retry-after")).isEqualTo("1");
    }
}
