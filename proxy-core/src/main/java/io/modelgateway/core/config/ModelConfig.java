package io.modelgateway.core.config;

import java.util.List;
import java.util.Objects;

/** A model as callers name it, and the deployments that serve it (at least one). */
public record ModelConfig(String name, ModelType type, List<DeploymentConfig> deployments) {

    public ModelConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        deployments = List.copyOf(deployments);
        if (deployments.isEmpty()) {
            throw new IllegalArgumentException("a model needs at least one deployment");
        }
    }
}
