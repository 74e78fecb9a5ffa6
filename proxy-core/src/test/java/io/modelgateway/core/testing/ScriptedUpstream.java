package io.modelgateway.core.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A test upstream that answers each request with a script: a status, headers and the body as pieces written
 * (and flushed) one by one with a delay between them, optionally closing the connection instead of ending
 * the body. It records what it received and how many connections it saw and lost.
 */
public final class ScriptedUpstream implements AutoCloseable {

    /** One scripted answer. {@code cutAfter}: close the connection after that many pieces (-1: end normally). */
    public record Script(int status, Map<String, String> headers, List<byte[]> pieces, long delayMs, int cutAfter) {
        public static Script sse(long delayMs, String... pieces) {
            List<byte[]> p = new ArrayList<>();
            for (String s : pieces) {
                p.add(s.getBytes(StandardCharsets.UTF_8));
            }
            return new Script(200, Map.of("content-type", "text/event-stream"), p, delayMs, -1);
        }

        public static Script json(int status, String body) {
            return new Script(status, Map.of("content-type", "application/json"),
                    List.of(body.getBytes(StandardCharsets.UTF_8)), 0, -1);
        }

        public Script cutAfter(int n) {
            return new Script(status, headers, pieces, delayMs, n);
        }
    }

    /**
     * What the upstream received: method, uri, headers (lower-case names; the last line of a repeated name) and body;
     * {@code headerLines} has every line, in order, as {@code name: value} with the name lower-cased.
     */
    public record Received(String method, String uri, Map<String, String> headers, String body,
            List<String> headerLines) {
        /** Every value of the header {@code name} (lower case), one per line, in order. */
        public List<String> all(String name) {
            return headerLines.stream().filter(l -> l.startsWith(name + ": "))
                    .map(l -> l.substring(name.length() + 2)).toList();
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final Function<Received, Script> scripts;
    public final List<Received> received = new CopyOnWriteArrayList<>();
    public final AtomicInteger connections = new AtomicInteger();
    public final AtomicInteger closed = new AtomicInteger();
    /** Set when a write found the connection unwritable: the gateway stopped reading (backpressure). */
    public volatile boolean sawBackpressure;

    public ScriptedUpstream(Function<Received, Script> scripts) throws InterruptedException {
        this.scripts = scripts;
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        ch.closeFuture().addListener(f -> closed.incrementAndGet());
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new Responder());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    private final class Responder extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            Map<String, String> headers = new java.util.TreeMap<>();
            List<String> lines = new java.util.ArrayList<>();
            req.headers().forEach(e -> {
                headers.put(e.getKey().toLowerCase(), e.getValue());
                lines.add(e.getKey().toLowerCase() + ": " + e.getValue());
            });
            Received r = new Received(req.method().name(), req.uri(), headers,
                    req.content().toString(StandardCharsets.UTF_8), List.copyOf(lines));
            received.add(r);
            Script s = scripts.apply(r);
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(s.status()));
            s.headers().forEach((k, v) -> head.headers().set(k, v));
            int total = s.pieces().stream().mapToInt(p -> p.length).sum();
            if (s.pieces().size() == 1 && s.cutAfter() < 0) {
                head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, total);
            } else {
                HttpUtil.setTransferEncodingChunked(head, true);
            }
            ctx.writeAndFlush(head);
            writePiece(ctx, s, 0);
        }

        private void writePiece(ChannelHandlerContext ctx, Script s, int i) {
            if (!ctx.channel().isActive()) {
                return;
            }
            if (i == s.cutAfter()) {
                ctx.close();
                return;
            }
            if (i >= s.pieces().size()) {
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                return;
            }
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(s.pieces().get(i))));
            if (!ctx.channel().isWritable()) {
                sawBackpressure = true;
            }
            if (s.delayMs() > 0) {
                ctx.executor().schedule(() -> writePiece(ctx, s, i + 1), s.delayMs(), TimeUnit.MILLISECONDS);
            } else {
                writePiece(ctx, s, i + 1);
            }
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
