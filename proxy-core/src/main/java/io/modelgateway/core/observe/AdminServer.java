package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ApiPaths;

import io.modelgateway.core.config.HostAndPort;
import io.modelgateway.core.exchange.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Logger;

/**
 * An optional second listener for operators: {@code GET /metrics}, {@code GET /health} and {@code GET /ready}
 * on an address apart from the API (so scrapers and probes need no route through the API port, and a
 * scrape never stalls an API event loop).
 *
 * <p>It has its own single-thread event loop group and a three-handler pipeline:
 * <pre>
 *   http-codec       HttpServerCodec (default line and header limits)
 *   aggregator       HttpObjectAggregator, {@value #MAX_BODY} bytes (it answers 413 itself past that)
 *   admin-handler    routes by path; releases every request (SimpleChannelInboundHandler)
 * </pre>
 * Answers: 200 exposition for {@code /metrics}; {@code {"status":"ok"}} for {@code /health};
 * 200 {@code {"status":"ready"}} or 503 {@code {"status":"draining"}} for {@code /ready}, from the readiness
 * supplier; with a {@link Dashboard}, the live page on {@code /} and its files and event stream under
 * {@code /dashboard/} (which it guards with the admin key); 404 for any other path; 405 (with {@code Allow: GET})
 * for any other method on those paths; 400 and close for a malformed request. A request arriving on a connection
 * that carries a dashboard stream closes it.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AdminServer.class.getName());
    static final int MAX_BODY = 8192;

    private static final byte[] HEALTH_OK = "{\"status\":\"ok\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READY = "{\"status\":\"ready\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DRAINING = "{\"status\":\"draining\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "{\"error\":\"not found\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_ALLOWED =
            "{\"error\":\"method not allowed\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BAD_REQUEST = "{\"error\":\"bad request\"}".getBytes(StandardCharsets.US_ASCII);

    private final HostAndPort listen;
    private final GatewayMetrics metrics;
    private final BooleanSupplier ready;
    /** Null when the listener serves no dashboard. */
    private final Dashboard dashboard;
    private EventLoopGroup group;
    private Channel channel;
    /** The current TLS context of {@code admin.tls} (read per accepted connection), or null for plain HTTP. */
    private java.util.function.Supplier<io.netty.handler.ssl.SslContext> tls;

    /**
     * @param ready read per {@code /ready} request on the admin loop; must be cheap and thread-safe
     *        (e.g. {@code context::ready})
     */
    public AdminServer(HostAndPort listen, GatewayMetrics metrics, BooleanSupplier ready) {
        this(listen, metrics, ready, null);
    }

    /** @param dashboard the live page served on {@code /}, or null for none */
    public AdminServer(HostAndPort listen, GatewayMetrics metrics, BooleanSupplier ready, Dashboard dashboard) {
        this.listen = Objects.requireNonNull(listen, "listen");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.ready = Objects.requireNonNull(ready, "ready");
        this.dashboard = dashboard;
    }

    /**
     * Serves TLS ({@code admin.tls}): each accepted connection gets a handler from the context {@code tls} gives at
     * that moment (so a reloaded certificate reaches new connections). Call before {@link #start()}.
     */
    public synchronized AdminServer tls(java.util.function.Supplier<io.netty.handler.ssl.SslContext> tls) {
        this.tls = tls;
        return this;
    }

    /** Binds the address (port 0 picks a free one) and returns once listening. Call once. */
    public synchronized AdminServer start() throws InterruptedException {
        if (group != null) {
            throw new IllegalStateException("already started");
        }
        group = Transport.newGroup(1, "gateway-admin");
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(group)
                    .channel(Transport.serverChannel())
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            if (tls != null) {
                                io.netty.handler.ssl.SslHandler handler = tls.get().newHandler(ch.alloc());
                                handler.setHandshakeTimeoutMillis(10_000);
                                ch.pipeline().addLast("tls", handler);
                            }
                            ch.pipeline()
                                    .addLast("http-codec", new HttpServerCodec())
                                    .addLast("aggregator", new HttpObjectAggregator(MAX_BODY))
                                    .addLast("admin-handler", new AdminHandler(metrics, ready, dashboard));
                        }
                    });
            channel = b.bind(listen.host(), listen.port()).sync().channel();
            if (dashboard != null) {
                EventLoop loop = channel.eventLoop();
                loop.submit(() -> dashboard.start(loop)).sync();
            }
        } catch (InterruptedException | RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            group = null;
            throw e;
        }
        LOG.info("admin listening on " + (tls == null ? "http" : "https") + "://" + hostPort() + " (/metrics, /health, /ready"
                + (dashboard == null ? ")" : ", the dashboard on /)"));
        return this;
    }

    /** The bound port (the chosen one when started with port 0). */
    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    private String hostPort() {
        InetSocketAddress a = (InetSocketAddress) channel.localAddress();
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** Stops listening, closes open admin connections and stops the loop. Safe to call more than once. */
    @Override
    public synchronized void close() {
        if (group == null) {
            return;
        }
        if (channel != null) {
            if (dashboard != null) {
                // The streams end with their last chunk before the loop goes: pages see the end, not a reset.
                channel.eventLoop().submit(dashboard::stop).awaitUninterruptibly(2, TimeUnit.SECONDS);
            }
            channel.close().syncUninterruptibly();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        group = null;
    }

    /**
     * The admin pipeline's last handler: answers every aggregated request;
     * {@link SimpleChannelInboundHandler} releases the request after {@link #channelRead0}.
     */
    static final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final GatewayMetrics metrics;
        private final BooleanSupplier ready;
        private final Dashboard dashboard;

        AdminHandler(GatewayMetrics metrics, BooleanSupplier ready, Dashboard dashboard) {
            this.metrics = metrics;
            this.ready = ready;
            this.dashboard = dashboard;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (request.decoderResult().isFailure()) {
                send(ctx, HttpResponseStatus.BAD_REQUEST, BAD_REQUEST, false);
                return;
            }
            if (Dashboard.streaming(ctx.channel())) {
                ctx.close(); // a page's event stream is its connection's last answer
                return;
            }
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            String path = ApiPaths.path(request.uri());
            if (dashboard != null && Dashboard.handles(path)) {
                dashboard.handle(ctx, request, path, keepAlive);
                return;
            }
            boolean known = path.equals(MetricsResponder.PATH) || path.equals("/health") || path.equals("/ready");
            if (!known) {
                send(ctx, HttpResponseStatus.NOT_FOUND, NOT_FOUND, keepAlive);
            } else if (!HttpMethod.GET.equals(request.method())) {
                FullHttpResponse r = response(HttpResponseStatus.METHOD_NOT_ALLOWED, NOT_ALLOWED, keepAlive);
                r.headers().set(HttpHeaderNames.ALLOW, "GET");
                write(ctx, r, keepAlive);
            } else if (path.equals(MetricsResponder.PATH)) {
                MetricsResponder.respond(ctx, metrics, keepAlive);
            } else if (path.equals("/health")) {
                send(ctx, HttpResponseStatus.OK, HEALTH_OK, keepAlive);
            } else if (ready.getAsBoolean()) {
                send(ctx, HttpResponseStatus.OK, READY, keepAlive);
            } else {
                send(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, DRAINING, keepAlive);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A reset peer or a failed scrape: nothing useful to answer on this connection.
            ctx.close();
        }

        private static void send(ChannelHandlerContext ctx, HttpResponseStatus status, byte[] body,
                boolean keepAlive) {
            write(ctx, response(status, body, keepAlive), keepAlive);
        }

        private static FullHttpResponse response(HttpResponseStatus status, byte[] body, boolean keepAlive) {
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.wrappedBuffer(body));
            r.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                    .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
            HttpUtil.setKeepAlive(r, keepAlive);
            return r;
        }

        private static void write(ChannelHandlerContext ctx, FullHttpResponse r, boolean keepAlive) {
            if (keepAlive) {
                ctx.writeAndFlush(r);
            } else {
                ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
            }
        }
    }
}
