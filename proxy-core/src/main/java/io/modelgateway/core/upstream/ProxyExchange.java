package io.modelgateway.core.upstream;

import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.core.answer.AnswerWriter;
import io.modelgateway.core.answer.CollectedBudget;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.TimeoutsConfig;
import io.modelgateway.core.config.UpstreamLimitsConfig;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One attempt of a request at one HTTP upstream: the connection and the request, the upstream's HTTP answer, and
 * its timeouts. What the caller sees of the answer is the {@link AnswerWriter}'s: this exchange feeds it the head and
 * body parts as they are read, and tells it when the upstream fails. Everything runs on the client's event loop,
 * which is also the upstream connection's (design rule 1: one event loop per exchange).
 *
 * <p>The connection: taken from the per-event-loop pool; a pooled keep-alive connection that turns out closed before
 * anything came back is retried once on a fresh one. It goes back to the pool only after a clean, complete answer on
 * a keep-alive connection; a taken-over error answer is read to its end (within {@code max_error_body_bytes}) so the
 * connection can be pooled again. Reading follows the client: auto-read is off while the client cannot take more
 * (design rule 4).
 *
 * <p>What the upstream's HTTP may do that the writer never sees: interim answers (1xx but 101) are skipped; a 101, a
 * head or body the decoder refused, or a head with both Content-Length and Transfer-Encoding is a protocol failure
 * (the connection is never reused); a buffer that cannot be allocated while reading ends the answer honestly.
 *
 * <p>Timeouts (GD-9, GD-10), one timer re-armed lazily: the first byte while waiting for the head, the idle gap
 * between pieces of the answer (not while the gateway itself paused reading for a slow client), and the whole
 * exchange from the caller's request. A first-byte timeout is offered for a retry.
 *
 * <p>Ownership: the exchange owns {@link #upstreamBody} (one reference to it) until it ends, and never moves its
 * indexes: it may be the caller's request buffer itself, which the request still reads. Every upstream message
 * handed to {@link #onUpstreamMessage} is released there (the writer retains what it keeps).
 */
public final class ProxyExchange implements Exchange, UpstreamListener, AnswerWriter.Source {
    private static final Logger LOG = Logger.getLogger(ProxyExchange.class.getName());

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final ProviderConfig provider;
    /** The deployment's model name at the provider (Azure's deployment form puts it in the path). */
    private final String upstreamModel;
    private final UpstreamPools pools;
    private final UpstreamLimitsConfig limits;
    private final AnswerWriter writer;
    private ByteBuf upstreamBody;
    private Channel upstream;
    /** The provider's per-request parts and pool key (set by {@link #start}). */
    private UpstreamTarget target;
    /** The upstream said its connection may serve another request. */
    private boolean upstreamKeepAlive;
    private boolean retried;
    private final UpstreamWatchdog watchdog;
    /**
     * The hook took over an error answer: the exchange is done, but still reads the error body to its end so the
     * connection can be pooled again (auto-read on, nobody else listening), or drops it if the upstream closes.
     */
    private boolean draining;
    /** The upstream's current read already stamped the watchdog's last-received time. */
    private boolean receivedThisRead;
    /** Bytes of a taken-over error body read and dropped: past {@code max_error_body_bytes}, not read on. */
    private long drainedBytes;
    /** Type bedrock: the InvokeModel call (made once at start) and its answer's adapter; null for other types. */
    private BedrockTarget.Call bedrockCall;
    private BedrockAnswer bedrockAnswer;

    /**
     * @param upstreamModel the deployment's model name at the provider (azure_openai's deployment paths name it)
     * @param limits       what an upstream answer may make the exchange hold (the request's config)
     * @param budget       the process-wide budget for bodies collected whole
     * @param upstreamBody the body to send (the exchange takes ownership)
     * @param translator   null for pass-through; else how the answer is translated to the caller's style
     * @param withholdUsageChunk the upstream was asked for a usage chunk the caller did not ask for (GD-21)
     * @param hook         offered failures before the answer began
     * @param onDone       run once when the client response is complete or abandoned, with how it ended; the
     *                     request's record then holds the tokens used
     */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            String upstreamModel, UpstreamPools pools, UpstreamLimitsConfig limits, CollectedBudget budget,
            ByteBuf upstreamBody, ResponseTranslator translator, boolean withholdUsageChunk, AttemptHook hook,
            Consumer<Outcome> onDone) {
        this.ctx = ctx;
        this.request = request;
        this.provider = provider;
        this.upstreamModel = upstreamModel;
        this.pools = pools;
        this.limits = limits;
        this.upstreamBody = upstreamBody;
        this.writer = new AnswerWriter(ctx, request, provider.name(), provider.styleFor(upstreamModel), limits, budget,
                translator, withholdUsageChunk, hook, onDone, this);
        this.watchdog = new Watchdog(ctx.executor(), request.startNanos(), provider.timeouts());
    }

    @Override
    public void start() {
        target = pools.target(provider);
        writer.redactor(target.redactor);
        if (target.bedrock != null && !startBedrock()) {
            return;
        }
        if (target.tokens != null && target.tokens.header() == null) {
            // vertex, or azure_openai with an Entra application: no valid access token yet (the first request, or
            // after an idle hour): wait for one, off the loop; none to be had is a 503 / 529 naming why (GD-33)
            target.tokens.whenValid(ctx.executor(), h -> acquire(), this::tokenFailed);
            return;
        }
        acquire();
    }

    private void tokenFailed(String reason) {
        if (!writer.done()) {
            LOG.fine(() -> "upstream credentials unavailable: " + reason);
            writer.failed(UpstreamFailure.CONNECT_FAILED, new GatewayError(ErrorKind.OVERLOADED,
                    "The upstream provider is unavailable: " + reason + ".", null, null), null);
        }
    }

    private void acquire() {
        if (writer.done()) {
            return; // cancelled while the token was being obtained
        }
        Channel idle = pools.pollIdle(target);
        if (idle != null) {
            send(idle);
            return;
        }
        Future<Channel> f = pools.acquireFresh(ctx.channel().eventLoop(), target);
        if (f.isDone()) {
            connected(f);
        } else {
            f.addListener(this::connected);
        }
    }

    private void connected(Future<? super Channel> f) {
        if (writer.done()) {
            if (f.isSuccess()) {
                pools.release((Channel) f.getNow());
            }
            return;
        }
        if (!f.isSuccess()) {
            Throwable cause = f.cause();
            LOG.log(Level.FINE, "upstream connect failed", cause);
            boolean timeout = cause instanceof ConnectTimeoutException;
            writer.failed(timeout ? UpstreamFailure.CONNECT_TIMED_OUT : UpstreamFailure.CONNECT_FAILED, timeout
                    ? new GatewayError(ErrorKind.UPSTREAM_TIMEOUT, "The upstream provider did not accept the "
                            + "connection in time.", null, null)
                    : new GatewayError(ErrorKind.OVERLOADED, "The upstream provider is unavailable.", null, null),
                    null);
            return;
        }
        send((Channel) f.getNow());
    }

    /** Sends the request on {@code channel}, a connection to the provider that is now this attempt's. */
    private void send(Channel channel) {
        upstream = channel;
        UpstreamResponseReceiver receiver =
                (UpstreamResponseReceiver) upstream.pipeline().get(UpstreamPipelineNames.RECEIVER);
        receiver.listener(this);
        boolean paused = !ctx.channel().isWritable();
        upstream.config().setAutoRead(!paused);
        long now = System.nanoTime();
        request.record().upstreamSent(now);
        writer.asked();
        receivedThisRead = false;
        watchdog.sent(now, paused);
        // The void promise: no promise and listener per request. A write that fails is fired into the upstream
        // pipeline's exceptionCaught, where the receiver closes the connection and hands the failure to
        // onUpstreamClosed, which decides between a retry and an error.
        if (bedrockCall != null) {
            upstream.writeAndFlush(target.bedrock.build(target, provider, request, bedrockCall,
                    System.currentTimeMillis()), upstream.voidPromise());
        } else {
            Channel ch = upstream;
            ByteBuf head = UpstreamRequests.request(ch.alloc(), target, provider, request, upstreamModel, upstreamBody);
            if (UpstreamRequests.bodyInHead(upstreamBody)) {
                ch.writeAndFlush(head, ch.voidPromise());
                return;
            }
            ch.write(head, ch.voidPromise());
            // A head that could not even be queued (the connection closed meanwhile) was handed to onUpstreamClosed
            // already, which let go of the connection: then no body follows it.
            if (upstream == ch) {
                ch.writeAndFlush(UpstreamRequests.body(upstreamBody), ch.voidPromise());
            }
        }
    }

    // ------------------------------------------------------------------ upstream side

    @Override
    public void onUpstreamMessage(HttpObject msg) {
        try {
            if (msg.decoderResult().isFailure()) {
                // The decoder refused the head or the body framing (and skips the rest): the connection is unusable.
                if (!writer.done()) {
                    writer.protocolFailure(msg instanceof HttpResponse ? "malformed_head" : "malformed_body",
                            "sent a malformed response " + (msg instanceof HttpResponse ? "head" : "body") + " ("
                                    + msg.decoderResult().cause() + ")",
                            UpstreamFailures.MALFORMED_RESPONSE);
                } else if (draining) {
                    drainFailed();
                }
                return;
            }
            if (!writer.done() && msg instanceof HttpResponse response) {
                onHead(response);
            }
            if (msg instanceof HttpContent content) {
                if (!writer.done()) {
                    if (!receivedThisRead) {
                        // One clock read per upstream read: a burst's many chunks all arrived with it.
                        receivedThisRead = true;
                        watchdog.received(System.nanoTime());
                    }
                    if (bedrockAnswer != null) {
                        bedrockAnswer.content(content.content(), content instanceof LastHttpContent);
                    } else {
                        writer.content(content.content(), content instanceof LastHttpContent);
                    }
                } else if (draining) {
                    drain(content);
                }
            }
        } catch (OutOfMemoryError e) {
            writer.allocationFailed(e); // a buffer for this answer could not be had: end it honestly
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onHead(HttpResponse response) {
        int code = response.status().code();
        if (code < 200) {
            if (code < 100) {
                writer.protocolFailure("malformed_head", "answered with status " + code,
                        UpstreamFailures.MALFORMED_RESPONSE);
            } else if (code == 101) {
                writer.protocolFailure("switching_protocols", "answered 101 Switching Protocols",
                        UpstreamFailures.SWITCHED_PROTOCOLS);
            }
            // 100 Continue, 103 Early Hints, …: interim answers, never the answer. The decoder follows each with an
            // empty last content, which the writer drops while waiting; the final head comes next, within
            // first_byte_ms still.
            return;
        }
        HttpHeaders headers = response.headers(); // two framings at once never get here: the decoder refuses them
        watchdog.received(System.nanoTime());
        upstreamKeepAlive = HttpUtil.isKeepAlive(response);
        if (bedrockAnswer != null) {
            bedrockAnswer.head(response.status(), headers);
        } else {
            writer.head(response.status(), headers);
        }
    }

    @Override
    public void onUpstreamReadComplete() {
        receivedThisRead = false;
        writer.readComplete();
    }

    @Override
    public void onUpstreamClosed(Throwable cause) {
        if (writer.done()) {
            if (draining) {
                draining = false; // the error body of a taken-over attempt was cut: the connection is gone
                upstream = null;
            }
            return;
        }
        if (AnswerWriter.isAllocationFailure(cause)) {
            upstream = null; // the transport closes a connection whose read buffer could not be allocated
            writer.allocationFailed(cause);
            return;
        }
        if (cause != null) {
            LOG.log(Level.FINE, "upstream connection failed", cause);
        }
        if (writer.waiting() && !retried && UpstreamPools.wasPooled(upstream)) {
            // A pooled keep-alive connection the upstream had already closed: try once on a fresh one.
            retried = true;
            upstream = null;
            Future<Channel> f = pools.acquireFresh(ctx.channel().eventLoop(), target);
            f.addListener(this::connected);
            return;
        }
        upstream = null;
        writer.failed(UpstreamFailure.LOST_BEFORE_ANSWER, UpstreamFailures.LOST_BEFORE_ANSWER,
                UpstreamFailures.LOST_MID_STREAM);
    }

    /** The attempt's deadlines, asking the writer whether the answer's head is still awaited. */
    private final class Watchdog extends UpstreamWatchdog {
        Watchdog(EventExecutor executor, long startNanos, TimeoutsConfig timeouts) {
            super(executor, startNanos, timeouts);
        }

        @Override
        boolean waiting() {
            return writer.waiting();
        }

        @Override
        void expired(boolean total) {
            timedOut(total);
        }
    }

    /** A deadline passed (see {@link UpstreamWatchdog}); {@code total}: the whole exchange's. */
    private void timedOut(boolean total) {
        if (writer.done()) {
            return;
        }
        LOG.fine(() -> "upstream " + provider.name() + " timed out (" + (total ? "total"
                : writer.waiting() ? "first byte" : "idle") + ")");
        // Only a first byte that never came is worth another attempt: the routing layer tries again elsewhere.
        UpstreamFailure retry = writer.waiting() && !total ? UpstreamFailure.FIRST_BYTE_TIMED_OUT : null;
        writer.failed(retry, UpstreamFailures.TIMED_OUT_BEFORE_ANSWER, UpstreamFailures.TIMED_OUT_MID_STREAM);
    }

    // ------------------------------------------------------------------ what the writer asks of the source

    @Override
    public void finished(boolean reusable) {
        watchdog.cancel();
        releaseBody();
        if (bedrockAnswer != null) {
            // the adapter may end the caller's answer (an exception event) before the upstream's answer ended
            reusable &= bedrockAnswer.upstreamEnded();
            bedrockAnswer.release();
        }
        if (reusable && upstreamKeepAlive && upstream != null) {
            Channel u = upstream;
            upstream = null;
            pools.release(u);
        } else {
            closeUpstream();
        }
    }

    @Override
    public void abandoned(boolean atHead) {
        watchdog.cancel();
        releaseBody();
        if (bedrockAnswer != null) {
            atHead &= !bedrockAnswer.upstreamEnded(); // nothing left to drain
            bedrockAnswer.release();
        }
        if (atHead && upstream != null) {
            draining = true;
            upstream.config().setAutoRead(true); // nobody relays client writability to a drained connection
        } else {
            closeUpstream();
        }
    }

    private void releaseBody() {
        if (upstreamBody != null) {
            upstreamBody.release();
            upstreamBody = null;
        }
        if (bedrockCall != null) {
            bedrockCall.body().release();
            bedrockCall = null;
        }
    }

    /**
     * Type bedrock: the InvokeModel call of the Messages body, made once for every connection attempt, and the
     * adapter of its answer. False (the exchange answered an error) when the body names no model.
     */
    private boolean startBedrock() {
        bedrockCall = BedrockTarget.call(ctx.alloc(), upstreamBody, request, provider);
        if (bedrockCall == null) {
            writer.failed(null, new GatewayError(ErrorKind.UPSTREAM_ERROR,
                    "The request could not be expressed for Amazon Bedrock.", null, null), null);
            return false;
        }
        upstreamBody.release();
        upstreamBody = null;
        bedrockAnswer = new BedrockAnswer(writer, ctx.alloc(), limits.maxErrorBodyBytes(),
                2 * limits.maxSseEventBytes() + 1024, limits.maxCollectedBytes(),
                bedrockCall.operation().converse() ? bedrockCall.model() : null, "msg_bdrk_" + request.requestId(),
                bedrockCall.stopSequences());
        return true;
    }

    /**
     * A piece of the dropped error body of a taken-over attempt: at its end the connection may serve another request;
     * a body longer than an error body may be is not worth reading to its end, the connection is closed instead.
     */
    private void drain(HttpContent content) {
        drainedBytes += content.content().readableBytes();
        if (content instanceof LastHttpContent) {
            draining = false;
            Channel u = upstream;
            upstream = null;
            if (u != null) {
                if (upstreamKeepAlive) {
                    pools.release(u);
                } else {
                    detachAndClose(u);
                }
            }
        } else if (drainedBytes > limits.maxErrorBodyBytes()) {
            drainFailed();
        }
    }

    /** The dropped error body of a taken-over attempt cannot be read to a clean end: close its connection. */
    private void drainFailed() {
        draining = false;
        closeUpstream();
    }

    // ------------------------------------------------------------------ client side

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (upstream != null && !writer.done()) {
            watchdog.clientWritable(writable, System.nanoTime());
            upstream.config().setAutoRead(writable);
        }
    }

    @Override
    public void clientFailed(Throwable cause) {
        writer.clientFailed(cause);
    }

    @Override
    public void cancel() {
        writer.cancel(); // the provider stops generating (and billing) now: finished(false) closes the connection
    }

    /** Closes the upstream connection (if any) after detaching from it, so its close reports to nobody. */
    private void closeUpstream() {
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            detachAndClose(u);
        }
    }

    private static void detachAndClose(Channel u) {
        UpstreamResponseReceiver receiver = (UpstreamResponseReceiver) u.pipeline().get(UpstreamPipelineNames.RECEIVER);
        if (receiver != null) {
            receiver.listener(null);
        }
        u.close();
    }
}
