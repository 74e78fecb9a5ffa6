package io.modelgateway.core.limit;

import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.netty.channel.EventLoop;

/**
 * An admission decided by the counts all replicas share in Redis ({@link SharedLimiter}): the same contract,
 * headers and 429 messages as a {@link LimitedAdmission}, with the numbers Redis computed. Admitted, it holds
 * its reservations in Redis under its id until {@link #settle} (sent once; resent only in ways Redis counts once,
 * see {@code settle.lua}); refused, it holds nothing. When the key's spend is counted (a budget on the key, or a price on
 * the model), the admission also reserves the estimated cost in the key's shared spend, settled with the record's real
 * cost: the spend budgets every replica shares.
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
    /** This replica's number of the admission: its id is {@code replicaId-sequence} ({@link ScriptParts#id}). */
    final long sequence;
    /** The encoded parts of the scripts' calls, under the key prefix the admission was made with. */
    final ScriptParts parts;
    /** Per scope, its key names and limits, encoded. */
    final ScriptParts.Scoped[] scoped;
    final long leaseTtlMillis;
    final EventLoop loop;
    final boolean holdsSlots;
    /** The key's spend hash; null when this admission counts no spend. */
    final String spendKey;
    final KeyConfig key;
    /** The month of the admission (months since 1970-01, UTC), whose spend its settlement corrects. */
    final long month;
    /** The key's budgets and the cost estimate, in micro-dollars (a budget of 0 is none). */
    final long dailyBudgetMicros;
    final long monthlyBudgetMicros;
    final long costEstimateMicros;
    /** The exchange's real cost in micro-dollars, known when it is settled with its record. */
    long costMicros;
    /** The batch asked for: how many requests' worth to take at once (1: this one alone). */
    final int want;
    /** The batch taken, admitted: 1, or more when this admission opened {@link #batch}. */
    int taken = 1;
    /** The batch this admission opened (taken above 1), which its settlement goes to; else null. */
    SharedBatch batch;
    private final SharedLimiter limiter;

    /**
     * @param costEstimateUsd the exchange's estimated cost; negative when no spend is counted for it
     */
    SharedAdmission(SharedLimiter limiter, EventLoop loop, long sequence, ScriptParts parts, long leaseTtlMillis,
            KeyConfig key, Scope[] scopes, LimitsConfig[] limits, int count, long estimate, double costEstimateUsd,
            long month, int want) {
        super(key.rateLimitHeaders(), 0);
        this.key = key;
        this.want = want;
        this.month = month;
        boolean spend = costEstimateUsd >= 0;
        this.spendKey = spend ? spendKey(parts.prefix, key.name()) : null;
        this.dailyBudgetMicros = spend ? SpendBudgets.micros(key.budget().daily()) : 0;
        this.monthlyBudgetMicros = spend ? SpendBudgets.micros(key.budget().monthly()) : 0;
        this.costEstimateMicros = spend ? SpendBudgets.micros(costEstimateUsd) : 0;
        this.limiter = limiter;
        this.loop = loop;
        this.sequence = sequence;
        this.parts = parts;
        this.leaseTtlMillis = leaseTtlMillis;
        this.scopes = scopes;
        this.limits = limits;
        this.count = count;
        this.estimate = estimate;
        this.scoped = new ScriptParts.Scoped[count];
        boolean slots = false;
        for (int i = 0; i < count; i++) {
            scoped[i] = parts.scope(scopes[i], limits[i]);
            slots |= limits[i].concurrentRequests() > 0;
        }
        this.holdsSlots = slots;
    }

    /** The admission's id, as the scripts see it. */
    String id() {
        return parts.id(sequence);
    }

    /** The Redis key of its hold: {@code h:ID} under the prefix. */
    String holdKey() {
        return parts.prefix + "h:" + id();
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

    /** The Redis key of a key's spend hash: {@code s:KEY} under the prefix. */
    static String spendKey(String prefix, String keyName) {
        return prefix + "s:" + keyName;
    }

    /** Micro-dollars reserved on the day's spend: the cost estimate when the key has a daily budget. */
    long dayReservedMicros() {
        return dailyBudgetMicros > 0 ? costEstimateMicros : 0;
    }

    /** Micro-dollars reserved on the month's spend. */
    long monthReservedMicros() {
        return monthlyBudgetMicros > 0 ? costEstimateMicros : 0;
    }

    /** Tokens reserved per minute in scope {@code i}: the estimate, at most the bucket (0 without that limit). */
    long tokensReserved(int i) {
        long tpm = limits[i].tokensPerMinute();
        return tpm == 0 ? 0 : Math.min(estimate, tpm);
    }

    /**
     * Takes admit.lua's answer: {admitted, day, requests limit, remaining, reset us, tokens limit, remaining,
     * reset us, refusing scope, refusing limit, wait ms, tokens used, requested, requests taken}.
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
            taken = (int) Math.max(1, Math.min(want, r[13]));
            return;
        }
        if (r[9] == 5 || r[9] == 6) {
            // A spend budget, checked before the scopes: x-should-retry: false and a wait to the period's end.
            boolean daily = r[9] == 5;
            long now = epochMillis();
            refuse(SpendBudgets.refusal(key, daily, daily ? key.budget().daily() : key.budget().monthly(), now),
                    SpendBudgets.untilPeriodEnd(daily, now), daily ? SpendBudgets.DAILY_BUDGET
                            : SpendBudgets.MONTHLY_BUDGET, false);
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
    public void settle(ExchangeRecord record) {
        if (spendKey != null && !settled) {
            costMicros = SpendBudgets.micros(record.costUsd());
        }
        settle(record.totalTokens());
    }

    /** Settles the tokens; the spend (when counted) with the cost of {@link #settle(ExchangeRecord)}, else 0. */
    @Override
    public void settle(long actualTokens) {
        if (settled || error != null) {
            return; // settled before, or a refusal (which Redis never charged)
        }
        settled = true;
        if (batch != null) {
            batch.done(estimate, actualTokens);
        } else {
            limiter.settle(this, actualTokens);
        }
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
