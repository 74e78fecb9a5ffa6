package io.modelgateway.core.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A hostile test upstream: it reads each request as HTTP and answers with whatever raw bytes its responder writes —
 * malformed heads, interim answers, bodies that never end — written past the HTTP encoder, straight to the socket.
 * It records what it received, the connections it saw and lost, and the bytes it wrote.
 */
public final class RawUpstream implements AutoCloseable {

    /** Answers one request by writing raw bytes to {@code ch} ({@link #send}, {@link #flood}); runs on its event loop. */
    @FunctionalInterface
    public interface Responder {
        void respond(ScriptedUpstream.Received request, Channel ch) throws Exception;
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final Responder responder;
    public final List<ScriptedUpstream.Received> received = new CopyOnWriteArrayList<>();
    public final AtomicInteger connections = new AtomicInteger();
    public final AtomicInteger closed = new AtomicInteger();
    /** Bytes written by {@link #flood} and {@link #send}, across connections. */
    public final AtomicLong written = new AtomicLong();

    public RawUpstream(Responder responder) throws InterruptedException {
        this.responder = responder;
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        ch.closeFuture().addListener(f -> closed.incrementAndGet());
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new SimpleChannelInboundHandler<FullHttpRequest>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req)
                                            throws Exception {
                                        Map<String, String> headers = new java.util.TreeMap<>();
                                        List<String> lines = new java.util.ArrayList<>();
                                        req.headers().forEach(e -> {
                                            headers.put(e.getKey().toLowerCase(), e.getValue());
                                            lines.add(e.getKey().toLowerCase() + ": " + e.getValue());
                                        });
                                        ScriptedUpstream.Received r = new ScriptedUpstream.Received(req.method().name(),
                                                req.uri(), headers, req.content().toString(StandardCharsets.UTF_8), lines);
                                        received.add(r);
                                        responder.respond(r, ctx.channel());
                                    }

                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        ctx.close();
                                    }
                                });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    /** Writes {@code text} (ISO-8859-1, so any byte can be written) to the socket as it is, and flushes. */
    public ChannelFuture send(Channel ch, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        written.addAndGet(bytes.length);
        return ch.pipeline().firstContext().writeAndFlush(Unpooled.wrappedBuffer(bytes));
    }

    /** {@link #send} after {@code delayMs}. */
    public void sendLater(Channel ch, String text, long delayMs) {
        ch.eventLoop().schedule(() -> send(ch, text), delayMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Writes {@code piece} again and again, each write once the previous one has left, until the connection closes:
     * a body that never ends.
     */
    public void flood(Channel ch, byte[] piece) {
        if (!ch.isActive()) {
            return;
        }
        ByteBuf buf = Unpooled.wrappedBuffer(piece);
        ch.pipeline().firstContext().writeAndFlush(buf).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                written.addAndGet(piece.length);
                flood(ch, piece);
            }
        });
    }

    /** A chunk of a chunked body, framed. */
    public static String chunk(String data) {
        return Integer.toHexString(data.getBytes(StandardCharsets.ISO_8859_1).length) + "\r\n" + data + "\r\n";
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
