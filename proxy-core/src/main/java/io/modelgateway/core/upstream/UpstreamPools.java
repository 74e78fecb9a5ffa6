package io.modelgateway.core.upstream;

import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.exchange.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.modelgateway.core.config.UpstreamTls;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.NoopAddressResolverGroup;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.List;
import javax.net.ssl.SSLException;

/**
 * Keep-alive connections to upstreams, one pool per event loop and per upstream origin (STYLE 6–7): an
 * exchange borrows a connection that lives on its own client's event loop, so one exchange never crosses
 * threads and the pool needs no lock. DNS is resolved asynchronously (never blocking an event loop).
 */
public final class UpstreamPools implements AutoCloseable {
    /** Idle connections kept per loop and origin; more are closed on release. */
    private static final int MAX_IDLE = 512;
    private static final AttributeKey<String> ORIGIN = AttributeKey.valueOf("gateway.upstream.origin");
    /**
     * How much an upstream read asks for: Netty's adaptive guess, but never under 4 KiB. A stream's events come a few
     * hundred bytes at a time, so the default guess shrinks to about one event; when several have queued up (the
     * gateway was busy, or the provider flushed a burst) such reads cut events in two, and each cut event is then
     * held and joined before it can go on (proxy-bench/README.md, issue #13). The buffer lives only for the read.
     */
    static final AdaptiveRecvByteBufAllocator UPSTREAM_READS = new AdaptiveRecvByteBufAllocator(4096, 8192, 65536);
    private final FastThreadLocal<Map<String, ArrayDeque<Channel>>> idle = new FastThreadLocal<>() {
        @Override
        protected Map<String, ArrayDeque<Channel>> initialValue() {
            return new HashMap<>();
        }
    };
    /** One client context per origin and per way of checking it (a provider's {@code ca_file}, {@code insecure_skip_verify}). */
    private final Map<List<Object>, SslContext> tls = new ConcurrentHashMap<>();
    /** Open upstream connections, in use or idle, on all loops (read by the metrics scrape, any thread). */
    private final LongAdder open = new LongAdder();
    private final DnsAddressResolverGroup resolver = new DnsAddressResolverGroup(
            new DnsNameResolverBuilder().datagramChannelType(Transport.datagramChannel()));

    /**
     * Per event loop, the precomputed request parts of each provider, by identity (a config reload brings new
     * provider objects; the map is simply emptied when it has grown past what any config holds).
     */
    private final FastThreadLocal<IdentityHashMap<ProviderConfig, UpstreamTarget>> targets = new FastThreadLocal<>() {
        @Override
        protected IdentityHashMap<ProviderConfig, UpstreamTarget> initialValue() {
            return new IdentityHashMap<>();
        }
    };
    private static final int MAX_TARGETS = 256;

    /** The request parts of {@code provider}, built on first use on the calling event loop. */
    public UpstreamTarget target(ProviderConfig provider) {
        IdentityHashMap<ProviderConfig, UpstreamTarget> map = targets.get();
        UpstreamTarget t = map.get(provider);
        if (t == null) {
            if (map.size() >= MAX_TARGETS) {
                map.clear();
            }
            t = new UpstreamTarget(provider);
            map.put(provider, t);
        }
        return t;
    }

    /**
     * An idle pooled connection to {@code target}'s provider, on the calling event loop, or null (then
     * {@link #acquireFresh} connects): a bare channel, no future around it, since this is the usual case on a busy
     * gateway.
     */
    public Channel pollIdle(UpstreamTarget target) {
        ArrayDeque<Channel> q = idle.get().get(target.origin);
        if (q != null) {
            Channel ch;
            while ((ch = q.pollLast()) != null) {
                if (ch.isActive()) {
                    return ch;
                }
            }
        }
        return null;
    }

    /** A new connection to {@code target}'s provider on {@code loop} (none idle, or a retry after a stale one). */
    public Future<Channel> acquireFresh(EventLoop loop, UpstreamTarget target) {
        return connect(loop, target);
    }

    /** Whether the connection came from the pool (so a failure before any response may be retried). */
    public static boolean wasPooled(Channel ch) {
        return ch != null && Boolean.TRUE.equals(ch.attr(REUSED).get());
    }

    private static final AttributeKey<Boolean> REUSED = AttributeKey.valueOf("gateway.upstream.reused");

    /** Returns a connection whose exchange ended cleanly; it must be on its own event loop's thread. */
    public void release(Channel ch) {
        UpstreamResponseReceiver receiver = (UpstreamResponseReceiver) ch.pipeline().get(UpstreamPipelineNames.RECEIVER);
        if (receiver != null) {
            receiver.listener(null);
        }
        String origin = ch.attr(ORIGIN).get();
        if (!ch.isActive() || origin == null) {
            ch.close();
            return;
        }
        ch.config().setAutoRead(true); // an idle connection must notice the peer closing it
        ArrayDeque<Channel> q = idle.get().computeIfAbsent(origin, k -> new ArrayDeque<>());
        if (q.size() >= MAX_IDLE) {
            ch.close();
            return;
        }
        ch.attr(REUSED).set(Boolean.TRUE);
        q.addLast(ch);
    }

    /** Number of idle connections on the calling event loop for an origin (tests and metrics). */
    public int idleCount(URI base) {
        ArrayDeque<Channel> q = idle.get().get(origin(base));
        return q == null ? 0 : (int) q.stream().filter(Channel::isActive).count();
    }

    /** Upstream connections open now, in use or idle, across all event loops. */
    public long openConnections() {
        return open.sum();
    }

    private Future<Channel> connect(EventLoop loop, UpstreamTarget target) {
        ProviderConfig provider = target.provider;
        String origin = target.origin;
        URI base = provider.baseUrl();
        boolean https = "https".equalsIgnoreCase(base.getScheme());
        String host = base.getHost();
        int port = port(base);
        SslContext ssl = https ? tls.computeIfAbsent(List.of(origin, provider.tls()), k -> newSslContext(provider.tls()))
                : null;
        InetSocketAddress remote = address(host, port);
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(Transport.socketChannel())
                .resolver(resolverFor(remote))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, provider.connectTimeoutMs())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(32 * 1024, 64 * 1024))
                .option(ChannelOption.RCVBUF_ALLOCATOR, UPSTREAM_READS)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ChannelPipeline p = ch.pipeline();
                        if (ssl != null) {
                            p.addLast(UpstreamPipelineNames.TLS, ssl.newHandler(ch.alloc(), host, port));
                        }
                        p.addLast(UpstreamPipelineNames.ENCODER, new UpstreamRequestEncoder());
                        p.addLast(UpstreamPipelineNames.DECODER, new UpstreamResponseDecoder());
                        p.addLast(UpstreamPipelineNames.RECEIVER, new UpstreamResponseReceiver());
                    }
                });
        Promise<Channel> promise = loop.newPromise();
        ChannelFuture f = b.connect(remote);
        f.addListener(cf -> {
            if (cf.isSuccess()) {
                open.increment();
                f.channel().closeFuture().addListener(closed -> open.decrement());
                f.channel().attr(ORIGIN).set(origin);
                promise.setSuccess(f.channel());
            } else {
                promise.setFailure(cf.cause());
            }
        });
        return promise;
    }

    /**
     * A client context: the chain checked against the JDK's trust store or the provider's {@code ca_file}, and the
     * host name against the certificate (HTTPS endpoint identification); with {@code insecure_skip_verify}, neither
     * (warned at every config load).
     */
    static SslContext newSslContext(UpstreamTls upstream) {
        try {
            SslContextBuilder b = SslContextBuilder.forClient()
                    .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                    .protocols("TLSv1.3", "TLSv1.2");
            if (upstream.insecureSkipVerify()) {
                b.trustManager(io.netty.handler.ssl.util.InsecureTrustManagerFactory.INSTANCE)
                        .endpointIdentificationAlgorithm(null);
            } else {
                if (upstream.caFile() != null) {
                    b.trustManager(upstream.trusted().toArray(new java.security.cert.X509Certificate[0]));
                }
                b.endpointIdentificationAlgorithm("HTTPS");
            }
            return b.build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the TLS client context", e);
        }
    }

    static String origin(URI base) {
        return base.getScheme().toLowerCase() + "://" + base.getHost() + ":" + port(base);
    }

    static int port(URI base) {
        if (base.getPort() > 0) {
            return base.getPort();
        }
        return "https".equalsIgnoreCase(base.getScheme()) ? 443 : 80;
    }

    /**
     * The resolver of an upstream's address ({@link #address}): none for an IP address, the loop's DNS resolver for a
     * name. A loop's DNS resolver holds a UDP socket with a read always outstanding, which on io_uring owns a buffer
     * until the socket closes; an upstream given by its address needs neither.
     */
    AddressResolverGroup<?> resolverFor(InetSocketAddress remote) {
        return remote.isUnresolved() ? resolver : NoopAddressResolverGroup.INSTANCE;
    }

    /** An IP address as a resolved socket address; a name left for the resolver. */
    static InetSocketAddress address(String host, int port) {
        InetAddress ip = NetUtil.createInetAddressFromIpAddressString(host); // null for a name; takes [v6] too
        return ip == null ? InetSocketAddress.createUnresolved(host, port) : new InetSocketAddress(ip, port);
    }

    /** Closes the loops' DNS resolvers (their sockets close on their loops): call before the loops shut down. */
    @Override
    public void close() {
        resolver.close();
    }
}
