package io.modelgateway.core.config;

import java.util.List;
import java.util.Objects;

/**
 * How a model's requests are spread and retried.
 *
 * @param strategy  how a deployment is chosen among the model's deployments
 * @param retries   retries before the first byte of the answer reached the caller
 * @param fallbacks models (of the same type, by name) tried in order once this model's attempts are used up.
 *                  Only this list is followed, not the fallbacks' own fallbacks: what a request may end up on is
 *                  read in one place, and no cycle can form
 */
public record RoutingConfig(RoutingStrategy strategy, RetryConfig retries, List<String> fallbacks) {
    public static final RoutingConfig DEFAULT = new RoutingConfig(RoutingStrategy.WEIGHTED, RetryConfig.DEFAULT,
            List.of());

    public RoutingConfig {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(retries, "retries");
        fallbacks = List.copyOf(fallbacks);
    }
}
