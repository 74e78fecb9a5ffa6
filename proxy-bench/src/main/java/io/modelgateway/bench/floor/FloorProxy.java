package io.modelgateway.bench.floor;

import io.modelgateway.bench.BoundServer;
import io.modelgateway.core.cli.Main;
import io.modelgateway.core.exchange.Transport;
import io.modelgateway.core.server.ClientHttpCodec;
import io.modelgateway.core.server.GatewayChannelInitializer;
import io.modelgateway.core.upstream.UpstreamResponseDecoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * The floor under the gateway's cost: the least a proxy on the JVM and Netty does to carry one request and its
 * answer, with none of the gateway's work (no key, no limits, no JSON, no usage, no metrics, no access log). It
 * answers one question the targets raise: how much of the gateway's CPU per request against nginx is
 * Netty's and the JVM's own, and how much is the gateway's.
 * <ul>
 *   <li>{@code relay}: bytes copied both ways, each client connection paired with one upstream connection opened
 *       when the client connects (the pattern of Netty's own proxy example). No HTTP at all: the lowest floor.</li>
 *   <li>{@code http}: the same pairing with Netty's HTTP/1.1 codecs on both sides ({@code HttpServerCodec} towards the
 *       client, {@code HttpClientCodec} towards the upstream), each decoded message passed on and re-encoded: a
 *       minimal HTTP-aware Netty reverse proxy.</li>
 *   <li>{@code codecs}: as {@code http}, with the gateway's own codecs in place of Netty's: its client codec
 *       ({@code ClientHttpCodec}, with the gateway's limits and header checks) and its upstream answer decoder
 *       ({@code UpstreamResponseDecoder}), the request re-encoded by Netty's {@code HttpRequestEncoder} (the gateway
 *       writes its upstream request as bytes it builds itself). What the gateway's HTTP/1.1 framing costs without
 *       anything the gateway does between reading a request and writing its answer.</li>
 * </ul>
 * Each read is written on at once and flushed when the read loop completes. Not a product: no backpressure, no
 * timeouts, no error answers; a failed connection is closed. The upstream's host and port are fixed at start; the
 * client's request line and headers pass unchanged.
 *
 * <p>{@code java -cp benchmarks.jar io.modelgateway.bench.floor.FloorProxy --mode relay|http|codecs --upstream HOST:PORT
 * [--listen HOST:PORT]}; prints {@code listening on http://HOST:PORT} once bound. Netty's leak detector samples as
 * the gateway's launcher makes it sample (one buffer in 1,024) unless the JVM names a level or interval itself.
 */
public final class FloorProxy implements AutoCloseable {
    public enum Mode { RELAY, HTTP, CODECS }

    private final BoundServer server;

    private FloorProxy(Mode mode, String host, int port, InetSocketAddress upstream) throws InterruptedException {
        EventLoopGroup group = Transport.newGroup(1, "floor");
        Supplier<ChannelHandler[]> frontHandlers = switch (mode) {
            case RELAY -> () -> new ChannelHandler[0];
            case HTTP -> () -> new ChannelHandler[] {new HttpServerCodec()};
            // with the limits and checks of the gateway's listener
            case CODECS -> () -> new ChannelHandler[] {
                    new ClientHttpCodec(GatewayChannelInitializer.clientDecoderConfig())};
        };
        Supplier<ChannelHandler[]> backHandlers = switch (mode) {
            case RELAY -> () -> new ChannelHandler[0];
            case HTTP -> () -> new ChannelHandler[] {new HttpClientCodec()};
            case CODECS -> () -> new ChannelHandler[] {new HttpRequestEncoder(), new UpstreamResponseDecoder()};
        };
        server = new BoundServer(group, new ServerBootstrap().group(group).channel(Transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(frontHandlers.get());
                        ch.pipeline().addLast(new Front(upstream, backHandlers));
                    }
                })
                .bind(host, port).sync().channel());
    }

    public static FloorProxy start(Mode mode, String host, int port, InetSocketAddress upstream)
            throws InterruptedException {
        return new FloorProxy(mode, host, port, upstream);
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.close();
    }

    /**
     * Passes what one channel reads to its peer, flushing once per read loop, and closes the peer when its own
     * channel closes.
     */
    private static class Pass extends ChannelInboundHandlerAdapter {
        Channel peer;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (peer != null && peer.isActive()) {
                peer.write(msg, peer.voidPromise());
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (peer != null) {
                peer.flush();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (peer != null) {
                peer.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** The client's side: opens its upstream connection on its own event loop, then starts reading. */
    private static final class Front extends Pass {
        private final InetSocketAddress upstream;
        private final Supplier<ChannelHandler[]> backHandlers;

        Front(InetSocketAddress upstream, Supplier<ChannelHandler[]> backHandlers) {
            this.upstream = upstream;
            this.backHandlers = backHandlers;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel front = ctx.channel();
            Pass back = new Pass();
            back.peer = front;
            ChannelFuture f = new Bootstrap().group(front.eventLoop()).channel(Transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(backHandlers.get());
                            ch.pipeline().addLast(back);
                        }
                    })
                    .connect(upstream);
            peer = f.channel();
            f.addListener(done -> {
                if (done.isSuccess()) {
                    front.config().setAutoRead(true);
                } else {
                    front.close();
                }
            });
        }
    }

    public static void main(String[] args) throws Exception {
        Main.leakSamplingDefault(); // the floor pays for the leak detector what the gateway pays
        String listen = "127.0.0.1:0";
        String upstream = null;
        Mode mode = Mode.RELAY;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--listen" -> listen = args[++i];
                case "--upstream" -> upstream = args[++i];
                case "--mode" -> mode = Mode.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT));
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (--mode relay|http|codecs, --upstream HOST:PORT, --listen HOST:PORT)");
            }
        }
        if (upstream == null) {
            throw new IllegalArgumentException("--upstream HOST:PORT is required");
        }
        int colon = listen.lastIndexOf(':');
        int upColon = upstream.lastIndexOf(':');
        FloorProxy p = start(mode, listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)),
                new InetSocketAddress(upstream.substring(0, upColon), Integer.parseInt(upstream.substring(upColon + 1))));
        System.out.println("floor proxy (" + mode.name().toLowerCase(java.util.Locale.ROOT) + ") listening on http://127.0.0.1:"
                + p.port() + " (" + Transport.name() + ")");
        Runtime.getRuntime().addShutdownHook(new Thread(p::close));
        Thread.currentThread().join();
    }
}
