package io.modelgateway.core.simulator;

import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.server.HttpResponses;
import io.modelgateway.core.upstream.Exchange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
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
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An exchange answered by the in-process simulator (provider type {@code simulator}): the engine computes
 * the whole answer up front, and this writes it to the client at the simulated pace on the client's own
 * event loop — timers, never sleeps. A client that stops reading pauses the stream; one that leaves
 * cancels the timers.
 */
public final class SimulatorExchange implements Exchange {
    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final SimulatorEngine engine;
    private final RequestPeek peek;
    private final String upstreamModel;
    private final Runnable onDone;
    private SimulatedResponse response;
    private List<SimEvent> events;
    private int nextEvent;
    private boolean waitingForWritability;
    /** The event at {@link #nextEvent} has already waited for its delay. */
    private boolean dueNow;
    private ScheduledFuture<?> timer;
    private boolean done;

    public SimulatorExchange(ChannelHandlerContext ctx, GatewayRequest request, SimulatorEngine engine,
            RequestPeek peek, String upstreamModel, Runnable onDone) {
        this.ctx = ctx;
        this.request = request;
        this.engine = engine;
        this.peek = peek;
        this.upstreamModel = upstreamModel;
        this.onDone = onDone;
    }

    @Override
    public void start() {
        byte[] body = requestBytes();
        HttpHeaders headers = request.headers();
        response = engine.answer(request.endpoint(), body, 0, body.length, headers::get);
        long delay = response.headerDelayMs();
        if (delay > 0) {
            timer = ctx.executor().schedule(this::sendHead, delay, TimeUnit.MILLISECONDS);
        } else {
            sendHead();
        }
    }

    /** The body the simulator sees: the caller's, with the deployment's model name when it differs (GD-17). */
    private byte[] requestBytes() {
        ByteBuf body = request.body();
        if (upstreamModel.equals(peek.model())) {
            return ByteBufUtil.getBytes(body);
        }
        ByteBuf spliced = BodySplicer.replaceString(ctx.alloc(), body, peek.modelStart(), peek.modelEnd(),
                upstreamModel);
        try {
            return ByteBufUtil.getBytes(spliced);
        } finally {
            spliced.release();
        }
    }

    private void sendHead() {
        timer = null;
        if (done) {
            return;
        }
        SimulatedResponse r = response;
        if (r.events() == null) {
            if (r.cutAtEnd() && (r.body() == null || r.body().length == 0)) {
                ctx.close();
                finish();
                return;
            }
            byte[] body = r.body() == null ? new byte[0] : r.body();
            FullHttpResponse full = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(r.status()), Unpooled.wrappedBuffer(body));
            headers(full.headers(), r);
            full.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            HttpUtil.setKeepAlive(full, request.keepAlive());
            ctx.writeAndFlush(full);
            finish();
            return;
        }
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(r.status()));
        headers(head.headers(), r);
        head.headers().set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        head.headers().set("x-accel-buffering", "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        HttpUtil.setKeepAlive(head, request.keepAlive());
        ctx.write(head);
        events = r.events();
        nextEvent = 0;
        pump();
    }

    private void headers(HttpHeaders h, SimulatedResponse r) {
        for (Map.Entry<String, String> e : r.headers().entrySet()) {
            h.set(e.getKey(), e.getValue());
        }
        h.set(HttpHeaderNames.CONTENT_TYPE, r.contentType());
        HttpResponses.ensureRetryHeaders(h, r.status());
        HttpResponses.requestId(h, request.requestId());
    }

    /** Writes due events, one flush each, until one must wait for its time or for the client to read. */
    private void pump() {
        timer = null;
        while (!done) {
            if (nextEvent >= events.size()) {
                if (response.cutAtEnd()) {
                    ctx.flush();
                    ctx.close();
                } else {
                    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                }
                finish();
                return;
            }
            if (!ctx.channel().isWritable()) {
                ctx.flush();
                waitingForWritability = true;
                return;
            }
            SimEvent event = events.get(nextEvent);
            if (event.delayNanos() > 0 && timer == null && !dueNow) {
                dueNow = true;
                timer = ctx.executor().schedule(this::pump, event.delayNanos(), TimeUnit.NANOSECONDS);
                return;
            }
            dueNow = false;
            nextEvent++;
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event.bytes())));
        }
    }

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (writable && waitingForWritability && !done) {
            waitingForWritability = false;
            pump();
        }
    }

    @Override
    public void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        finish();
    }

    private void finish() {
        if (done) {
            return;
        }
        done = true;
        onDone.run();
    }
}
