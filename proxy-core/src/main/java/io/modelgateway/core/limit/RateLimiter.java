package io.modelgateway.core.limit;

import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;

/**
 * Admission control for every API request (issue: keys, limits and accounting). SKELETON: the contract is
 * fixed, the body is to be written.
 *
 * <p>Scopes checked, each only when it has limits: the key ({@link KeyConfig#limits()}), the key on this model
 * ({@link KeyConfig#limitsFor(String)}), and the model across keys ({@link ModelConfig#limits()}). State lives
 * in Caffeine caches keyed by names (key name, model name), not by config objects, so it survives a config
 * reload and a reload that changes a limit applies it to the state already there (3 requests used under a
 * new limit of 2 → refused).
 *
 * <p>Thread safety: called on event loops, any of them, concurrently; lock-free (CAS), never blocking.
 */
public final class RateLimiter {

    /**
     * Checks every limit that applies and, if all admit, reserves: one request, {@code estimatedTokens}
     * tokens (per-minute and daily), one concurrency slot. If one scope refuses, what earlier scopes reserved
     * is given back. Returns {@link Admission#UNLIMITED} (no allocation) when no scope has any limit.
     */
    public Admission admit(KeyConfig key, ModelConfig model, long estimatedTokens) {
        throw new UnsupportedOperationException("to be written");
    }
}
