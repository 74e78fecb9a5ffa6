package io.modelgateway.core.config;

import java.util.Objects;

/**
 * One place a model can be served: a provider and the model name that provider knows it by.
 *
 * @param upstreamModel the {@code model} sent upstream (defaults to the caller's model name)
 * @param weight        share of traffic among the model's deployments, at least 1
 * @param price         what an exchange with it costs, or null when it is not priced (then nothing counts its cost)
 */
public record DeploymentConfig(ProviderConfig provider, String upstreamModel, int weight, PriceConfig price) {

    public DeploymentConfig(ProviderConfig provider, String upstreamModel, int weight) {
        this(provider, upstreamModel, weight, null);
    }

    public DeploymentConfig {
        Objects.requireNonNull(provider, "provider");
        if (upstreamModel == null || upstreamModel.isEmpty()) {
            throw new IllegalArgumentException("upstreamModel must not be empty");
        }
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be >= 1");
        }
    }
}
