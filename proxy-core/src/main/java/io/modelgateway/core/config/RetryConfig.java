package io.modelgateway.core.config;

/**
 * How often, and after how long a wait, a model's request is tried again when its upstream fails before the
 * first byte of the answer reached the caller.
 *
 * @param max          retries after the first attempt on this model's deployments (so at most {@code max + 1}
 *                     attempts on the model; its fallback models then get their own)
 * @param backoffMs    the base of the exponential backoff before trying a deployment again
 * @param maxBackoffMs the cap of that backoff, and the longest upstream {@code Retry-After} the gateway waits
 *                     for: a longer one moves on (another deployment, a fallback) or is relayed to the caller
 */
public record RetryConfig(int max, long backoffMs, long maxBackoffMs) {
    public static final int MAX_RETRIES = 10;
    public static final long MAX_BACKOFF_MS = 60_000;
    public static final RetryConfig DEFAULT = new RetryConfig(2, 100, 2000);
    /** A single attempt. */
    public static final RetryConfig NONE = new RetryConfig(0, 100, 2000);

    public RetryConfig {
        if (max < 0 || max > MAX_RETRIES) {
            throw new IllegalArgumentException("max must be 0.." + MAX_RETRIES);
        }
        if (backoffMs < 1 || maxBackoffMs < backoffMs || maxBackoffMs > MAX_BACKOFF_MS) {
            throw new IllegalArgumentException("need 1 <= backoff_ms <= max_backoff_ms <= " + MAX_BACKOFF_MS);
        }
    }
}
