package io.modelgateway.core.simulator;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Delivers one {@link SimulatedResponse} on a channel, on that channel's event loop only (so no
 * field needs a lock or a volatile): the head after {@code headerDelayMs}, then each stream event
 * after its own delay, written and flushed one {@code HttpContent} at a time. Waits are
 * {@code eventLoop().schedule(...)}, never sleeps. While the channel is not writable it stops and
 * {@link #resume()} (from {@code channelWritabilityChanged}) continues; once the channel is closed it
 * stops for good and {@link #cancel()} drops a pending timer.
 *
 * <p>Buffers: every {@code ByteBuf} made here wraps the response's immutable byte arrays and is
 * handed to {@code write}, which releases it. At the end: the chunked body's last chunk and
 * {@code onDone}, or a close when the connection is not kept alive, the write failed, or the
 * response says {@link SimulatedResponse#cutAtEnd() cut} (then no last chunk: the client sees a
 * truncated body). A response that {@link SimulatedResponse#stallAtEnd() stalls} just stops after its
 * last event: no last chunk, no close, only {@code onStall} (when given) is told.
 */
final class SimulatedResponseWriter {

    private final ChannelHandlerContext ctx;
    private final SimulatedResponse response;
    private final boolean keepAlive;
    private final Runnable onDone;
    private final Consumer<HttpHeaders> decorator;
    private final Runnable onCut;
    private final Runnable onStall;

    private int next;
    private boolean delayElapsed;
    private boolean waitingForWritability;
    private boolean cancelled;
    private ScheduledFuture<?> timer;
    private ChannelFuture lastWrite;

    SimulatedResponseWriter(ChannelHandlerContext ctx, SimulatedResponse response, boolean keepAlive, Runnable onDone) {
        this(ctx, response, keepAlive, onDone, null, null, null);
    }

    /**
     * @param decorator null, or adjusts the response headers last (the gateway's in-process provider puts its
     *                  own request id and retry headers there)
     * @param onCut     null to close the connection where the response is cut (a standalone upstream dying);
     *                  else called instead, after the events before the cut were written
     * @param onStall   null, or called once a stalling response has written its last event (the writer then
     *                  does nothing more)
     */
    SimulatedResponseWriter(ChannelHandlerContext ctx, SimulatedResponse response, boolean keepAlive, Runnable onDone,
            Consumer<HttpHeaders> decorator, Runnable onCut, Runnable onStall) {
        this.ctx = ctx;
        this.response = response;
        this.keepAlive = keepAlive;
        this.onDone = onDone;
        this.decorator = decorator;
        this.onCut = onCut;
        this.onStall = onStall;
    }

    void start() {
        long delay = response.headerDelayMs();
        if (delay > 0) {
            timer = ctx.executor().schedule(this::writeHead, delay, TimeUnit.MILLISECONDS);
        } else {
            writeHead();
        }
    }

    /** How many stream events were handed to the channel so far. */
    int eventsWritten() {
        return next;
    }

    /** The channel became writable again. */
    void resume() {
        if (waitingForWritability && ctx.channel().isWritable()) {
            waitingForWritability = false;
            writeEvents();
        }
    }

    /** The channel is gone: stop, and let go of the timer. */
    void cancel() {
        cancelled = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private boolean stopped() {
        return cancelled || !ctx.channel().isActive();
    }

    private void writeHead() {
        timer = null;
        if (stopped()) {
            return;
        }
        HttpResponseStatus status = HttpResponseStatus.valueOf(response.status());
        if (!response.isStream()) {
            FullHttpResponse full = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.wrappedBuffer(response.body()));
            setHeaders(full.headers());
            HttpUtil.setContentLength(full, response.body().length);
            ctx.writeAndFlush(full).addListener(this::afterLastWrite);
            return;
        }
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, status);
        setHeaders(head.headers());
        HttpUtil.setTransferEncodingChunked(head, true);
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        lastWrite = ctx.writeAndFlush(head);
        writeEvents();
    }

    private void setHeaders(HttpHeaders headers) {
        headers.set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        for (Map.Entry<String, String> h : response.headers().entrySet()) {
            headers.set(h.getKey(), h.getValue());
        }
        if (decorator != null) {
            decorator.accept(headers);
        }
        // Only the request decides this header: a coming cut is not announced, the connection just dies.
        if (!keepAlive) {
            headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
    }

    private void writeEvents() {
        List<SimEvent> events = response.events();
        while (next < events.size()) {
            if (stopped()) {
                return;
            }
            if (!ctx.channel().isWritable()) {
                waitingForWritability = true;
                return;
            }
            SimEvent event = events.get(next);
            if (event.delayNanos() > 0 && !delayElapsed) {
                delayElapsed = true;
                timer = ctx.executor().schedule(this::afterDelay, event.delayNanos(), TimeUnit.NANOSECONDS);
                return;
            }
            delayElapsed = false;
            next++;
            lastWrite = ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event.bytes())));
        }
        if (stopped()) {
            return;
        }
        if (response.stallAtEnd()) {
            // A hung provider: what was sent stays sent, the connection stays open, nothing else happens.
            if (onStall != null) {
                onStall.run();
            }
        } else if (response.cutAtEnd() && onCut != null) {
            onCut.run();
        } else if (response.cutAtEnd()) {
            // Close once what was promised went out: the client reads k events, then EOF mid-body.
            lastWrite.addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(this::afterLastWrite);
        }
    }

    private void afterDelay() {
        timer = null;
        writeEvents();
    }

    private void afterLastWrite(Future<? super Void> f) {
        if (!f.isSuccess() || !keepAlive) {
            ctx.channel().close();
        } else if (!cancelled) {
            onDone.run();
        }
    }
}
