package io.modelgateway.core.route;

import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.GatewayConfig;
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

    /** The health of a deployment (tests and diagnostics); null when no table has included it yet. */
    public DeploymentHealth health(DeploymentConfig deployment) {
        return health.get(RoutingTable.key(deployment));
    }
}
