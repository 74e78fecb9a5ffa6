package io.modelgateway.core.config;

import java.util.List;
import java.util.Objects;

/**
 * A model as callers name it, and the deployments that serve it (at least one).
 *
 * @param maxOutputTokens    the model's output limit, 0 when unknown (GD-12 default: min(4096, this))
 * @param noTemperature      GD-19: the model takes no temperature (dropped on chat, 400 on messages)
 * @param supportsDimensions embeddings: whether {@code dimensions} may be sent (else 400)
 * @param encodeBase64       embeddings: the provider returns floats only, so the gateway asks for floats and
 *                           encodes {@code base64} itself when the caller wants it
 * @param limits             limits of this model across all keys ({@link LimitsConfig#NONE} when none)
 * @param routing            balancing, retries and fallbacks ({@link RoutingConfig#DEFAULT} when not configured)
 */
public record ModelConfig(String name, ModelType type, List<DeploymentConfig> deployments, int maxOutputTokens,
        boolean noTemperature, boolean supportsDimensions, boolean encodeBase64, LimitsConfig limits,
        RoutingConfig routing) {

    /** The largest number of deployments of one model (the router keeps sets of them in a {@code long}). */
    public static final int MAX_DEPLOYMENTS = 64;

    public ModelConfig(String name, ModelType type, List<DeploymentConfig> deployments, int maxOutputTokens,
            boolean noTemperature, boolean supportsDimensions, boolean encodeBase64, LimitsConfig limits) {
        this(name, type, deployments, maxOutputTokens, noTemperature, supportsDimensions, encodeBase64, limits,
                RoutingConfig.DEFAULT);
    }

    public ModelConfig(String name, ModelType type, List<DeploymentConfig> deployments, int maxOutputTokens,
            boolean noTemperature, boolean supportsDimensions, boolean encodeBase64) {
        this(name, type, deployments, maxOutputTokens, noTemperature, supportsDimensions, encodeBase64,
                LimitsConfig.NONE);
    }

    public ModelConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        deployments = List.copyOf(deployments);
        limits = limits == null ? LimitsConfig.NONE : limits;
        routing = routing == null ? RoutingConfig.DEFAULT : routing;
        if (deployments.isEmpty()) {
            throw new IllegalArgumentException("a model needs at least one deployment");
        }
        if (deployments.size() > MAX_DEPLOYMENTS) {
            throw new IllegalArgumentException("a model has at most " + MAX_DEPLOYMENTS + " deployments");
        }
        if (routing.fallbacks().contains(name)) {
            throw new IllegalArgumentException("a model cannot fall back to itself");
        }
    }

    /**
     * What a spend budget reserves for an exchange of {@code inputTokens} and {@code outputTokens} on this model:
     * the dearest of its deployments' prices, since the one that serves is chosen later; 0 when none is priced.
     */
    public double costEstimate(long inputTokens, long outputTokens) {
        double most = 0;
        for (int i = 0; i < deployments.size(); i++) {
            PriceConfig p = deployments.get(i).price();
            if (p != null) {
                most = Math.max(most, p.estimate(inputTokens, outputTokens));
            }
        }
        return most;
    }

    /** Whether any deployment has a price, so that the model's exchanges have a cost. */
    public boolean priced() {
        for (int i = 0; i < deployments.size(); i++) {
            if (deployments.get(i).price() != null) {
                return true;
            }
        }
        return false;
    }
}
