package io.modelgateway.core.server;

import io.modelgateway.core.exchange.Transport;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.modelgateway.core.limit.RateLimiter;
import io.modelgateway.core.observe.AccessLog;
import io.modelgateway.core.observe.AdminServer;
import io.modelgateway.core.observe.CompositeObserver;
import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.observe.Dashboard;
import io.modelgateway.core.observe.LiveStats;
import io.modelgateway.core.observe.GatewayMetrics;
import io.modelgateway.core.observe.MetricsResponder;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The gateway process's server: one event-loop group serves both accepting and the connections; each
 * connection's upstream exchanges run on that connection's loop.
 */
public final class GatewayServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(GatewayServer.class.getName());

    private final EventLoopGroup group;
    private final Channel serverChannel;
    private final GatewayContext context;
    private final UpstreamPools pools;
    private final GatewayMetrics metrics;
    private final AccessLog accessLog;
    /** Null when no admin listener is configured (then /metrics is on the API listener). */
    private final AdminServer admin;
    /** The API listener's TLS and the admin listener's, or null for plain HTTP. */
    private final ServerTls tls;
    private final ServerTls adminTls;

    private GatewayServer(EventLoopGroup group, Channel serverChannel, GatewayContext context, UpstreamPools pools,
            GatewayMetrics metrics, AccessLog accessLog, AdminServer admin, ServerTls tls, ServerTls adminTls) {
        this.tls = tls;
        this.adminTls = adminTls;
        this.group = group;
        this.serverChannel = serverChannel;
        this.context = context;
        this.pools = pools;
        this.metrics = metrics;
        this.accessLog = accessLog;
        this.admin = admin;
    }

    /** Binds {@code config.listen()} (port 0 picks a free port) and returns once listening. */
    public static GatewayServer start(GatewayConfig config) throws InterruptedException {
        return start(config, 0);
    }

    /** @param threads event loops; 0 means one per core */
    public static GatewayServer start(GatewayConfig config, int threads) throws InterruptedException {
        return start(config, threads, null);
    }

    /**
     * @param threads  event loops; 0 means one per core
     * @param observer an extra observer of every exchange (tests), or null
     */
    public static GatewayServer start(GatewayConfig config, int threads, ExchangeObserver observer)
            throws InterruptedException {
        // The certificate files are read first: a bad one stops the start with a message naming the block.
        ServerTls tls = config.tls() == null ? null : ServerTls.start(config.tls(), config.http2().enabled());
        ServerTls adminTls = config.adminTls() == null ? null : ServerTls.start(config.adminTls(), false);
        EventLoopGroup group = Transport.newGroup(threads, "gateway");
        UpstreamPools pools = new UpstreamPools();
        GatewayMetrics metrics = new GatewayMetrics(pools::openConnections);
        // access_log and admin.listen are read once: changing them needs a restart (a reload keeps them)
        AccessLog accessLog = AccessLog.open(config.accessLog());
        metrics.accessLogDrops(accessLog::dropped);
        // The dashboard's counters exist only with an admin listener, the one place that shows them.
        LiveStats live = config.adminListen() == null ? null : new LiveStats();
        GatewayContext context = new GatewayContext(config, pools, new RateLimiter(),
                CompositeObserver.of(metrics, live, accessLog, observer));
        context.connectionCaps().deriveFromProcess();
        AdminServer admin = null;
        try {
            if (config.adminListen() != null) {
                Dashboard dashboard = new Dashboard(live, context::config,
                        now -> context.routing().states(context.config(), now), config.adminListen().isLoopback());
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
            GatewayServer server = new GatewayServer(group, ch, context, pools, metrics, accessLog, admin, tls,
                    adminTls);
            LOG.info("gateway listening on " + server.scheme() + "://" + server.hostPort() + " (" + Transport.name()
                    + (tls != null ? ", TLS" + (config.http2().enabled() ? ", h2" : "") : "")
                    + (tls == null && config.http2().cleartext() ? ", h2c" : "") + ")"
                    + (admin == null ? "" : "; admin on port " + admin.port()));
            LOG.info(context.connectionCaps().describe(config.server()));
            return server;
        } catch (InterruptedException | RuntimeException e) {
            if (admin != null) {
                admin.close();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            pools.close();
            accessLog.close();
            throw e;
        }
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
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        pools.close();
        if (admin != null) {
            admin.close();
        }
        accessLog.close(); // after the loops stopped: every exchange's line is queued by now
    }
}
