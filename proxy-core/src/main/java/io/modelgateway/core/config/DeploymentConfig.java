package io.modelgateway.core.config;

import java.util.Objects;

/**
 * One place a model can be served: a provider and the model name that provider knows it by.
 *
 * @param upstreamModel the {@code model} sent upstream (defaults to the caller's model name)
 * @param weight        share of traffic among the model's deployments, at least 1
 */
public record DeploymentConfig(ProviderConfig provider, String upstreamModel, int weight) {

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
