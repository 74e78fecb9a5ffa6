package io.modelgateway.core.exchange;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * The outcome of {@link RateLimiter#admit}: a refusal (answer 429 with {@link #error()} and the headers of
 * {@link #addHeaders}), or a reservation that the exchange settles exactly once when it ends.
 *
 * <p>Confined to the event loop of its exchange (settle is called there); the shared state it updates is
 * lock-free. Only the limits (package {@code limit}) make admissions, so callers can rely on {@link #UNLIMITED} being the one
 * admission that holds nothing.
 */
public abstract class Admission {
    /** No limit applies: admitted, adds no header, settles nothing. Shared, so the unlimited path allocates nothing. */
    public static final Admission UNLIMITED = new Unlimited();

    protected Admission() {
    }

    public abstract boolean admitted();

    /** The 429 to answer when refused (RATE_LIMIT kind; message names the limit, type requests/tokens); null when admitted. */
    public abstract GatewayError error();

    /** When refused: how long until this request would be admitted, in milliseconds (at least 1). */
    public abstract long retryAfterMillis();

    /** When refused: which limit, e.g. {@code requests_per_minute} (for metrics and logs); null when admitted. */
    public abstract String refusedLimit();

    /**
     * Adds the rate-limit header family of the caller's style (contract 2.3: {@code x-ratelimit-*} for
     * OpenAI style, {@code anthropic-ratelimit-*} for Anthropic style) when the key has rate-limit headers on
     * and a requests or tokens limit applies; on a refusal also {@code Retry-After} and {@code retry-after-ms}.
     */
    public abstract void addHeaders(HttpHeaders headers, ApiStyle style);

    /** At most how many headers {@link #addHeaders} adds: for sizing a head before they go in. */
    public int headerCount() {
        return 0;
    }

    /**
     * The exchange ended having used {@code actualTokens} (input + output; the estimate when unknown): token
     * reservations are corrected by the difference and concurrency slots freed. Only the first call counts.
     */
    public abstract void settle(long actualTokens);

    /**
     * The exchange ended, as {@code record} says: settles its tokens ({@link #settle(long)}); an admission that also
     * holds spend (a key's {@code budget_usd}) settles the record's cost too. Only the first call counts.
     */
    public void settle(ExchangeRecord record) {
        settle(record.totalTokens());
    }

    /** Stateless, hence one shared instance for every thread. */
    private static final class Unlimited extends Admission {
        @Override
        public boolean admitted() {
            return true;
        }

        @Override
        public GatewayError error() {
            return null;
        }

        @Override
        public long retryAfterMillis() {
            return 0;
        }

        @Override
        public String refusedLimit() {
            return null;
        }

        @Override
        public void addHeaders(HttpHeaders headers, ApiStyle style) {
        }

        @Override
        public void settle(long actualTokens) {
        }

        @Override
        public String toString() {
            return "Admission.UNLIMITED";
        }
    }
}
