package io.modelgateway.core.limit;

import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;

/**
 * Requests' worth taken from the shared counts by one check and used by the next requests of the same key and model
 * on the same event loop without asking Redis (the {@code redis.batch} setting). admit.lua takes a batch only while
 * every limit of the request stays far from reached (its part at most 1/64 of the limit, and at least a quarter of
 * the limit free after it), and only where no concurrency and no spend is counted; near a limit every request is
 * checked alone, so what is admitted never passes a limit and a refusal is decided by the shared counts as before.
 * Once three quarters of a batch are used, one request asks for the next while the others use the rest.
 *
 * <p>The batch was counted in Redis whole when it was taken: {@code taken} requests, and {@code taken} times the
 * first request's token estimate per minute and on the day. Each request it admits draws its own estimate from
 * those tokens and corrects it by its actual tokens when it ends. The batch closes when it is used up, when a
 * request does not fit what is left, and {@link SharedLimiter#BATCH_MILLIS} after it was taken; once closed and its
 * last request ended, one settlement (settle.lua, under the first admission's hold) gives back the requests it did
 * not use and corrects the tokens by the actual usage of all of them, counted once like any settlement.
 *
 * <p>Confined to the event loop of the admission that took it; its admissions' settlements move there.
 */
final class SharedBatch {
    /** The admission that took the batch: its hold, scopes and keys are the batch's. */
    final SharedAdmission holder;
    final ModelConfig model;
    final int taken;
    /** Tokens of the batch's reservations: taken times the first estimate. */
    final long tokens;
    /** Whether a scope limits tokens (per minute or per day); if none does, the tokens left do not matter. */
    private final boolean countsTokens;
    final long closesAtNanos;
    /** The header families as Redis left them after the whole batch was counted. */
    private final long requestsLimit;
    private final long requestsLeft;
    private final long requestsFullAtNanos;
    private final long tokensLimit;
    private final long tokensLeft;
    private final long tokensFullAtNanos;

    /** Requests admitted (the holder's included). */
    int used = 1;
    /** Tokens drawn: each running request's estimate, each ended one's actual tokens. */
    long drawn;
    /** Admitted requests not yet settled. */
    int running = 1;
    boolean closed;
    private final SharedLimiter limiter;

    SharedBatch(SharedLimiter limiter, SharedAdmission holder, ModelConfig model, long nowNanos, long lifeNanos) {
        this.limiter = limiter;
        this.holder = holder;
        this.model = model;
        this.taken = holder.taken;
        this.tokens = holder.estimate * taken;
        this.drawn = holder.estimate;
        boolean counts = false;
        for (int i = 0; i < holder.count; i++) {
            counts |= holder.limits[i].tokensPerMinute() > 0 || holder.limits[i].dailyTokens() > 0;
        }
        this.countsTokens = counts;
        this.closesAtNanos = nowNanos + lifeNanos;
        this.requestsLimit = holder.requestsLimit;
        this.requestsLeft = holder.requestsRemaining;
        this.requestsFullAtNanos = holder.requestsFullAtNanos;
        this.tokensLimit = holder.tokensLimit;
        this.tokensLeft = holder.tokensRemaining;
        this.tokensFullAtNanos = holder.tokensFullAtNanos;
        // The holder reports what is left for the requests after it, as one request alone would.
        report(holder);
    }

    /** Whether this batch may still admit a request of {@code key} on {@code model} with {@code estimate} tokens. */
    boolean fits(KeyConfig key, ModelConfig model, ScriptParts parts, long estimate,
            long nowNanos) {
        return !closed && used < taken && (!countsTokens || drawn + estimate <= tokens)
                && nowNanos - closesAtNanos < 0 && holder.key == key && this.model == model && holder.parts == parts;
    }

    /** Admits one more request (after {@link #fits}). */
    Batched take(long estimate) {
        used++;
        running++;
        drawn += estimate;
        Batched a = new Batched(this, estimate);
        report(a);
        return a;
    }

    private void report(CountedAdmission a) {
        if (requestsLimit > 0) {
            a.requestsLimit = requestsLimit;
            a.requestsRemaining = requestsLeft + (taken - used);
            a.requestsFullAtNanos = requestsFullAtNanos;
        }
        if (tokensLimit > 0) {
            a.tokensLimit = tokensLimit;
            a.tokensRemaining = tokensLeft + Math.max(0, tokens - drawn);
            a.tokensFullAtNanos = tokensFullAtNanos;
        }
    }

    /** A request of the batch ended with {@code actual} tokens; on any thread. */
    void done(long estimate, long actual) {
        if (holder.loop.inEventLoop()) {
            ended(estimate, actual);
        } else {
            holder.loop.execute(() -> ended(estimate, actual));
        }
    }

    private void ended(long estimate, long actual) {
        drawn += Math.max(0, actual) - estimate;
        running--;
        if (closed && running == 0) {
            limiter.settleBatch(this);
        }
    }

    /** No more requests: settled now, or when its last running request ends. On the loop. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (running == 0) {
            limiter.settleBatch(this);
        }
    }

    /** One request admitted from a batch, without a Redis round trip of its own. */
    static final class Batched extends CountedAdmission {
        private final SharedBatch batch;
        private final long estimate;

        Batched(SharedBatch batch, long estimate) {
            super(batch.holder.key.rateLimitHeaders(), 0);
            this.batch = batch;
            this.estimate = estimate;
        }

        @Override
        public void settle(long actualTokens) {
            if (settled) {
                return;
            }
            settled = true;
            batch.done(estimate, actualTokens);
        }

        @Override
        long nanoTime() {
            return batch.limiter.nanoTime();
        }

        @Override
        long epochMillis() {
            return batch.limiter.epochMillis();
        }

        @Override
        public String toString() {
            return "Admission[shared, batched]";
        }
    }
}
