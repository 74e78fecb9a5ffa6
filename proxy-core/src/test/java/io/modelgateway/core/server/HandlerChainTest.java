package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A {@link HandlerChain} is checked against Netty's own pipeline: the same handlers, once each in a pipeline context
 * of its own and once inside a chain, are driven the same way, and each run's trace (which handler saw what, in which
 * order, and what left the pipeline at either end) must be the same.
 */
class HandlerChainTest {

    /** Every event and operation a handler sees, and what reaches the pipeline's ends. */
    private final List<String> trace = new CopyOnWriteArrayList<>();

    @Test
    void inboundEvents_reachTheHandlersThatHandleThem_inOrder_thenThePipelineAfterTheChain() {
        assertSameAsPipeline(this::mixedHandlers, ch -> {
            ch.pipeline().fireChannelRead("request");
            ch.pipeline().fireChannelReadComplete();
            ch.pipeline().fireUserEventTriggered("event");
            ch.pipeline().fireChannelWritabilityChanged();
            ch.pipeline().fireExceptionCaught(new IllegalStateException("boom"));
        });
    }

    @Test
    void writesFromInsideTheChain_passThePreviousOutboundHandlers_thenLeaveBelowIt() {
        assertSameAsPipeline(this::mixedHandlers, ch -> {
            // The last handler answers what it reads, from its own context (as the exchange does).
            ch.pipeline().fireChannelRead("answer-me");
            ch.pipeline().writeAndFlush("from-outside");
            ch.pipeline().read();
        });
    }

    @Test
    void aWriteStartedFromAMiddleHandlersContext_meetsOnlyTheHandlersBeforeIt() {
        assertSameAsPipeline(this::mixedHandlers, ch -> {
            ChannelHandlerContext middle = contextOf(ch, "in-only");
            middle.write("mid").addListener(f -> trace.add("mid written " + f.isSuccess()));
            middle.flush();
        });
    }

    @Test
    void aHandlerThatThrows_hasItsOwnExceptionCaughtCalled_andAFailedWriteFailsItsPromise() {
        Supplier<List<ChannelHandler>> handlers = () -> List.of(
                new Duplex("outer"), new ThrowingOnRead("thrower"), new ThrowingOnWrite("bad-writer"),
                new InOnly("after"));
        assertSameAsPipeline(handlers, ch -> {
            ch.pipeline().fireChannelRead("x");
            ChannelFuture f = ch.pipeline().writeAndFlush("y");
            trace.add("write failed with " + (f.cause() == null ? null : f.cause().getMessage()));
        });
    }

    @Test
    void closingTheChannel_tellsTheHandlersInactive_andRemovesThemLastFirst() {
        assertSameAsPipeline(this::mixedHandlers, ch -> {
            ch.pipeline().fireChannelRead("r");
            ch.close();
        });
    }

    @Test
    void callsFromAnotherThread_runOnTheChannelsEventLoop() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(2);
        try {
            LocalAddress address = new LocalAddress("handler-chain-test");
            List<Thread> seen = new CopyOnWriteArrayList<>();
            HandlerChain chain = HandlerChain.builder()
                    .add("out", new ChannelOutboundHandlerAdapter() {
                        @Override
                        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                            seen.add(Thread.currentThread());
                            ctx.write(msg, promise);
                        }
                    })
                    .add("in", new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            seen.add(Thread.currentThread());
                            ctx.fireChannelRead(msg);
                        }
                    })
                    .build();
            Channel server = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
                    .childHandler(new ChannelInitializer<LocalChannel>() {
                        @Override
                        protected void initChannel(LocalChannel ch) {
                        }
                    }).bind(address).sync().channel();
            Channel client = new Bootstrap().group(group).channel(LocalChannel.class)
                    .handler(chain).connect(address).sync().channel();
            Thread loop = client.eventLoop().submit(Thread::currentThread).get(5, TimeUnit.SECONDS);

            // From the test's thread: a read fired from the first link reaches "in", a write from "in" reaches "out".
            chain.context("out").fireChannelRead(io.netty.buffer.Unpooled.EMPTY_BUFFER);
            chain.context("in").writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).await(5, TimeUnit.SECONDS);
            client.eventLoop().submit(() -> { }).get(5, TimeUnit.SECONDS);

            assertThat(seen).hasSize(2).allMatch(t -> t == loop);
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void masks_skipTheAdaptersPassThroughMethods() {
        int inOnly = HandlerChain.mask(InOnly.class);
        assertThat(inOnly & HandlerChain.READ).isNotZero();
        assertThat(inOnly & (HandlerChain.USER_EVENT | HandlerChain.WRITE | HandlerChain.READ_COMPLETE)).isZero();
        int out = HandlerChain.mask(OutOnly.class);
        assertThat(out & (HandlerChain.WRITE | HandlerChain.FLUSH)).isEqualTo(HandlerChain.WRITE | HandlerChain.FLUSH);
        assertThat(out & (HandlerChain.READ | HandlerChain.EXCEPTION | HandlerChain.CLOSE)).isZero();
        assertThat(HandlerChain.mask(ChannelInboundHandlerAdapter.class)).isZero();
        assertThat(HandlerChain.mask(ChannelDuplexHandler.class)).isZero();
    }

    // ---- the comparison ----

    private List<ChannelHandler> mixedHandlers() {
        return List.of(new Duplex("duplex"), new OutOnly("out-only"), new InOnly("in-only"),
                new ChannelInboundHandlerAdapter(), new Answerer("answerer"), new Duplex("duplex-2"));
    }

    /** Runs {@code drive} on a pipeline of the handlers and on a chain of fresh ones; both traces must be equal. */
    private void assertSameAsPipeline(Supplier<List<ChannelHandler>> handlers, Consumer<EmbeddedChannel> drive) {
        List<String> plain = run(handlers.get(), false, drive);
        List<String> chained = run(handlers.get(), true, drive);
        assertThat(plain).as("the pipeline's own trace").isNotEmpty();
        assertThat(chained).isEqualTo(plain);
    }

    private List<String> run(List<ChannelHandler> handlers, boolean chained, Consumer<EmbeddedChannel> drive) {
        trace.clear();
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast("below", new Duplex("below"));
        if (chained) {
            HandlerChain.Builder chain = HandlerChain.builder();
            for (int i = 0; i < handlers.size(); i++) {
                chain.add(name(handlers.get(i), i), handlers.get(i));
            }
            ch.pipeline().addLast("chain", chain.build());
        } else {
            for (int i = 0; i < handlers.size(); i++) {
                ch.pipeline().addLast(name(handlers.get(i), i), handlers.get(i));
            }
        }
        ch.pipeline().addLast("above", new Duplex("above"));
        drive.accept(ch);
        ch.runPendingTasks();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            trace.add("left below: " + o);
        }
        for (Object o; (o = ch.readInbound()) != null; ) {
            trace.add("left above: " + o);
        }
        ch.finishAndReleaseAll();
        return new ArrayList<>(trace);
    }

    private static String name(ChannelHandler h, int i) {
        return h instanceof Named n ? n.name() : "plain-" + i;
    }

    private static ChannelHandlerContext contextOf(EmbeddedChannel ch, String name) {
        ChannelHandlerContext ctx = ch.pipeline().context(name);
        if (ctx == null) {
            HandlerChain chain = (HandlerChain) ch.pipeline().get("chain");
            ctx = chain.context(name);
        }
        return ctx;
    }

    // ---- handlers that record what they see, each class handling a different set of events ----

    private interface Named {
        String name();
    }

    /** Sees every inbound event and the outbound operations, records each and passes it on. */
    private class Duplex extends ChannelDuplexHandler implements Named {
        private final String name;

        Duplex(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            trace.add(name + " added");
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            trace.add(name + " removed");
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            trace.add(name + " read " + msg);
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            trace.add(name + " readComplete");
            ctx.fireChannelReadComplete();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            trace.add(name + " event " + evt);
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            trace.add(name + " writability");
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            trace.add(name + " inactive");
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            trace.add(name + " exception " + cause.getMessage());
            if (!name.equals("above")) {
                ctx.fireExceptionCaught(cause);
            }
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            trace.add(name + " write " + msg);
            ctx.write(msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            trace.add(name + " flush");
            ctx.flush();
        }

        @Override
        public void read(ChannelHandlerContext ctx) {
            trace.add(name + " outbound read");
            ctx.read();
        }

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
            trace.add(name + " close");
            ctx.close(promise);
        }
    }

    /** Reads only (passes everything else by the adapter's skipped methods). */
    private class InOnly extends ChannelInboundHandlerAdapter implements Named {
        private final String name;

        InOnly(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            trace.add(name + " read " + msg);
            ctx.fireChannelRead(msg);
        }
    }

    /** Writes and flushes only. */
    private class OutOnly extends ChannelOutboundHandlerAdapter implements Named {
        private final String name;

        OutOnly(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            trace.add(name + " write " + msg);
            ctx.write(msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            trace.add(name + " flush");
            ctx.flush();
        }
    }

    /** Answers "answer-me" from its own context; passes everything else on. */
    private class Answerer extends ChannelInboundHandlerAdapter implements Named {
        private final String name;

        Answerer(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            trace.add(name + " read " + msg);
            if ("answer-me".equals(msg)) {
                ctx.writeAndFlush("answer").addListener(f -> trace.add("answer written " + f.isSuccess()));
            } else {
                ctx.fireChannelRead(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            trace.add(name + " inactive");
            ctx.fireChannelInactive();
        }
    }

    private class ThrowingOnRead extends ChannelInboundHandlerAdapter implements Named {
        private final String name;

        ThrowingOnRead(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            trace.add(name + " read " + msg);
            throw new IllegalArgumentException("read failed in " + name);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            trace.add(name + " caught " + cause.getMessage());
            ctx.fireExceptionCaught(cause);
        }
    }

    private class ThrowingOnWrite extends ChannelOutboundHandlerAdapter implements Named {
        private final String name;

        ThrowingOnWrite(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            trace.add(name + " write " + msg);
            throw new IllegalStateException("write failed in " + name);
        }
    }
}
