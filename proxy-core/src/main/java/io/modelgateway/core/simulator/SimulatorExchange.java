package io.modelgateway.core.simulator;

import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.server.HttpResponses;
import io.modelgateway.core.upstream.Exchange;
import io.modelgateway.core.upstream.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * An exchange answered by the in-process simulator (provider type {@code simulator}): the engine computes
 * the answer up front and {@link SimulatedResponseWriter} delivers it at the simulated pace on the client's
 * own event loop — the same writer the standalone simulator uses, so both behave alike on the wire. A client
 * that stops reading pauses the stream; one that leaves cancels its timers.
 */
public final class SimulatorExchange implements Exchange {
    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final SimulatorEngine engine;
    private final RequestPeek peek;
    private final String upstreamModel;
    private final Runnable onDone;
    private SimulatedResponseWriter writer;
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
        SimulatedResponse response = engine.answer(request.endpoint(), body, 0, body.length, request.headers()::get);
        if (response.cutAtEnd() && (response.events() == null || response.events().isEmpty())) {
            // The simulated provider dies before its first byte: the caller sees what any upstream lost
            // before answering produces (GD-24), not a dropped connection.
            HttpResponses.sendError(ctx, request.style(), UpstreamFailures.LOST_BEFORE_ANSWER, request.requestId(), request.keepAlive());
            finish();
            return;
        }
        writer = new SimulatedResponseWriter(ctx, response, request.keepAlive(), this::finish,
                h -> decorate(h, response), this::cutMidStream);
        writer.start();
    }

    /**
     * The simulated provider dies mid-stream. The gateway itself is fine, so the caller gets what an upstream
     * lost mid-stream produces: the style's error event and a properly ended response, no terminator (GD-10).
     */
    private void cutMidStream() {
        ByteBuf event = ErrorBodies.streamEvent(ctx.alloc(), request.style(), UpstreamFailures.LOST_MID_STREAM);
        ctx.write(new DefaultHttpContent(event));
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        finish();
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

    /** The gateway's own request id replaces the simulator's; retry hints and SSE proxy hints as for any upstream. */
    private void decorate(HttpHeaders h, SimulatedResponse response) {
        HttpResponses.requestId(h, request.requestId());
        HttpResponses.ensureRetryHeaders(h, response.status());
        if (response.isStream()) {
            h.set("x-accel-buffering", "no");
        }
    }

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (writable && writer != null && !done) {
            writer.resume();
        }
    }

    @Override
    public void cancel() {
        if (writer != null) {
            writer.cancel();
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
