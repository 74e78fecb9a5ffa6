package io.modelgateway.core.server;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.limit.RateLimiter;
import io.modelgateway.core.observe.ExchangeObserver;
import io.modelgateway.core.observe.ExchangeRecord;
import io.modelgateway.core.observe.Outcome;
import io.modelgateway.core.route.Routing;
import io.modelgateway.core.simulator.SimulatorEngine;
import io.modelgateway.core.upstream.CollectedBudget;
import io.modelgateway.core.upstream.UpstreamPools;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;

/**
 * What every connection of one server shares: the current immutable config (swapped whole on reload),
 * readiness, the per-event-loop upstream pools and the in-process simulators. Handlers read the config
 * once per request, so a request sees one consistent config from start to end.
 */
public final class GatewayContext {
    private final AtomicReference<GatewayConfig> config;
    private final UpstreamPools pools;
    /** Keyed by settings (a record), so a reload that keeps a simulator's settings keeps its engine too. */
    private final Map<SimulatorSettings, SimulatorEngine> simulators = new ConcurrentHashMap<>();
    private final RateLimiter limiter;
    /** Every open client connection of the API listener (for the drain at shutdown and the connection cap). */
    private final ChannelGroup connections = new DefaultChannelGroup("gateway-connections", GlobalEventExecutor.INSTANCE);
    /** The caps on client connections (total and per address), checked as each connection opens. */
    private final ConnectionCaps connectionCaps = new ConnectionCaps();
    /** API requests in progress across all connections (the cap of server.max_concurrent_requests). */
    private final AtomicInteger exchanges = new AtomicInteger();
    private final ExchangeObserver observer;
    /** Deployment health (cool-down, in-flight counts) and the routes of the current config; outlives reloads. */
    private final Routing routing = new Routing();
    /** Bytes of upstream answers collected whole, across all exchanges (upstream_limits.collected_budget_bytes). */
    private final CollectedBudget collectedBudget = new CollectedBudget();
    private volatile boolean ready = true;

    public GatewayContext(GatewayConfig config, UpstreamPools pools) {
        this(config, pools, new RateLimiter(), ExchangeObserver.NOOP);
    }

    public GatewayContext(GatewayConfig config, UpstreamPools pools, RateLimiter limiter, ExchangeObserver observer) {
        this.config = new AtomicReference<>(config);
        this.pools = pools;
        this.limiter = limiter;
        this.observer = observer;
    }

    /** The limits of every key and model; its state outlives config reloads. */
    public RateLimiter limiter() {
        return limiter;
    }

    public Routing routing() {
        return routing;
    }

    /** What all exchanges hold of collected upstream answers; outlives reloads. */
    public CollectedBudget collectedBudget() {
        return collectedBudget;
    }

    public ExchangeObserver observer() {
        return observer;
    }

    public ChannelGroup connections() {
        return connections;
    }

    public ConnectionCaps connectionCaps() {
        return connectionCaps;
    }

    /**
     * Counts one more API request in progress unless {@code max} (0 = no cap) are already; every request counted
     * here is uncounted by {@link #end}.
     */
    public boolean tryStartExchange(int max) {
        if (max <= 0) {
            exchanges.incrementAndGet();
            return true;
        }
        while (true) {
            int n = exchanges.get();
            if (n >= max) {
                return false;
            }
            if (exchanges.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** API requests in progress now. */
    public int exchangesInProgress() {
        return exchanges.get();
    }

    /**
     * The end of a request, whoever answered it: its limit reservation is settled with the tokens the record
     * holds, and the record goes to the observers. Only the first call for a request counts.
     */
    public void end(GatewayRequest request, Outcome outcome) {
        ExchangeRecord record = request.record();
        if (!record.end(outcome, System.nanoTime())) {
            return;
        }
        exchanges.decrementAndGet();
        if (request.admission() != null) {
            request.admission().settle(record.totalTokens());
        }
        observer.ended(record);
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

    /** The in-process simulator of a provider of type simulator (one per distinct settings). */
    public SimulatorEngine simulator(ProviderConfig provider) {
        return simulators.computeIfAbsent(provider.simulator(), SimulatorEngine::new);
    }

    public boolean ready() {
        return ready;
    }

    public void ready(boolean ready) {
        this.ready = ready;
    }
}
