package io.modelgateway.bench.loadgen;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.IntToLongFunction;

/**
 * A tiny HTTP/1.1 server for the load generator's tests: answers {@code {"ok":true}} (status 200, or the one given)
 * after a delay chosen per request (by its 0-based arrival number); a negative delay never answers. An observer,
 * when given, sees each request first (on the server's event loop).
 */
final class StallingServer implements AutoCloseable {
    private final EventLoopGroup group;
    private final Channel server;
    final AtomicInteger requests = new AtomicInteger();

    StallingServer(IntToLongFunction delayMillis) throws InterruptedException {
        this(delayMillis, HttpResponseStatus.OK, req -> { });
    }

    StallingServer(IntToLongFunction delayMillis, HttpResponseStatus status, Consumer<FullHttpRequest> observer)
            throws InterruptedException {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new SimpleChannelInboundHandler<FullHttpRequest>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                                        observer.accept(req);
                                        long delay = delayMillis.applyAsLong(requests.getAndIncrement());
                                        if (delay == 0) {
                                            ctx.writeAndFlush(answer(status));
                                        } else if (delay > 0) {
                                            ctx.executor().schedule(() -> ctx.writeAndFlush(answer(status)), delay,
                                                    TimeUnit.MILLISECONDS);
                                        }
                                    }
                                });
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static FullHttpResponse answer(HttpResponseStatus status) {
        byte[] body = "{\"ok\":true}".getBytes(StandardCharsets.US_ASCII);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json").setInt(HttpHeaderNames.CONTENT_LENGTH,
                body.length);
        return r;
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
