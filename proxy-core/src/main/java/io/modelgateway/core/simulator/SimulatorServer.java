package io.modelgateway.core.simulator;

import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The simulator as a standalone HTTP/1.1 upstream, for the gateway's {@code openai} and
 * {@code anthropic} provider types over real sockets, for tests and for benchmarks. Serves
 * {@code POST /v1/chat/completions}, {@code POST /v1/embeddings}, {@code POST /v1/messages} and
 * {@code GET /health}; keep-alive; bodies up to 32 MiB.
 *
 * <p>Pipeline, per connection: {@value #CODEC} → {@value #AGGREGATOR} → {@value SimulatorHandler#NAME}.
 * Epoll when available, else NIO; one event loop group for accepting and serving.
 */
public final class SimulatorServer implements AutoCloseable {

    static final String CODEC = "http-codec";
    static final String AGGREGATOR = "http-aggregator";
    static final int MAX_BODY_BYTES = 32 * 1024 * 1024;

    private final EventLoopGroup group;
    private final Channel serverChannel;
    private final ChannelGroup channels;
    private final String transport;
    private boolean closed;

    private SimulatorServer(EventLoopGroup group, Channel serverChannel, ChannelGroup channels, String transport) {
        this.group = group;
        this.serverChannel = serverChannel;
        this.channels = channels;
        this.transport = transport;
    }

    /**
     * Binds and starts serving.
     *
     * @param port           0 for an ephemeral port (see {@link #port()})
     * @param requiredApiKey null for no check; otherwise OpenAI paths need {@code Authorization: Bearer KEY}
     *                       and {@code /v1/messages} needs {@code x-api-key: KEY} (or the Bearer form)
     * @param observer       null, or called on the event loop with each request before it is answered;
     *                       it must not retain the request (it is released right after)
     */
    public static SimulatorServer start(String host, int port, SimulatorSettings defaults, String requiredApiKey,
                                        Consumer<FullHttpRequest> observer) throws InterruptedException {
        return start(host, port, defaults, requiredApiKey, observer, null);
    }

    /**
     * As above, served over TLS with {@code tls} (a server context, e.g. from {@link #tlsContext}), or plain HTTP
     * when null: an {@code https} upstream for the gateway's tests and benchmarks.
     */
    public static SimulatorServer start(String host, int port, SimulatorSettings defaults, String requiredApiKey,
                                        Consumer<FullHttpRequest> observer, io.netty.handler.ssl.SslContext tls)
            throws InterruptedException {
        SimulatorEngine engine = new SimulatorEngine(Objects.requireNonNull(defaults, "defaults"));
        EventLoopGroup group = Transport.newGroup(0, "simulator");
        ChannelGroup channels = new DefaultChannelGroup("simulator", GlobalEventExecutor.INSTANCE);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(Transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        ChannelPipeline p = ch.pipeline();
                        if (tls != null) {
                            p.addLast("tls", tls.newHandler(ch.alloc()));
                        }
                        p.addLast(CODEC, new HttpServerCodec());
                        p.addLast(AGGREGATOR, new HttpObjectAggregator(MAX_BODY_BYTES));
                        p.addLast(SimulatorHandler.NAME, new SimulatorHandler(engine, requiredApiKey, observer));
                    }
                });
        try {
            Channel server = bootstrap.bind(host, port).sync().channel();
            return new SimulatorServer(group, server, channels, Transport.name());
        } catch (InterruptedException | RuntimeException | Error e) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        } catch (Throwable e) {
            // sync() rethrows checked bind failures (e.g. BindException) undeclared.
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw new IllegalStateException("simulator: cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /** A TLS server context from a PEM certificate chain and PKCS#8 key file (HTTP/1.1 only). */
    public static io.netty.handler.ssl.SslContext tlsContext(java.io.File certChain, java.io.File key) {
        try {
            return io.netty.handler.ssl.SslContextBuilder.forServer(certChain, key).build();
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
            throw new IllegalStateException("simulator: cannot use the certificate " + certChain + " and key " + key
                    + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** "epoll" or "nio". */
    public String transport() {
        return transport;
    }

    /**
     * Stops accepting, closes every open connection and shuts the event loops down; blocks until
     * done. Idempotent. Call it from outside the server's event loops.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        serverChannel.close().awaitUninterruptibly();
        channels.close().awaitUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** The command line of {@link #main}, parsed. */
    record Options(String host, int port, String apiKey, SimulatorSettings settings, boolean help) {

        static Options parse(String[] args) {
            String listen = "127.0.0.1:9090";
            String apiKey = null;
            long ttftMs = 0;
            double tps = 0;
            Integer outputTokens = null;
            String fault = null;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if ("--help".equals(arg) || "-h".equals(arg)) {
                    return new Options(null, 0, null, null, true);
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(arg + " needs a value");
                }
                String value = args[++i];
                switch (arg) {
                    case "--listen" -> listen = value;
                    case "--api-key" -> apiKey = value;
                    case "--ttft-ms" -> ttftMs = Long.parseLong(value);
                    case "--tps" -> tps = Double.parseDouble(value);
                    case "--output-tokens" -> outputTokens = Integer.valueOf(value);
                    case "--fault" -> fault = value;
                    default -> throw new IllegalArgumentException("unknown option " + arg);
                }
            }
            int colon = listen.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("--listen needs HOST:PORT, got " + listen);
            }
            String host = listen.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port = Integer.parseInt(listen.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("--listen port must be 0..65535");
            }
            // NumberFormatException is an IllegalArgumentException: bad numbers land in the same message path.
            return new Options(host, port, apiKey, new SimulatorSettings(ttftMs, tps, outputTokens, fault), false);
        }
    }

    /**
     * {@code --listen HOST:PORT} (default 127.0.0.1:9090), {@code --api-key K}, {@code --ttft-ms N},
     * {@code --tps X}, {@code --output-tokens N}, {@code --fault SPEC}. Prints
     * {@code simulator listening on http://HOST:PORT} and runs until SIGTERM / Ctrl-C, when a shutdown
     * hook closes it. Exit status 2 for a bad command line, 1 when it cannot listen.
     */
    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("simulator: " + e.getMessage());
            usage(System.err);
            System.exit(2);
            return;
        }
        if (options.help()) {
            usage(System.out);
            return;
        }
        SimulatorServer server;
        try {
            server = start(options.host(), options.port(), options.settings(), options.apiKey(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (IllegalStateException e) {
            System.err.println(e.getMessage());
            System.exit(1);
            return;
        }
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "simulator-shutdown"));
        String host = options.host().indexOf(':') >= 0 ? "[" + options.host() + "]" : options.host();
        System.out.println("simulator listening on http://" + host + ":" + server.port());
        // The event loops run daemon threads (Transport.newGroup), so the main thread holds the JVM up until
        // SIGTERM or Ctrl-C runs the shutdown hook.
        while (stopped.getCount() > 0) {
            try {
                stopped.await();
            } catch (InterruptedException e) {
                // keep serving: only the shutdown hook ends the process
            }
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: simulator [--listen HOST:PORT] [--api-key KEY] [--ttft-ms N] [--tps X]"
                + " [--output-tokens N] [--fault SPEC]");
        out.println("  SPEC: status=503,delay_ms=10,error_after=5,cut_after=5,stall_after=5,malformed=1,retry_after=2");
    }
}
