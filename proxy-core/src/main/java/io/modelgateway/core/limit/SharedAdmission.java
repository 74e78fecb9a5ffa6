package io.modelgateway.core.limit;

import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.LimitsConfig;
import io.netty.channel.EventLoop;

/**
 * An admission decided by the counts all replicas share in Redis ({@link SharedLimiter}): the same contract,
 * headers and 429 messages as a {@link LimitedAdmission}, with the numbers Redis computed. Admitted, it holds
 * its reservations in Redis under its id until {@link #settle} (sent once; resent only in ways Redis counts once,
 * see {@code settle.lua}); refused, it holds nothing.
 *
 * <p>Confined to its exchange's event loop, like every admission; the limiter's renewal of its concurrency
 * leases reads only its final fields from another loop.
 */
final class SharedAdmission extends CountedAdmission {
    /** The scopes of one request, in the order RateLimiter checks them; at most 3. */
    final Scope[] scopes;
    final LimitsConfig[] limits;
    final int count;
    /** The token estimate, clamped to what a Lua number holds exactly. */
    final long estimate;
    final String id;
    final String prefix;
    /** Key names under the prefix, per scope: the usage hash and the lease set. */
    final String[] usageKeys;
    final String[] leaseKeys;
    final String holdKey;
    final long leaseTtlMillis;
    final EventLoop loop;
    final boolean holdsSlots;
    private final SharedLimiter limiter;

    SharedAdmission(SharedLimiter limiter, EventLoop loop, String id, String prefix, long leaseTtlMillis,
            boolean familyHeaders, Scope[] scopes, LimitsConfig[] limits, int count, long estimate) {
        super(familyHeaders, 0);
        this.limiter = limiter;
        this.loop = loop;
        this.id = id;
        this.prefix = prefix;
        this.leaseTtlMillis = leaseTtlMillis;
        this.scopes = scopes;
        this.limits = limits;
        this.count = count;
        this.estimate = estimate;
        this.usageKeys = new String[count];
        this.leaseKeys = new String[count];
        boolean slots = false;
        for (int i = 0; i < count; i++) {
            String name = keyName(scopes[i]);
            usageKeys[i] = prefix + "u:" + name;
            leaseKeys[i] = prefix + "c:" + name;
            slots |= limits[i].concurrentRequests() > 0;
        }
        this.holdKey = prefix + "h:" + id;
        this.holdsSlots = slots;
    }

    /**
     * The part of the Redis keys that names a scope: {@code k:KEY}, {@code km:KEY/MODEL}, {@code m:MODEL}. Key
     * names cannot hold a '/' (nor ':'), so the parts never run into each other whatever a model is called.
     */
    static String keyName(Scope scope) {
        return switch (scope.kind()) {
            case KEY -> "k:" + scope.keyName();
            case KEY_ON_MODEL -> "km:" + scope.keyName() + "/" + scope.modelName();
            case MODEL -> "m:" + scope.modelName();
        };
    }

    /** Tokens reserved per minute in scope {@code i}: the estimate, at most the bucket (0 without that limit). */
    long tokensReserved(int i) {
        long tpm = limits[i].tokensPerMinute();
        return tpm == 0 ? 0 : Math.min(estimate, tpm);
    }

    /**
     * Takes admit.lua's answer: {admitted, day, requests limit, remaining, reset us, tokens limit, remaining,
     * reset us, refusing scope, refusing limit, wait ms, tokens used, requested}.
     */
    void decided(long[] r, long nowNanos) {
        if (r[2] > 0) {
            requestsLimit = r[2];
            requestsRemaining = r[3];
            requestsFullAtNanos = nowNanos + r[4] * 1000;
        }
        if (r[5] > 0) {
            tokensLimit = r[5];
            tokensRemaining = r[6];
            tokensFullAtNanos = nowNanos + r[7] * 1000;
        }
        if (r[0] == 1) {
            return;
        }
        int at = (int) r[8] - 1;
        Scope scope = scopes[at];
        LimitsConfig l = limits[at];
        long wait = Math.max(1, r[10]);
        switch ((int) r[9]) {
            case 1 -> refuse(RateLimiter.requestsRefusal(scope, wait), wait, RateLimiter.REQUESTS_PER_MINUTE, true);
            case 2 -> refuse(RateLimiter.tokensRefusal(scope, l.tokensPerMinute(), r[11], r[12], wait), wait,
                    RateLimiter.TOKENS_PER_MINUTE, true);
            case 3 -> refuse(RateLimiter.concurrencyRefusal(scope, l.concurrentRequests()),
                    RateLimiter.CONCURRENCY_RETRY_MILLIS, RateLimiter.CONCURRENT_REQUESTS, true);
            // x-should-retry: false, as the local limiter says, since no retry within an SDK's patience can pass.
            case 4 -> refuse(RateLimiter.dailyRefusal(scope, l.dailyTokens(), wait), wait, RateLimiter.DAILY_TOKENS,
                    false);
            default -> throw new IllegalStateException("admit.lua answered limit " + r[9]);
        }
    }

    private void refuse(GatewayError error, long retryAfterMillis, String refusedLimit, boolean shouldRetry) {
        this.error = error;
        this.retryAfterMillis = retryAfterMillis;
        this.refusedLimit = refusedLimit;
        this.shouldRetry = shouldRetry;
    }

    @Override
    public void settle(long actualTokens) {
        if (settled || error != null) {
            return; // settled before, or a refusal (which Redis never charged)
        }
        settled = true;
        limiter.settle(this, actualTokens);
    }

    @Override
    public String toString() {
        return error == null ? "Admission[shared, admitted]" : "Admission[shared, refused " + refusedLimit + "]";
    }

    @Override
    long nanoTime() {
        return limiter.nanoTime();
    }

    @Override
    long epochMillis() {
        return limiter.epochMillis();
    }
}
