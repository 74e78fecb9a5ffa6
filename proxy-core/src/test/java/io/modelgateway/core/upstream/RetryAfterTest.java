package io.modelgateway.core.upstream;

import io.modelgateway.core.exchange.UpstreamFailure;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import org.junit.jupiter.api.Test;

/** How an upstream's wait request is read: as the SDKs read it (contract 2.3). */
class RetryAfterTest {
    private static final long NOW = 1_795_000_000_000L; // some wall-clock millis

    @Test
    void retryAfterMs_winsOverRetryAfter() {
        assertThat(UpstreamFailure.retryAfterMillis("1500", "30", NOW)).isEqualTo(1500);
        assertThat(UpstreamFailure.retryAfterMillis("12.2", null, NOW)).isEqualTo(13);
    }

    @Test
    void retryAfter_secondsOrHttpDate() {
        assertThat(UpstreamFailure.retryAfterMillis(null, "2", NOW)).isEqualTo(2000);
        assertThat(UpstreamFailure.retryAfterMillis(null, " 0 ", NOW)).isZero();
        String inFiveSeconds = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
                java.time.Instant.ofEpochMilli(NOW + 5000).atZone(java.time.ZoneOffset.UTC));
        assertThat(UpstreamFailure.retryAfterMillis(null, inFiveSeconds, NOW)).isEqualTo(5000);
        String past = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
                java.time.Instant.ofEpochMilli(NOW - 5000).atZone(java.time.ZoneOffset.UTC));
        assertThat(UpstreamFailure.retryAfterMillis(null, past, NOW)).isZero();
    }

    @Test
    void absentOrUnreadable_isMinusOne() {
        assertThat(UpstreamFailure.retryAfterMillis(null, null, NOW)).isEqualTo(-1);
        assertThat(UpstreamFailure.retryAfterMillis("soon", "later", NOW)).isEqualTo(-1);
        assertThat(UpstreamFailure.retryAfterMillis("-5", "-1", NOW)).isEqualTo(-1);
        assertThat(UpstreamFailure.retryAfterMillis("bad", "3", NOW)).as("falls back to Retry-After").isEqualTo(3000);
    }

    @Test
    void fromHeaders_caseInsensitive() {
        HttpHeaders h = new DefaultHttpHeaders().add("Retry-After", "4");
        assertThat(UpstreamFailure.retryAfterMillis(h)).isEqualTo(4000);
        h.add("Retry-After-Ms", "250");
        assertThat(UpstreamFailure.retryAfterMillis(h)).isEqualTo(250);
    }
}
