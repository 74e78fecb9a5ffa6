package io.modelgateway.core.limit;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.exchange.Admission;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * What an admission decided by counted limits reports, whether this replica counted them ({@link LimitedAdmission})
 * or all replicas through Redis ({@link SharedAdmission}): admitted or refused (the error, its {@code Retry-After},
 * the limit that refused), and the rate-limit header families of the scope with the fewest remaining. The two
 * subclasses fill these fields as they decide; the reading is the same for both, so it is here once.
 *
 * <p>Confined to the exchange's event loop (the {@link Admission} contract), so the fields are plain.
 */
abstract class CountedAdmission extends Admission {
    private final boolean familyHeaders;

    // The header families: the scope with the fewest remaining for each (limit 0: no scope has that limit).
    long requestsLimit;
    long requestsRemaining;
    long requestsFullAtNanos;
    long tokensLimit;
    long tokensRemaining;
    long tokensFullAtNanos;

    GatewayError error;
    long retryAfterMillis;
    String refusedLimit;
    boolean shouldRetry = true;
    boolean settled;

    /** @param remaining what the families start from before any scope is counted */
    CountedAdmission(boolean familyHeaders, long remaining) {
        this.familyHeaders = familyHeaders;
        this.requestsRemaining = remaining;
        this.tokensRemaining = remaining;
    }

    /** The limiter's monotonic clock, in which the {@code *FullAtNanos} instants are kept. */
    abstract long nanoTime();

    /** The limiter's wall clock (Anthropic's reset headers are dates). */
    abstract long epochMillis();

    @Override
    public boolean admitted() {
        return error == null;
    }

    @Override
    public GatewayError error() {
        return error;
    }

    @Override
    public long retryAfterMillis() {
        return error == null ? 0 : retryAfterMillis;
    }

    @Override
    public String refusedLimit() {
        return refusedLimit;
    }

    @Override
    public int headerCount() {
        int n = error != null ? 3 : 0; // Retry-After, retry-after-ms, x-should-retry
        if (familyHeaders) {
            n += (requestsLimit > 0 ? 3 : 0) + (tokensLimit > 0 ? 3 : 0); // limit, remaining, reset
        }
        return n;
    }

    @Override
    public void addHeaders(HttpHeaders headers, ApiStyle style) {
        if (error != null) {
            RateLimitHeaders.writeRetry(headers, retryAfterMillis, shouldRetry);
        }
        if (!familyHeaders || (requestsLimit == 0 && tokensLimit == 0)) {
            return;
        }
        // Resets are kept as instants on the monotonic clock and turned into durations now: a success's headers
        // go out when the upstream answers, which may be seconds after admission.
        long now = nanoTime();
        long epochMillis = style == ApiStyle.ANTHROPIC ? epochMillis() : 0;
        if (requestsLimit > 0) {
            RateLimitHeaders.writeFamily(headers, style, false, requestsLimit, requestsRemaining,
                    requestsFullAtNanos - now, epochMillis);
        }
        if (tokensLimit > 0) {
            RateLimitHeaders.writeFamily(headers, style, true, tokensLimit, tokensRemaining,
                    tokensFullAtNanos - now, epochMillis);
        }
    }
}
