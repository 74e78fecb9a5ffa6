package io.modelgateway.core.server;

import io.modelgateway.codecs.usage.InputTokenCounter;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.exchange.Transport;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.modelgateway.core.limit.Limiters;
import io.modelgateway.core.limit.RateLimiter;
import io.modelgateway.core.limit.SharedLimiter;
import io.modelgateway.core.observe.AccessLog;
import io.modelgateway.core.observe.AdminServer;
import io.modelgateway.core.observe.CompositeObserver;
import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.observe.Dashboard;
import io.modelgateway.core.observe.EventLoopAllocation;
import io.modelgateway.core.observe.LiveStats;
import io.modelgateway.core.observe.GatewayMetrics;
import io.modelgateway.core.observe.MetricsResponder;
import io.modelgateway.core.observe.KeySpends;
import io.modelgateway.core.observe.OtelTracing;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.limit.SpendBudgets;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The gateway process's server: one event-loop group serves both accepting and the connections; each
 * connection's upstream exchanges run on that connection's loop.
 */
public final class GatewayServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(GatewayServer.class.getName());
    /**
     * With a {@code redis} block, how long a start waits for Redis before it listens, so that the first requests
     * meet the shared counts rather than the fallback; a Redis away at start delays it no longer than this.
     */
    static final Duration REDIS_AT_START = Duration.ofSeconds(2);

    private final EventLoopGroup group;
    private final Channel serverChannel;
    private final GatewayContext context;
    private final UpstreamPools pools;
    private final GatewayMetrics metrics;
    private final Limiters limiters;
    private final AccessLog accessLog;
    /** Null when no admin listener is configured (then /metrics is on the API listener). */
    private final AdminServer admin;
    /** Null when tracing is off (no {@code telemetry} block). */
    private final OtelTracing tracing;
    /** The API listener's TLS and the admin listener's, or null for plain HTTP. */
    private final ServerTls tls;
    private final ServerTls adminTls;

    private GatewayServer(EventLoopGroup group, Channel serverChannel, GatewayContext context, UpstreamPools pools,
            GatewayMetrics metrics, AccessLog accessLog, AdminServer admin, OtelTracing tracing, ServerTls tls,
            ServerTls adminTls) {
        this.tracing = tracing;
        this.tls = tls;
        this.adminTls = adminTls;
        this.group = group;
        this.serverChannel = serverChannel;
        this.context = context;
        this.pools = pools;
        this.metrics = metrics;
        this.limiters = context.limiters();
        this.accessLog = accessLog;
        this.admin = admin;
    }

    /** Binds {@code config.listen()} (port 0 picks a free port) and returns once listening. */
    public static GatewayServer start(GatewayConfig config) throws InterruptedException {
        return start(config, 0);
    }

    /** @param threads event loops; 0 means {@link Transport#defaultLoops()} (one per CPU) */
    public static GatewayServer start(GatewayConfig config, int threads) throws InterruptedException {
        return start(config, threads, null);
    }

    /**
     * @param threads  event loops; 0 means {@link Transport#defaultLoops()} (one per CPU)
     * @param observer an extra observer of every exchange (tests), or null
     */
    public static GatewayServer start(GatewayConfig config, int threads, ExchangeObserver observer)
            throws InterruptedException {
        return start(config, threads, observer, Limiters.REDIS);
    }

    /**
     * @param threads      event loops; 0 means {@link Transport#defaultLoops()} (one per CPU)
     * @param observer     an extra observer of every exchange (tests), or null
     * @param sharedLimits makes the shared limiter of a {@code redis} block: {@link Limiters#REDIS}, or (tests) one
     *                     on a stopped clock
     */
    public static GatewayServer start(GatewayConfig config, int threads, ExchangeObserver observer,
            Limiters.SharedFactory sharedLimits) throws InterruptedException {
        // The certificate files are read first: a bad one stops the start with a message naming the block.
        ServerTls tls = config.tls() == null ? null : ServerTls.start(config.tls(), config.http2().enabled());
        ServerTls adminTls = config.adminTls() == null ? null : ServerTls.start(config.adminTls(), false);
        MultiThreadIoEventLoopGroup group = Transport.newGatewayGroup(threads, "gateway");
        UpstreamPools pools = new UpstreamPools();
        GatewayMetrics metrics = new GatewayMetrics(pools::openConnections);
        // access_log and admin.listen are read once: changing them needs a restart (a reload keeps them)
        AccessLog accessLog = AccessLog.open(config.accessLog());
        metrics.accessLogDrops(accessLog::dropped);
        EventLoopAllocation.register(metrics, group);
        // The dashboard's counters exist only with an admin listener, the one place that shows them.
        LiveStats live = config.adminListen() == null ? null : new LiveStats();
        // The shared-state metrics appear with the first redis block (at start or by a reload), never without one.
        Limiters limiters = new Limiters(new RateLimiter(), group, sharedLimits,
                l -> l.timeChecks(metrics.sharedState(l::up, l::timeouts, l::connectionErrors, l::redisErrors,
                        l::fallbacks, l::batched)));
        // telemetry is read once, like access_log: a reload keeps the tracer it started with.
        OtelTracing tracing = null;
        GatewayContext context;
        try {
            tracing = config.telemetry() == null ? null : OtelTracing.open(config.telemetry());
            context = new GatewayContext(config, pools, limiters, CompositeObserver.of(metrics, live, accessLog,
                    observer), tracing);
            if (config.redis() != null && !limiters.awaitUp(REDIS_AT_START)) {
                LOG.warning("shared limits: Redis at " + config.redis().endpoint() + " not reached within "
                        + REDIS_AT_START.toMillis() + " ms; listening anyway, the fallback decides until it answers");
            }
        } catch (InterruptedException | RuntimeException e) {
            limiters.close();
            pools.close(); // the DNS resolvers' sockets close on the loops, before these stop
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            accessLog.close();
            if (tracing != null) {
                tracing.close();
            }
            throw e;
        }
        context.connectionCaps().deriveFromProcess();
        if (config.providers().values().stream().anyMatch(p -> p.type().style() == ApiStyle.OPENAI
                || p.type().style() == ApiStyle.GEMINI)) { // vertex and gemini: count_tokens is counted here too
            // count_tokens and translated message_start count with o200k_base (contract 5.12): loading it takes
            // seconds, so it loads now on a thread of its own instead of on the first such request's event loop.
            InputTokenCounter.warmUp();
        }
        AdminServer admin = null;
        try {
            if (config.adminListen() != null) {
                Dashboard dashboard = new Dashboard(live, context::config,
                        now -> context.routing().states(context.config(), now), config.adminListen().isLoopback())
                        .spends(keySpends(context));
                admin = new AdminServer(config.adminListen(), metrics, context::ready, dashboard);
                if (adminTls != null) {
                    admin.tls(adminTls::context);
                }
                admin.start();
            }
            ServerBootstrap b = new ServerBootstrap()
                    .group(group)
                    .channel(Transport.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(32 * 1024, 64 * 1024))
                    .childHandler(new GatewayChannelInitializer(context,
                            admin == null ? new MetricsResponder(metrics) : null, tls));
            Channel ch = b.bind(config.listen().host(), config.listen().port()).sync().channel();
            GatewayServer server = new GatewayServer(group, ch, context, pools, metrics, accessLog, admin, tracing,
                    tls, adminTls);
            LOG.info("gateway listening on " + server.scheme() + "://" + server.hostPort() + " (" + Transport.name()
                    + ", " + group.executorCount() + (group.executorCount() == 1 ? " event loop" : " event loops")
                    + (tls != null ? ", TLS" + (config.http2().enabled() ? ", h2" : "") : "")
                    + (tls == null && config.http2().cleartext() ? ", h2c" : "") + ")"
                    + (admin == null ? "" : "; admin on port " + admin.port()));
            LOG.info(context.connectionCaps().describe(config.server()));
            return server;
        } catch (InterruptedException | RuntimeException e) {
            if (admin != null) {
                admin.close();
            }
            limiters.close();
            pools.close(); // the DNS resolvers' sockets close on the loops, before these stop
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            accessLog.close();
            if (tracing != null) {
                tracing.close();
            }
            throw e;
        }
    }

    /** What the admin listener reports of a configured key's spend: its counts and its current config's budgets. */
    private static KeySpends keySpends(GatewayContext context) {
        return name -> {
            KeyConfig key = null;
            for (KeyConfig k : context.config().keys()) {
                if (k.name().equals(name)) {
                    key = k;
                    break;
                }
            }
            if (key == null) {
                return CompletableFuture.completedFuture(null);
            }
            // The periods' reset instants are the same whoever counts; the counts come from Redis when shared.
            SpendBudgets.Spend s = context.spend().spend(name);
            double daily = key.budget().daily();
            double monthly = key.budget().monthly();
            SharedLimiter shared = context.limiters().shared();
            if (shared == null) {
                return CompletableFuture.completedFuture(new KeySpends.KeySpend(s.todayUsd(), s.monthUsd(), daily,
                        monthly, s.dayResetMillis(), s.monthResetMillis(), KeySpends.LOCAL));
            }
            CompletableFuture<KeySpends.KeySpend> answer = new CompletableFuture<>();
            shared.spend(name).addListener(f -> {
                long[] micros = (long[]) f.getNow();
                answer.complete(micros == null
                        ? new KeySpends.KeySpend(0, 0, daily, monthly, s.dayResetMillis(), s.monthResetMillis(),
                                KeySpends.UNAVAILABLE)
                        : new KeySpends.KeySpend(micros[0] / SpendBudgets.MICROS, micros[1] / SpendBudgets.MICROS,
                                daily, monthly, s.dayResetMillis(), s.monthResetMillis(), KeySpends.SHARED));
            });
            return answer;
        };
    }

    private static boolean awaitClosed(ChannelGroup connections, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!connections.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return connections.isEmpty();
            }
        }
        return connections.isEmpty();
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    public String hostPort() {
        InetSocketAddress a = (InetSocketAddress) serverChannel.localAddress();
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** {@code https} on a TLS listener, {@code http} otherwise. */
    public String scheme() {
        return tls == null ? "http" : "https";
    }

    /** The API listener's TLS, or null. */
    public ServerTls tls() {
        return tls;
    }

    /**
     * Looks at the certificate files of both listeners and installs a new context for new connections where they
     * changed (a bad pair is refused with a log line, the old one stays). Blocking: the reload thread calls it.
     */
    public void checkCertificates() {
        if (tls != null) {
            tls.check();
        }
        if (adminTls != null) {
            adminTls.check();
        }
    }

    public GatewayContext context() {
        return context;
    }

    public GatewayMetrics metrics() {
        return metrics;
    }

    /** The admin listener's port; -1 when there is none. */
    public int adminPort() {
        return admin == null ? -1 : admin.port();
    }

    /** Stops with the configured drain ({@code server.drain_timeout_ms}). */
    @Override
    public void close() {
        close(context.config().server().drainTimeoutMs());
    }

    /**
     * Graceful stop: {@code /ready} turns false at once and the listener stops accepting; every connection is told
     * to drain (idle ones close now, busy ones after their answer); whatever is still open after
     * {@code drainMillis} is ended — a stream with the style's error event (GD-10), anything else closed.
     */
    public void close(long drainMillis) {
        context.ready(false);
        serverChannel.close().syncUninterruptibly();
        ChannelGroup connections = context.connections();
        connections.forEach(ch -> ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN));
        if (!awaitClosed(connections, drainMillis)) {
            LOG.info("drain deadline: ending " + connections.size() + " connection(s) still busy");
            connections.forEach(ch -> ch.pipeline().fireUserEventTriggered(StreamGuard.DRAIN_DEADLINE));
            awaitClosed(connections, 2000);
        }
        // The requests ended by the drain sent their settlements to Redis; they land before the loops stop.
        limiters.close();
        pools.close(); // the DNS resolvers' sockets close on the loops, before these stop
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        if (admin != null) {
            admin.close();
        }
        accessLog.close(); // after the loops stopped: every exchange's line is queued by now
        if (tracing != null) {
            tracing.close(); // likewise: every span has ended; what is queued is exported now
        }
    }
}
