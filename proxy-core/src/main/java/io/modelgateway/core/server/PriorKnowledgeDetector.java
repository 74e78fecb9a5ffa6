package io.modelgateway.core.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * First on a plain listener that serves h2c ({@code http2.cleartext}): looks at a connection's first bytes and
 * builds the HTTP/2 pipeline when they are the HTTP/2 client preface (prior knowledge), the HTTP/1.1 one otherwise,
 * then steps aside; the bytes it looked at go on to the pipeline it built. A connection that sends fewer bytes than
 * the preface and then nothing is closed after {@code request_timeout_ms}. No {@code Upgrade: h2c}: prior knowledge
 * only.
 */
final class PriorKnowledgeDetector extends ByteToMessageDecoder {
    private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** Builds the pipeline of the protocol found, after this handler. */
    interface Protocols {
        void http2(ChannelHandlerContext ctx);

        void http1(ChannelHandlerContext ctx);
    }

    private final Protocols protocols;
    private final long timeoutMs;
    private ScheduledFuture<?> timer;

    PriorKnowledgeDetector(Protocols protocols, long timeoutMs) {
        this.protocols = protocols;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timer = ctx.executor().schedule(() -> {
            ctx.close();
        }, timeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int n = Math.min(in.readableBytes(), PREFACE.length);
        int start = in.readerIndex();
        for (int i = 0; i < n; i++) {
            if (in.getByte(start + i) != PREFACE[i]) {
                choose(ctx, false);
                return;
            }
        }
        if (n == PREFACE.length) {
            choose(ctx, true);
        }
        // else: a prefix of the preface so far; wait for more
    }

    private void choose(ChannelHandlerContext ctx, boolean http2) {
        cancel();
        if (http2) {
            protocols.http2(ctx);
        } else {
            protocols.http1(ctx);
        }
        ctx.pipeline().remove(this); // hands what it holds to the handler after it
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        cancel();
    }
}
