package io.modelgateway.core.simulator;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.codecs.sse.SseDataCheck;
import io.modelgateway.codecs.usage.BodyUsageScanner;
import io.modelgateway.codecs.usage.StreamUsageTracker;
import io.modelgateway.codecs.usage.UsageCounts;
import io.modelgateway.core.config.TimeoutsConfig;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Logger;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * An exchange answered by the in-process simulator (provider type {@code simulator}): the engine computes
 * the answer up front and {@link SimulatedResponseWriter} delivers it at the simulated pace on the client's
 * own event loop — the same writer the standalone simulator uses, so both behave alike on the wire. A client
 * that stops reading pauses the stream; one that leaves cancels its timers.
 *
 * <p>Accounting works as for a proxied upstream: a chat stream always asks the simulator for its usage chunk
 * and withholds it from a caller that did not ask (GD-21); the usage is read from the answer's own bytes.
 *
 * <p>Failures before the answer begins (an injected error status, a stream cut before its first event) are
 * offered to the {@link AttemptHook} first, as a proxied upstream's are; an error status is offered once its
 * simulated delay has passed, as a real upstream would have taken that long to say it. Taken over, the exchange
 * ends without answering and without calling {@code onDone}.
 *
 * <p>The answer's bytes are checked as a proxied upstream's are: a non-stream 200 whose JSON is not well formed
 * becomes a 502, a stream event whose data is not JSON ends the stream there with the style's error event. A
 * simulated provider that hangs ({@code stall_after}) is given up after the provider's {@code stream_idle_ms}:
 * mid-stream with the style's timeout error event, before a non-stream body with a 504.
 */
public final class SimulatorExchange implements Exchange {
    private static final Logger LOG = Logger.getLogger(SimulatorExchange.class.getName());

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final SimulatorEngine engine;
    private final RequestPeek peek;
    private final String upstreamModel;
    private final Consumer<Outcome> onDone;
    private final AttemptHook hook;
    private SimulatedResponseWriter writer;
    /** The simulated delay before an error status is offered to the hook. */
    private ScheduledFuture<?> failureTimer;
    private SimulatedResponse response;
    /** The answer's usage (read from its bytes before delivery), and whether it is the final count. */
    private UsageCounts usage;
    private boolean usageComplete;
    /** For each stream event delivered, whether it carried content (not usage): what a cut stream is estimated by. */
    private List<Boolean> contentEvent;
    private boolean done;
    /** A non-stream 200 answer's body passed the structural JSON check (streams: see {@link #malformedCut}). */
    private boolean bodyWellFormed = true;
    /** Milliseconds a hung answer is waited for (the provider's stream_idle_ms), and the timer doing it. */
    private final long idleMs;
    private ScheduledFuture<?> idleTimer;
    /** The stream was cut where the answer turned malformed (not where the simulated provider died). */
    private boolean malformedCut;

    public SimulatorExchange(ChannelHandlerContext ctx, GatewayRequest request, SimulatorEngine engine,
            RequestPeek peek, String upstreamModel, Consumer<Outcome> onDone) {
        this(ctx, request, engine, peek, upstreamModel, AttemptHook.NONE, onDone);
    }

    /** As above, offering failures before the answer began to {@code hook} first. */
    public SimulatorExchange(ChannelHandlerContext ctx, GatewayRequest request, SimulatorEngine engine,
            RequestPeek peek, String upstreamModel, AttemptHook hook, Consumer<Outcome> onDone) {
        this(ctx, request, engine, peek, upstreamModel, TimeoutsConfig.DEFAULT.streamIdleMs(), hook, onDone);
    }

    /** As above; a hung simulated answer is given up after {@code idleMs}. */
    public SimulatorExchange(ChannelHandlerContext ctx, GatewayRequest request, SimulatorEngine engine,
            RequestPeek peek, String upstreamModel, long idleMs, AttemptHook hook, Consumer<Outcome> onDone) {
        this.idleMs = idleMs;
        this.hook = hook;
        this.ctx = ctx;
        this.request = request;
        this.engine = engine;
        this.peek = peek;
        this.upstreamModel = upstreamModel;
        this.onDone = onDone;
    }

    @Override
    public void start() {
        BodySplicer.Edit includeUsage =
                request.endpoint() == Endpoint.CHAT_COMPLETIONS ? peek.includeUsageEdit() : null;
        byte[] body = requestBytes(includeUsage);
        request.record().upstreamSent(System.nanoTime());
        response = readUsage(engine.answer(request.endpoint(), body, 0, body.length, request.headers()::get),
                includeUsage != null);
        if (response.cutAtEnd() && (response.events() == null || response.events().isEmpty())) {
            if (!malformedCut && hook.onFailureBeforeHead(UpstreamFailure.LOST_BEFORE_ANSWER)) {
                abandon();
                return;
            }
            // The simulated provider dies before its first byte: the caller sees what any upstream lost
            // before answering produces (GD-24), not a dropped connection.
            HttpResponses.sendError(ctx, request, malformedCut ? UpstreamFailures.MALFORMED_ANSWER
                    : UpstreamFailures.LOST_BEFORE_ANSWER, null);
            finish(Outcome.UPSTREAM_ERROR);
            return;
        }
        if (response.status() == 200 && !response.isStream() && !bodyWellFormed) {
            hook.onAnswerStarted();
            HttpResponses.sendError(ctx, request, UpstreamFailures.MALFORMED_ANSWER, null);
            finish(Outcome.UPSTREAM_ERROR);
            return;
        }
        if (response.stallAtEnd() && response.events().isEmpty()) {
            // A non-stream answer that hangs after its head: as the proxy holds a body until it is complete, the
            // caller sees nothing until the idle timeout, then a 504 (GD-9).
            hook.onAnswerStarted();
            request.record().upstreamHead(System.nanoTime() + response.headerDelayMs() * 1_000_000L);
            idleTimer = ctx.executor().schedule(() -> {
                idleTimer = null;
                if (!done) {
                    HttpResponses.sendError(ctx, request, UpstreamFailures.TIMED_OUT_BEFORE_ANSWER, null);
                    finish(Outcome.UPSTREAM_ERROR);
                }
            }, response.headerDelayMs() + idleMs, TimeUnit.MILLISECONDS);
            return;
        }
        if (response.status() == 200) {
            hook.onAnswerStarted();
        } else if (hook != AttemptHook.NONE) {
            if (response.headerDelayMs() > 0) {
                failureTimer = ctx.executor().schedule(this::failedBeforeHead, response.headerDelayMs(),
                        TimeUnit.MILLISECONDS);
            } else {
                failedBeforeHead();
            }
            return;
        }
        deliver(response);
    }

    /** The simulated error status is due: offered to the hook, else delivered now (its delay is over). */
    private void failedBeforeHead() {
        failureTimer = null;
        if (done) {
            return;
        }
        String retryAfter = response.headers().get("retry-after");
        if (hook.onFailureBeforeHead(UpstreamFailure.status(response.status(),
                UpstreamFailure.retryAfterMillis(null, retryAfter, System.currentTimeMillis())))) {
            abandon();
            return;
        }
        deliver(response.withHeaderDelay(0));
    }

    private void deliver(SimulatedResponse answer) {
        response = answer;
        request.record().upstreamHead(System.nanoTime() + answer.headerDelayMs() * 1_000_000L);
        writer = new SimulatedResponseWriter(ctx, answer, request.keepAlive(), () -> finish(statusOutcome()),
                this::decorate, this::cutMidStream, this::stalledMidStream);
        writer.start();
    }

    /** The hook took over: nothing was written, nothing to account, no {@code onDone}. */
    private void abandon() {
        done = true;
    }

    /**
     * Reads the usage of a 200 answer from its bytes, as the proxy does with an upstream's; drops the usage chunk
     * the gateway asked for on the caller's behalf.
     */
    private SimulatedResponse readUsage(SimulatedResponse answer, boolean withholdUsageChunk) {
        if (answer.status() != 200) {
            return answer;
        }
        if (!answer.isStream()) {
            BodyUsageScanner scanner = new BodyUsageScanner();
            scanner.feed(Unpooled.wrappedBuffer(answer.body()));
            bodyWellFormed = scanner.wellFormed();
            usage = scanner.counts();
            usageComplete = usage != null;
            return answer;
        }
        StreamUsageTracker tracker = new StreamUsageTracker();
        List<SimEvent> kept = new ArrayList<>(answer.events().size());
        contentEvent = new ArrayList<>(answer.events().size());
        for (SimEvent e : answer.events()) {
            ByteBuf bytes = Unpooled.wrappedBuffer(e.bytes());
            if (!SseDataCheck.plausible(bytes)) {
                // What the proxy does with a malformed upstream event: the events before it, then the error event.
                malformedCut = true;
                usage = tracker.counts();
                usageComplete = false;
                return answer.cutBefore(kept);
            }
            int before = tracker.otherEvents();
            boolean usageOnly = tracker.onEvent(bytes);
            if (usageOnly && withholdUsageChunk) {
                continue;
            }
            kept.add(e);
            contentEvent.add(tracker.otherEvents() > before);
        }
        usage = tracker.counts();
        usageComplete = tracker.complete() && !answer.cutAtEnd();
        return kept.size() == answer.events().size() ? answer : answer.withEvents(kept);
    }

    /**
     * The simulated provider dies mid-stream. The gateway itself is fine, so the caller gets what an upstream
     * lost mid-stream produces: the style's error event and a properly ended response, no terminator (GD-10).
     */
    private void cutMidStream() {
        ByteBuf event = ErrorBodies.streamEvent(ctx.alloc(), request.style(),
                malformedCut ? UpstreamFailures.MALFORMED_EVENT : UpstreamFailures.LOST_MID_STREAM);
        ctx.write(new DefaultHttpContent(event));
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        finish(Outcome.UPSTREAM_ERROR);
    }

    /**
     * The simulated provider hangs mid-stream: after the provider's idle timeout the caller gets what a proxied
     * upstream gone silent produces: the style's timeout error event, no terminator (GD-10).
     */
    private void stalledMidStream() {
        idleTimer = ctx.executor().schedule(() -> {
            idleTimer = null;
            if (!done) {
                ctx.write(new DefaultHttpContent(ErrorBodies.streamEvent(ctx.alloc(), request.style(),
                        UpstreamFailures.TIMED_OUT_MID_STREAM)));
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                finish(Outcome.UPSTREAM_ERROR);
            }
        }, idleMs, TimeUnit.MILLISECONDS);
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

    /** The gateway's own request id replaces the simulator's; retry hints and SSE proxy hints as for any upstream. */
    private void decorate(HttpHeaders h) {
        request.decorate(h);
        HttpResponses.ensureRetryHeaders(h, response.status());
        if (response.isStream()) {
            h.set("x-accel-buffering", "no");
        }
    }

    private Outcome statusOutcome() {
        int code = response.status();
        return code == 429 || code >= 500 ? Outcome.UPSTREAM_ERROR : Outcome.DONE;
    }

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (writable && writer != null && !done) {
            writer.resume();
        }
    }

    @Override
    public void cancel() {
        if (failureTimer != null) {
            failureTimer.cancel(false);
            failureTimer = null;
        }
        cancelIdleTimer();
        if (writer != null) {
            writer.cancel();
        }
        finish(Outcome.CANCELLED);
    }

    /**
     * The final counts for a complete answer; else the input and one token per content event delivered. Counts the
     * codecs did not believe are as good as none, as for a proxied upstream.
     */
    private void account(Outcome outcome) {
        ExchangeRecord record = request.record();
        if (response == null || response.status() != 200) {
            record.usage(0, 0, ExchangeRecord.UsageSource.NONE);
            return;
        }
        UsageCounts counts = usage;
        if (counts != null && counts.implausible()) {
            LOG.warning("upstream " + record.provider() + " reported an implausible token count ("
                    + counts.implausibleField() + "); the exchange is accounted with the gateway's estimate");
            counts = null;
        }
        Usage u = counts == null ? null : counts.usage();
        if (outcome == Outcome.DONE && usageComplete && u != null) {
            record.usage(u.promptTokens(), u.completionTokens(), ExchangeRecord.UsageSource.UPSTREAM);
            return;
        }
        long input = u != null && u.promptTokens() > 0 ? u.promptTokens() : request.estimatedInputTokens();
        long output = 0;
        if (contentEvent != null && writer != null) {
            int written = Math.min(writer.eventsWritten(), contentEvent.size());
            for (int i = 0; i < written; i++) {
                if (contentEvent.get(i)) {
                    output++;
                }
            }
        }
        if (u != null && usageComplete) {
            output = Math.min(output, u.completionTokens());
        }
        record.usage(input, output, ExchangeRecord.UsageSource.ESTIMATED);
    }

    private void cancelIdleTimer() {
        if (idleTimer != null) {
            idleTimer.cancel(false);
            idleTimer = null;
        }
    }

    private void finish(Outcome outcome) {
        if (done) {
            return;
        }
        done = true;
        cancelIdleTimer();
        account(outcome);
        onDone.accept(outcome);
    }
}
