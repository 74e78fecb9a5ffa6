package io.modelgateway.core.config;

/**
 * The limits of one scope (a key, a key on one model, or a model across all keys). Zero means "no limit" for
 * each field; {@link #NONE} has none at all.
 *
 * @param requestsPerMinute  requests admitted per minute (a token bucket of this size refilling continuously)
 * @param tokensPerMinute    input + output tokens per minute: an estimate is reserved at admission and settled
 *                           against the real usage when the exchange ends
 * @param concurrentRequests exchanges in flight at once
 * @param dailyTokens        input + output tokens per UTC day
 */
public record LimitsConfig(long requestsPerMinute, long tokensPerMinute, int concurrentRequests, long dailyTokens) {
    public static final LimitsConfig NONE = new LimitsConfig(0, 0, 0, 0);

    public LimitsConfig {
        if (requestsPerMinute < 0 || tokensPerMinute < 0 || concurrentRequests < 0 || dailyTokens < 0) {
            throw new IllegalArgumentException("limits are zero (none) or positive");
        }
    }

    public boolean isEmpty() {
        return requestsPerMinute == 0 && tokensPerMinute == 0 && concurrentRequests == 0 && dailyTokens == 0;
    }
}
