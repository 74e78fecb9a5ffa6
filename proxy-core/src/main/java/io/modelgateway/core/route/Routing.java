package io.modelgateway.core.route;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.observe.DeploymentStates;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The routing state one gateway shares across connections and event loops: the health of every deployment ever
 * configured (kept by provider name and upstream model, so it outlives reloads, like the limiters' counters), and
 * the {@link RoutingTable} of the config in use.
 *
 * <p>The table is built on first use of a config rather than on reload, so {@code GatewayContext.swap} stays a
 * plain reference swap; requests racing a reload may both build a table (cheap, and the healths they share come
 * from the one map). Health entries of deployments no longer configured are kept: a few objects per distinct
 * deployment ever configured, and a reload back keeps their state.
 */
public final class Routing {
    private final ConcurrentHashMap<String, DeploymentHealth> health = new ConcurrentHashMap<>();
    private volatile RoutingTable table;

    /** The table of {@code config}: the cached one when it was built from this very config object. */
    public RoutingTable table(GatewayConfig config) {
        RoutingTable t = table;
        if (t == null || t.config() != config) {
            t = new RoutingTable(config, health);
            table = t;
        }
        return t;
    }

    /**
     * The deployments of {@code config} with their health at {@code now}, in config order, each once (with every
     * model routed to it), for the dashboard. Reads atomics only; a deployment no request has used yet is shown
     * in rotation with no failures.
     */
    public List<DeploymentStates.State> states(GatewayConfig config, long now) {
        Map<String, List<String>> models = new LinkedHashMap<>();
        Map<String, DeploymentConfig> deployments = new LinkedHashMap<>();
        for (ModelConfig model : config.models().values()) {
            for (DeploymentConfig d : model.deployments()) {
                String key = RoutingTable.key(d);
                deployments.putIfAbsent(key, d);
                List<String> names = models.computeIfAbsent(key, k -> new ArrayList<>(2));
                if (!names.contains(model.name())) {
                    names.add(model.name());
                }
            }
        }
        List<DeploymentStates.State> states = new ArrayList<>(deployments.size());
        for (Map.Entry<String, DeploymentConfig> e : deployments.entrySet()) {
            DeploymentConfig d = e.getValue();
            DeploymentHealth h = health.get(e.getKey());
            List<String> names = List.copyOf(models.get(e.getKey()));
            if (h == null) {
                states.add(new DeploymentStates.State(d.provider().name(), d.upstreamModel(), names,
                        DeploymentStates.Rotation.IN_ROTATION, 0, 0, 0, -1));
                continue;
            }
            long ago = h.lastFailureAgoNanos(now);
            states.add(new DeploymentStates.State(d.provider().name(), d.upstreamModel(), names,
                    h.rotation(now, d.provider().cooldown()), h.inFlight(), h.consecutiveFailures(), h.failuresTotal(),
                    ago < 0 ? -1 : ago / 1_000_000));
        }
        return states;
    }

    /** The health of a deployment (tests and diagnostics); null when no table has included it yet. */
    public DeploymentHealth health(DeploymentConfig deployment) {
        return health.get(RoutingTable.key(deployment));
    }
}
