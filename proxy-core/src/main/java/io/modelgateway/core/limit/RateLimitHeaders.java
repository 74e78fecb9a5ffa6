package io.modelgateway.core.limit;

import io.modelgateway.codecs.ApiStyle;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.time.Instant;

/**
 * The rate-limit and retry headers of contract 2.3, in the formats the official SDKs and dashboards
 * parse: OpenAI style resets as Go durations ({@code 6m0s}), Anthropic style resets as RFC 3339 instants.
 */
final class RateLimitHeaders {
    static final AsciiString RETRY_AFTER_MS = AsciiString.cached("retry-after-ms");
    static final AsciiString SHOULD_RETRY = AsciiString.cached("x-should-retry");

    // [style][family]: 0 = OpenAI, 1 = Anthropic; 0 = requests, 1 = tokens. Cached AsciiStrings: Netty's
    // headers hash and compare them without re-encoding.
    private static final AsciiString[][] LIMIT = {
        {AsciiString.cached("x-ratelimit-limit-requests"), AsciiString.cached("x-ratelimit-limit-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-limit"),
            AsciiString.cached("anthropic-ratelimit-tokens-limit")}};
    private static final AsciiString[][] REMAINING = {
        {AsciiString.cached("x-ratelimit-remaining-requests"), AsciiString.cached("x-ratelimit-remaining-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-remaining"),
            AsciiString.cached("anthropic-ratelimit-tokens-remaining")}};
    private static final AsciiString[][] RESET = {
        {AsciiString.cached("x-ratelimit-reset-requests"), AsciiString.cached("x-ratelimit-reset-tokens")},
        {AsciiString.cached("anthropic-ratelimit-requests-reset"),
            AsciiString.cached("anthropic-ratelimit-tokens-reset")}};

    private RateLimitHeaders() {
    }

    /**
     * One family ({@code tokens} true: the tokens family, else requests).
     *
     * @param remaining  clamped at 0: a negative count (a level above a limit lowered by a reload) only confuses
     *                   clients
     * @param resetNanos until the bucket is full again; a family is a per-minute limit, so never more than a
     *                   minute (the buckets keep to that; the bound here makes the header say so whatever happens)
     * @param epochMillis the wall clock now, for the Anthropic reset instant
     */
    static void writeFamily(HttpHeaders headers, ApiStyle style, boolean tokens, long limit, long remaining,
            long resetNanos, long epochMillis) {
        int s = style == ApiStyle.ANTHROPIC ? 1 : 0;
        int f = tokens ? 1 : 0;
        headers.set(LIMIT[s][f], Long.toString(limit));
        headers.set(REMAINING[s][f], Long.toString(Math.max(0, remaining)));
        long resetMillis = ceilDiv(Math.min(TokenBucket.WINDOW_NANOS, Math.max(0, resetNanos)), 1_000_000);
        headers.set(RESET[s][f], s == 1 ? rfc3339(epochMillis + resetMillis) : goDuration(resetMillis));
    }

    /** {@code Retry-After} in whole seconds (rounded up, at least 1) and {@code retry-after-ms}, which SDKs read first. */
    static void writeRetry(HttpHeaders headers, long retryAfterMillis, boolean shouldRetry) {
        headers.set(HttpHeaderNames.RETRY_AFTER, Long.toString(Math.max(1, ceilDiv(retryAfterMillis, 1000))));
        headers.set(RETRY_AFTER_MS, Long.toString(retryAfterMillis));
        if (!shouldRetry) {
            headers.set(SHOULD_RETRY, "false");
        }
    }

    /**
     * A duration the way Go's {@code time.Duration.String} prints it, at millisecond precision: {@code 0s},
     * {@code 12ms}, {@code 1.5s}, {@code 1m30s}, {@code 6m0s}, {@code 1h0m0s}. OpenAI's reset headers use this
     * format, and clients written against them parse it.
     */
    static String goDuration(long millis) {
        if (millis <= 0) {
            return "0s";
        }
        if (millis < 1000) {
            return millis + "ms";
        }
        StringBuilder sb = new StringBuilder(16);
        long hours = millis / 3_600_000;
        long minutes = millis / 60_000 % 60;
        if (hours > 0) {
            sb.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            sb.append(minutes).append('m');
        }
        sb.append(millis / 1000 % 60);
        int fraction = (int) (millis % 1000);
        if (fraction != 0) {
            sb.append('.');
            // Three digits, trailing zeros dropped, as Go does: 1.5s, 1.05s, 1.005s.
            int digits = fraction % 100 == 0 ? 1 : fraction % 10 == 0 ? 2 : 3;
            String padded = Integer.toString(1000 + fraction).substring(1);
            sb.append(padded, 0, digits);
        }
        return sb.append('s').toString();
    }

    /** An RFC 3339 UTC instant with whole seconds ({@code 2026-08-21T12:41:00Z}), rounded up. */
    static String rfc3339(long epochMillis) {
        return Instant.ofEpochSecond(Math.floorDiv(epochMillis + 999, 1000)).toString();
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
