package io.modelgateway.core.simulator;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.answer.AnswerWriter;
import io.modelgateway.core.answer.CollectedBudget;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.UpstreamLimitsConfig;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.LoopBuffer;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One attempt of a request at the in-process simulator (provider type {@code simulator}): the engine computes the
 * answer up front, the {@link SimulatedPacer} makes its parts due at the simulated pace on the client's own event
 * loop, and each part goes to the exchange's {@link AnswerWriter} — the same writer a proxied upstream's answer goes
 * through, so the caller sees exactly what a real provider giving these bytes would produce: usage read from the
 * answer's own bytes (a chat stream always asks for its usage chunk and withholds it from a caller that did not,
 * GD-21), a malformed answer or event checked and ended alike, an error status offered for a retry once its
 * simulated delay has passed, a stream cut before its first event offered too.
 *
 * <p>A simulated provider that hangs ({@code stall_after}) is given up after the provider's {@code stream_idle_ms}:
 * mid-stream with the style's timeout error event, before a non-stream body with a 504. A client that stops reading
 * pauses the pace; one that leaves cancels its timers.
 */
public final class SimulatorExchange implements Exchange, SimulatedPacer.Sink, AnswerWriter.Source {
    /**
     * The buffer a stream event is written into for the writer, the loop's own while the writer only lends it (what
     * it keeps, it retains or copies); at most {@value #SCRATCH_KEPT} bytes are kept.
     */
    private static final int SCRATCH_KEPT = 1024;
    private static final LoopBuffer SCRATCH = new LoopBuffer(SCRATCH_KEPT);

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final SimulatorEngine engine;
    private final RequestPeek peek;
    private final String upstreamModel;
    private final AnswerWriter writer;
    /** Milliseconds a hung answer is waited for (the provider's stream_idle_ms), and the timer doing it. */
    private final long idleMs;
    private ScheduledFuture<?> idleTimer;
    private SimulatedResponse response;
    private SimulatedPacer pacer;

    /**
     * @param limits     what the answer may make the exchange hold (the request's config)
     * @param budget     the process-wide budget for bodies collected whole
     * @param hook       offered failures before the answer began
     * @param onDone     run once when the caller's answer is complete or abandoned, with how it ended
     */
    public SimulatorExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            SimulatorEngine engine, String upstreamModel, UpstreamLimitsConfig limits, CollectedBudget budget,
            AttemptHook hook, Consumer<Outcome> onDone) {
        this.ctx = ctx;
        this.request = request;
        this.engine = engine;
        this.peek = request.peek();
        this.upstreamModel = upstreamModel;
        this.idleMs = provider.timeouts().streamIdleMs();
        boolean withholdUsage = request.endpoint() == Endpoint.CHAT_COMPLETIONS && peek.includeUsageEdit() != null;
        // The simulator answers in the caller's own style: never translated.
        this.writer = new AnswerWriter(ctx, request, provider.name(), request.style(), limits, budget, null,
                withholdUsage, hook, onDone, this);
    }

    @Override
    public void start() {
        BodySplicer.Edit includeUsage =
                request.endpoint() == Endpoint.CHAT_COMPLETIONS ? peek.includeUsageEdit() : null;
        byte[] body = requestBytes(includeUsage);
        request.record().upstreamSent(System.nanoTime());
        writer.asked();
        response = engine.answer(request.endpoint(), body, 0, body.length, request.headers()::get);
        pacer = new SimulatedPacer(ctx.channel(), response, this);
        pacer.start();
    }

    // ------------------------------------------------------------------ the answer's parts, as they fall due

    @Override
    public void head() {
        writer.head(HttpResponseStatus.valueOf(response.status()), headers(response));
        if (!response.isStream() && !writer.done()) {
            writer.content(Unpooled.wrappedBuffer(response.body()), true);
        }
        writer.readComplete();
    }

    /** The headers a provider would send with this answer (its own request id is the gateway's to replace). */
    private static HttpHeaders headers(SimulatedResponse response) {
        HttpHeaders h = HttpResponses.TRUSTED_HEADERS.newHeaders();
        h.set(HttpHeaderNames.CONTENT_TYPE, response.contentType());
        if (!response.isStream()) {
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, response.body().length);
        }
        for (Map.Entry<String, String> e : response.headers().entrySet()) {
            if (!e.getKey().equalsIgnoreCase(HttpResponses.X_REQUEST_ID.toString())) {
                h.set(e.getKey(), e.getValue());
            }
        }
        return h;
    }

    @Override
    public void event(SimEvents events, int index) {
        ByteBuf bytes = SCRATCH.take(ctx.alloc(), events.length(index));
        try {
            events.writeTo(index, bytes);
            writer.content(bytes, false); // lent: the writer copies what it sends, and retains what it keeps
        } finally {
            bytes.release();
        }
    }

    /** The events of one turn of the pace, like the pieces of one read of an upstream: written together. */
    @Override
    public void flush() {
        writer.readComplete();
    }

    @Override
    public void end() {
        writer.content(Unpooled.EMPTY_BUFFER, true);
    }

    /**
     * The simulated provider dies: before its first event, offered for a retry, else what any upstream lost
     * produces (a 502, or the style's error event mid-stream, GD-10); the gateway itself is fine.
     */
    @Override
    public void cut() {
        writer.failed(UpstreamFailure.LOST_BEFORE_ANSWER, UpstreamFailures.LOST_BEFORE_ANSWER,
                UpstreamFailures.LOST_MID_STREAM);
    }

    /** The simulated provider hangs: after the provider's idle timeout, what a silent upstream produces. */
    @Override
    public void stalled() {
        idleTimer = ctx.executor().schedule(() -> {
            idleTimer = null;
            writer.failed(null, UpstreamFailures.TIMED_OUT_BEFORE_ANSWER, UpstreamFailures.TIMED_OUT_MID_STREAM);
        }, idleMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public boolean stopped() {
        return writer.done();
    }

    /** The body the simulator sees: the caller's, with the deployment's model name when it differs (GD-17). */
    private byte[] requestBytes(BodySplicer.Edit includeUsage) {
        ByteBuf body = request.body();
        List<BodySplicer.Edit> edits = new ArrayList<>(2);
        if (!upstreamModel.equals(peek.model())) {
            edits.add(BodySplicer.string(peek.modelStart(), peek.modelEnd(), upstreamModel));
        }
        if (includeUsage != null) {
            edits.add(includeUsage);
        }
        if (edits.isEmpty()) {
            return ByteBufUtil.getBytes(body);
        }
        ByteBuf spliced = BodySplicer.splice(ctx.alloc(), body, edits.toArray(BodySplicer.Edit[]::new));
        try {
            return ByteBufUtil.getBytes(spliced);
        } finally {
            spliced.release();
        }
    }

    // ------------------------------------------------------------------ what the writer asks of the source

    @Override
    public void finished(boolean reusable) {
        stop();
    }

    @Override
    public void abandoned(boolean atHead) {
        stop();
    }

    private void stop() {
        if (pacer != null) {
            pacer.cancel();
        }
        if (idleTimer != null) {
            idleTimer.cancel(false);
            idleTimer = null;
        }
    }

    // ------------------------------------------------------------------ client side

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (writable && pacer != null && !writer.done()) {
            pacer.resume();
        }
    }

    @Override
    public void clientFailed(Throwable cause) {
        writer.clientFailed(cause);
    }

    @Override
    public void cancel() {
        writer.cancel();
    }
}
