package io.modelgateway.core.simulator;

import io.netty.buffer.ByteBuf;
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
import java.util.Map;

/**
 * The standalone simulator's delivery of one {@link SimulatedResponse} to its own client: the parts as the
 * {@link SimulatedPacer} makes them due, written and flushed at once (the events that fell due together, one flush)
 * — a full response for a non-stream answer, else the head and one {@code HttpContent} per event.
 *
 * <p>Buffers: every {@code ByteBuf} made here wraps the response's immutable byte arrays and is handed to
 * {@code write}, which releases it. At the end: the chunked body's last chunk and {@code onDone}, or a close when
 * the connection is not kept alive, the write failed, or the response is cut (then no last chunk: the client sees a
 * truncated body). A response that stalls just stops after its last event: no last chunk, no close.
 */
final class SimulatedResponseWriter implements SimulatedPacer.Sink {

    private final ChannelHandlerContext ctx;
    private final SimulatedResponse response;
    private final boolean keepAlive;
    private final Runnable onDone;
    private final SimulatedPacer pacer;
    private boolean cancelled;
    private ChannelFuture lastWrite;

    SimulatedResponseWriter(ChannelHandlerContext ctx, SimulatedResponse response, boolean keepAlive, Runnable onDone) {
        this.ctx = ctx;
        this.response = response;
        this.keepAlive = keepAlive;
        this.onDone = onDone;
        this.pacer = new SimulatedPacer(ctx.channel(), response, this);
    }

    void start() {
        pacer.start();
    }

    /** The channel became writable again. */
    void resume() {
        pacer.resume();
    }

    /** The channel is gone: stop, and let go of the timer. */
    void cancel() {
        cancelled = true;
        pacer.cancel();
    }

    @Override
    public boolean stopped() {
        return cancelled || !ctx.channel().isActive();
    }

    @Override
    public void head() {
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
    }

    private void setHeaders(HttpHeaders headers) {
        headers.set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        for (Map.Entry<String, String> h : response.headers().entrySet()) {
            headers.set(h.getKey(), h.getValue());
        }
        // Only the request decides this header: a coming cut is not announced, the connection just dies.
        if (!keepAlive) {
            headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
    }

    @Override
    public void event(SimEvents events, int index) {
        ByteBuf bytes = ctx.alloc().buffer(events.length(index));
        events.writeTo(index, bytes);
        lastWrite = ctx.write(new DefaultHttpContent(bytes));
    }

    @Override
    public void flush() {
        ctx.flush();
    }

    @Override
    public void end() {
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(this::afterLastWrite);
    }

    @Override
    public void cut() {
        // Close once what was promised went out: the client reads k events, then EOF mid-body.
        lastWrite.addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void stalled() {
        // A hung provider: what was sent stays sent, the connection stays open, nothing else happens.
    }

    private void afterLastWrite(Future<? super Void> f) {
        if (!f.isSuccess() || !keepAlive) {
            ctx.channel().close();
        } else if (!cancelled) {
            onDone.run();
        }
    }
}
