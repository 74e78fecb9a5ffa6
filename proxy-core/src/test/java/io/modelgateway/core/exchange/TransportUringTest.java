package io.modelgateway.core.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The io_uring transport ({@code -Dgateway.transport=io_uring}) with thousands of connections active in one turn of its
 * loop: Netty's default completion queue overflowed there and logged a warning each time.
 */
class TransportUringTest {

    private static final int CONNECTIONS = 3_000;

    @Test
    void thousandsOfConnectionsInOneTurn_noCompletionQueueOverflow() throws Exception {
        // Runs where the kernel offers io_uring (this project's machines do; a seccomp profile may forbid it).
        assumeTrue(IoUring.isAvailable(), () -> "io_uring unavailable: " + IoUring.unavailabilityCause());

        assertEquals(0, overflowWarnings(Transport.uringFactory()));
    }

    /** Echoes a message on each of {@link #CONNECTIONS} connections at once; the overflow warnings Netty logged. */
    static int overflowWarnings(IoHandlerFactory factory) throws Exception {
        Logger netty = Logger.getLogger("io.netty.channel.uring.IoUringIoHandler");
        AtomicInteger warnings = new AtomicInteger();
        Handler counter = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()
                        && String.valueOf(r.getMessage()).contains("overflow")) {
                    warnings.incrementAndGet();
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        netty.addHandler(counter);
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, factory);
        try {
            Channel server = new ServerBootstrap().group(group).channel(IoUringServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, CONNECTIONS)
                    .childHandler(new Echo())
                    .bind("127.0.0.1", 0).sync().channel();
            CountDownLatch echoed = new CountDownLatch(CONNECTIONS);
            Bootstrap client = new Bootstrap().group(group).channel(IoUringSocketChannel.class)
                    .handler(new Count(echoed));
            List<Channel> clients = new ArrayList<>(CONNECTIONS);
            for (int i = 0; i < CONNECTIONS; i++) {
                clients.add(client.connect(server.localAddress()).sync().channel());
            }
            // Every client writes in the same turn of the loop, so every echo completes in a turn or two.
            group.next().submit(() -> {
                for (Channel c : clients) {
                    ByteBuf m = c.alloc().buffer(8).writeLong(c.hashCode());
                    c.writeAndFlush(m);
                }
            }).sync();
            assertTrue(echoed.await(30, TimeUnit.SECONDS), "every connection echoed");
            for (Channel c : clients) {
                c.close();
            }
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            netty.removeHandler(counter);
        }
        return warnings.get();
    }

    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg);
        }
    }

    @ChannelHandler.Sharable
    private static final class Count extends ChannelInboundHandlerAdapter {
        private final CountDownLatch echoed;

        Count(CountDownLatch echoed) {
            this.echoed = echoed;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            echoed.countDown();
        }
    }
}
