package io.modelgateway.core.route;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ModelConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentMap;

/**
 * The routes of one config: a {@link ModelRoute} per configured model, whose deployments carry the
 * {@link DeploymentHealth} kept across configs. Immutable; built by {@link Routing} when a config is first used.
 */
public final class RoutingTable {
    private final GatewayConfig config;
    private final Map<String, ModelRoute> routes;

    RoutingTable(GatewayConfig config, ConcurrentMap<String, DeploymentHealth> health) {
        this.config = config;
        Map<String, ModelRoute> routes = new HashMap<>();
        for (ModelConfig model : config.models().values()) {
            List<DeploymentConfig> deployments = model.deployments();
            DeploymentHealth[] states = new DeploymentHealth[deployments.size()];
            for (int i = 0; i < states.length; i++) {
                states[i] = health.computeIfAbsent(key(deployments.get(i)), k -> new DeploymentHealth());
            }
            routes.put(model.name(), new ModelRoute(model, states));
        }
        for (ModelRoute route : routes.values()) {
            List<String> names = route.model().routing().fallbacks();
            // The loader checked the names; a hand-built config naming an unknown model just loses that fallback.
            route.fallbacks(names.stream().map(routes::get).filter(Objects::nonNull).toArray(ModelRoute[]::new));
        }
        this.routes = routes;
    }

    /**
     * A deployment's identity across configs: its provider's name and the upstream model. Two models routed to the
     * same place share one health, and a reload that keeps the names keeps the state.
     */
    static String key(DeploymentConfig d) {
        return d.provider().name() + '\n' + d.upstreamModel();
    }

    GatewayConfig config() {
        return config;
    }

    /** The route of a configured model; null when the config has no such model. */
    public ModelRoute route(String model) {
        return routes.get(model);
    }
}
