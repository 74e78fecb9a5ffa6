package io.modelgateway.core.server;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.modelgateway.core.exchange.ConnectionEvent;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * Keeps HTTP/1.1 answers in request order: passes one request at a time up the pipeline and holds pipelined ones
 * until the answer ahead of them is complete. Without it, a request that an early handler answers at once (a bad
 * key, {@code /health}, a 404) would be written into the middle of a stream still running for the request before
 * it. Sits right after the body aggregator, so it holds whole requests.
 *
 * <p>When an answer is complete it learns from the connection's {@link ConnectionEvent#ANSWER_COMPLETE} signal. While requests are held, reading stops (auto-read off), so a
 * client that pipelines without end cannot pile up requests in memory; reading resumes once the queue is empty.
 * Held requests are owned here until passed on, and released if the connection closes first. Event-loop
 * confined; one per connection.
 */
public final class PipeliningGate extends ChannelInboundHandlerAdapter {
    private final ArrayDeque<FullHttpRequest> held = new ArrayDeque<>(2);
    /** A request was passed on and its answer is not complete yet. */
    private boolean answering;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (answering || !held.isEmpty()) {
            held.add(request);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        answering = true;
        ctx.fireChannelRead(request);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ConnectionEvent.ANSWER_COMPLETE && answering) {
            answering = false;
            // The next request starts on a later turn of the loop: whoever wrote this answer finishes first. With
            // none held there is nothing to start (reading is on: it stops only while requests are held), and no
            // task is queued: the common case, one request at a time.
            if (!held.isEmpty()) {
                ctx.executor().execute(() -> next(ctx));
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void next(ChannelHandlerContext ctx) {
        if (answering || !ctx.channel().isActive()) {
            return;
        }
        FullHttpRequest request = held.poll();
        if (request == null) {
            ctx.channel().config().setAutoRead(true);
            return;
        }
        answering = true;
        if (held.isEmpty()) {
            ctx.channel().config().setAutoRead(true);
        }
        ctx.fireChannelRead(request);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseHeld();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseHeld();
    }

    private void releaseHeld() {
        FullHttpRequest r;
        while ((r = held.poll()) != null) {
            ReferenceCountUtil.release(r);
        }
    }

    /** Requests held now (tests). */
    int heldCount() {
        return held.size();
    }
}
