package io.modelgateway.core.server;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.simulator.SimulatorEngine;
import io.modelgateway.core.upstream.UpstreamPools;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What every connection of one server shares: the current immutable config (swapped whole on reload),
 * readiness, the per-event-loop upstream pools and the in-process simulators. Handlers read the config
 * once per request, so a request sees one consistent config from start to end.
 */
public final class GatewayContext {
    private final AtomicReference<GatewayConfig> config;
    private final UpstreamPools pools;
    private final Map<ProviderConfig, SimulatorEngine> simulators = new ConcurrentHashMap<>();
    private volatile boolean ready = true;

    public GatewayContext(GatewayConfig config, UpstreamPools pools) {
        this.config = new AtomicReference<>(config);
        this.pools = pools;
    }

    public GatewayConfig config() {
        return config.get();
    }

    public void swap(GatewayConfig next) {
        config.set(next);
    }

    public UpstreamPools pools() {
        return pools;
    }

    /** The in-process simulator of a provider of type simulator (one per provider config object). */
    public SimulatorEngine simulator(ProviderConfig provider) {
        return simulators.computeIfAbsent(provider, p -> new SimulatorEngine(p.simulator()));
    }

    public boolean ready() {
        return ready;
    }

    public void ready(boolean ready) {
        this.ready = ready;
    }
}
