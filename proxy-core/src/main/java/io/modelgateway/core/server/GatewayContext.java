package io.modelgateway.core.server;

import io.modelgateway.core.exchange.GatewayRequest;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.limit.Limiters;
import io.modelgateway.core.limit.RateLimiter;
import io.modelgateway.core.limit.SpendBudgets;
import io.modelgateway.core.exchange.ExchangeTracer;
import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.route.Routing;
import io.modelgateway.core.simulator.SimulatorEngine;
import io.modelgateway.core.answer.CollectedBudget;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.route.AttemptPlanner;
import io.modelgateway.core.simulator.SimulatorEngines;
import io.modelgateway.core.upstream.UpstreamPools;
import java.util.concurrent.atomic.AtomicReference;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;

/**
 * What every connection of one server shares, and where the server's parts are made: the current immutable config
 * (swapped whole on reload), readiness, the connections and their caps, the per-event-loop upstream pools, the
 * in-process simulators, the limits, the routes and their health, and the end of every request. The initializer
 * hands each handler the parts it uses (nothing below {@code server} sees this object); each request takes the
 * config once, when it is routed, and is served under it from start to end.
 */
public final class GatewayContext {
    private final AtomicReference<GatewayConfig> config;
    private final UpstreamPools pools;
    private final SimulatorEngines simulators = new SimulatorEngines();
    private final Limiters limiters;
    /** Every key's spend per UTC day and month, and its budgets; outlives reloads. */
    private final SpendBudgets spend = new SpendBudgets();
    /** Every open client connection of the API listener (for the drain at shutdown and the connection cap). */
    private final ChannelGroup connections = new DefaultChannelGroup("gateway-connections", GlobalEventExecutor.INSTANCE);
    /** The caps on client connections (total and per address), checked as each connection opens. */
    private final ConnectionCaps connectionCaps = new ConnectionCaps();
    /** API requests in progress across all connections, and the end of each. */
    private final Exchanges exchanges;
    /** Deployment health (cool-down, in-flight counts) and the routes of the current config; outlives reloads. */
    private final Routing routing = new Routing();
    /** Bytes of upstream answers collected whole, across all exchanges (upstream_limits.collected_budget_bytes). */
    private final CollectedBudget collectedBudget = new CollectedBudget();
    private final AttemptPlanner planner;
    private volatile boolean ready = true;

    public GatewayContext(GatewayConfig config, UpstreamPools pools) {
        this(config, pools, new RateLimiter(), ExchangeObserver.NOOP);
    }

    /** Local limits only: a config with a {@code redis} block needs the server's event loops (the next constructor). */
    public GatewayContext(GatewayConfig config, UpstreamPools pools, RateLimiter limiter, ExchangeObserver observer) {
        this(config, pools, new Limiters(limiter), observer, null);
    }

    /**
     * @param limiters the limits; they take {@code config}'s {@code redis} block here, and each reload's in {@link #swap}
     * @param tracer   starts every request's trace; null when tracing is off
     */
    public GatewayContext(GatewayConfig config, UpstreamPools pools, Limiters limiters, ExchangeObserver observer,
            ExchangeTracer tracer) {
        limiters.configure(config.redis());
        this.config = new AtomicReference<>(config);
        this.pools = pools;
        this.limiters = limiters;
        this.exchanges = new Exchanges(observer, tracer);
        this.planner = new AttemptPlanner(pools, simulators, collectedBudget);
    }

    /** The limits of every key and model (local, and shared through Redis with a {@code redis} block); outlive reloads. */
    public Limiters limiters() {
        return limiters;
    }

    /** Every key's spend and its budgets; its state outlives config reloads. */
    public SpendBudgets spend() {
        return spend;
    }

    public Routing routing() {
        return routing;
    }

    /** What all exchanges hold of collected upstream answers; outlives reloads. */
    public CollectedBudget collectedBudget() {
        return collectedBudget;
    }

    public ExchangeObserver observer() {
        return exchanges.observer();
    }

    public ChannelGroup connections() {
        return connections;
    }

    public ConnectionCaps connectionCaps() {
        return connectionCaps;
    }

    /** The beginning and end of every request: the in-progress count and the settle-and-observe at the end. */
    public Exchanges exchanges() {
        return exchanges;
    }

    /** How each attempt of a request is made (pass-through, translated, in-process simulator). */
    public AttemptPlanner planner() {
        return planner;
    }

    /** API requests in progress now. */
    public int exchangesInProgress() {
        return exchanges.inProgress();
    }

    /** The end of a request, whoever answered it (see {@link Exchanges#end}). */
    public void end(GatewayRequest request, Outcome outcome) {
        exchanges.end(request, outcome);
    }

    public GatewayConfig config() {
        return config.get();
    }

    /**
     * Makes {@code next} the config of every request routed from now on; the limits take its {@code redis} block
     * first (see {@link Limiters#configure}). Called by the reloader's thread, never on an event loop.
     */
    public void swap(GatewayConfig next) {
        limiters.configure(next.redis());
        config.set(next);
    }

    public UpstreamPools pools() {
        return pools;
    }

    /** The in-process simulator of a provider of type simulator (one per distinct settings). */
    public SimulatorEngine simulator(ProviderConfig provider) {
        return simulators.of(provider);
    }

    public boolean ready() {
        return ready;
    }

    public void ready(boolean ready) {
        this.ready = ready;
    }
}
