package io.modelgateway.core.limit;

/**
 * The time-based usage of one scope, cached under the scope's names: its two per-minute buckets and its daily
 * budget. Concurrency is not here because it lives in a cache that never evicts (see {@link RateLimiter}).
 * All three parts exist from the start: a few dozen bytes per scope buy one cache lookup per scope per
 * request instead of one per limit.
 */
final class ScopeState {
    final TokenBucket requests = new TokenBucket();
    final TokenBucket tokens = new TokenBucket();
    final DailyBudget daily = new DailyBudget();
}
