package io.modelgateway.core.answer;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.error.SecretRedactor;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.StreamTranslator;
import io.modelgateway.codecs.usage.InputTokenCounter;
import io.modelgateway.core.config.UpstreamLimitsConfig;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.AnswerStart;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.ChunkFrame;
import io.modelgateway.core.exchange.ChunkOut;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Usd;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.LoopBuffer;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * Writes one provider's answer to the caller, whoever the provider is: a proxied upstream feeds it the parts of its
 * HTTP answer, the in-process simulator the parts of its simulated one. Everything the caller sees of an answer is
 * decided here, once for both: the head, the hold and check of a 2xx body, the stream passed through event by event
 * or translated, a body collected whole and translated, an error answer bounded, redacted and relayed (or
 * re-expressed in the caller's style), the error endings of a stream, and the tokens put on the request's record.
 * The feeder keeps what is its own (a connection and its timeouts, or a simulated pace) and tells the writer what
 * happened: {@link #head}, {@link #content}, {@link #readComplete}, or one of the endings ({@link #failed},
 * {@link #protocolFailure}, {@link #allocationFailed}, {@link #cancel}).
 *
 * <p>The modes: WAITING for the head; RELAY a 2xx body as it is; STREAM its events (spliced, or translated);
 * COLLECT a 2xx body to translate as a whole; ERROR: collect an error body to redact and answer at its end; DISCARD
 * a body the caller must not see (the provider refused the gateway's credentials).
 *
 * <p>What the caller is shown:
 * <ul>
 *   <li>A relayed 2xx body is held, head included, until it is complete or passes {@link #HOLD_LIMIT}; a complete
 *       body that is not structurally well-formed JSON becomes a 502 in the caller's style. A larger body is relayed
 *       once past the limit; if it turns out malformed at its end, its last piece is withheld and the client
 *       connection closed, so the caller never sees a clean 2xx with garbage.</li>
 *   <li>A stream's head goes out with its first event (GD-24: before that, any failure is a normal error answer).
 *       An event whose data is not JSON, or one longer than {@code max_sse_event_bytes}, ends the stream with the
 *       style's error event (GD-10), or is a 502 when nothing was sent yet.</li>
 *   <li>An error answer (a final status outside 2xx) is collected whole up to {@code max_error_body_bytes}, the
 *       provider's secrets and anything shaped like a credential removed, and sent with its Content-Length: as it is
 *       to a caller of the provider's style, re-expressed to the other. A larger one is not relayed: the caller gets
 *       the gateway's own error for that status.</li>
 *   <li>A 2xx answer translated as a whole is collected up to {@code max_collected_bytes} (else 502) and within the
 *       process's {@code collected_budget_bytes} (else 503/529 with Retry-After).</li>
 * </ul>
 *
 * <p>Retries: a failure before anything was written to the caller is first offered to the {@link AttemptHook}
 * ({@link #offer}, once per attempt). Taken over, the writer ends without answering, accounting or calling
 * {@code onDone}, and tells the feeder ({@link Source#abandoned}).
 *
 * <p>Ownership: pieces handed to {@link #content} are borrowed (the feeder releases them); what the writer keeps of
 * them it retains or copies and owns until written or released ({@link #releaseBuffers}). Writes to the client go
 * with the channel's void promise: a failed write comes back through the pipeline's {@code exceptionCaught}, which
 * the exchange hands to {@link #clientFailed}. Confined to the client channel's event loop.
 *
 * <p>Over 400 lines because the modes share their state (what was sent, what is held, what was read of the usage)
 * and every ending depends on all of it; the parts that stand alone are {@link StreamRelay} (a stream, passed
 * through or translated), {@link CollectedAnswer} (an answer or error collected whole), {@link CollectedBody} and
 * {@link AnswerAccounting}.
 */
public final class AnswerWriter {
    private static final Logger LOG = Logger.getLogger(AnswerWriter.class.getName());
    /** The first capacity of a read's merged chunks: a burst of about thirty events without growing. */
    private static final int MERGE_CAPACITY = 8192;
    /** The buffer a read's chunks are merged into: the loop's own while the socket takes each merged chunk whole. */
    private static final LoopBuffer MERGED = new LoopBuffer(MERGE_CAPACITY);

    /**
     * Largest 2xx body held back until it is complete, to check it is JSON before the caller sees the head. Chat and
     * messages answers fit; long embeddings lists pass it and are relayed from there on.
     */
    public static final int HOLD_LIMIT = 64 * 1024;

    /** What the writer needs of whoever feeds it the answer. */
    public interface Source {
        /**
         * The answer is over: the source lets go of what it holds, keeping its connection for another request only
         * when {@code reusable}. May be called twice (an early close, then the end); the second call does nothing.
         */
        void finished(boolean reusable);

        /**
         * The hook took this attempt over: nothing is answered. {@code atHead}: an error head was read and its body
         * is still coming (the source may read it to its end and keep its connection); otherwise let go at once.
         */
        void abandoned(boolean atHead);
    }

    private enum Mode { WAITING, RELAY, STREAM, COLLECT, ERROR, DISCARD }

    private final ChannelHandlerContext ctx;
    /** The client channel's allocator (looked up once: a stream asks for it on every read). */
    private final ByteBufAllocator alloc;
    /** Where writes and flushes start ({@link AnswerStart}): the same handlers as from {@link #ctx}, fewer hops. */
    private final ChannelHandlerContext out;
    private final GatewayRequest request;
    /** The provider's name, for logs and the labels of protocol and memory counts. */
    private final String provider;
    /** The provider's style: an error answer is relayed as it is to a caller of the same style only. */
    private final ApiStyle providerStyle;
    private final UpstreamLimitsConfig limits;
    private final CollectedBudget budget;
    private final AttemptHook hook;
    private final Consumer<Outcome> onDone;
    private final Source source;
    /** Null for a same-style pass-through; else translates the answer into the caller's style. */
    private final ResponseTranslator translator;
    /** The gateway asked for the usage chunk the caller did not ask for: account from it, never forward it. */
    private final boolean withholdUsageChunk;
    private final AnswerAccounting accounting;
    /** Removes the provider's secrets from error answers; the credential shapes only until the source says more. */
    private SecretRedactor redactor = SecretRedactor.PATTERNS_ONLY;

    private Mode mode = Mode.WAITING;
    private HttpResponseStatus status;
    private boolean headSent;
    /** The source may keep its connection after a clean end (false once the answer broke a rule). */
    private boolean reusable = true;
    private boolean done;
    /** A failure was offered to the hook (and declined): never offer this attempt's failure twice. */
    private boolean reported;
    /** The head of a 2xx relayed body, not yet sent (held until the body is complete or large); null once sent. */
    private HttpResponse heldHead;
    /** The pieces of that body so far: one retained piece, or a composite of them; null when none. */
    private ByteBuf held;
    /** STREAM: the chunks written since the last read's end, not yet passed on ({@link #pend}); null when none. */
    private ByteBuf pending;
    /** {@link #pending} is a buffer this writer made and copies into (else one chunk's own buffer). */
    private boolean pendingMerged;
    /**
     * STREAM on an HTTP/1.1 connection with a chunked head: where the chunks this writer frames itself
     * ({@link ChunkFrame}; {@link #pending} is then always a frame buffer it made) enter the pipeline, below the HTTP
     * encoder; null otherwise (the chunks go as contents for the encoder to frame).
     */
    private ChunkOut chunks;
    /** The stream being relayed (STREAM); null otherwise. */
    private StreamRelay stream;
    /** The body being collected whole (COLLECT, ERROR); null otherwise. */
    private CollectedAnswer collected;
    /** Bytes of a refused credential's body read and dropped (DISCARD): past the error body cap, not read on. */
    private long discarded;

    /**
     * @param provider           the provider's name (logs, metric labels)
     * @param providerStyle      the style the provider answers in
     * @param limits             what an answer may make the exchange hold (the request's config)
     * @param budget             the process-wide budget for bodies collected whole
     * @param translator         null for pass-through; else how the answer is translated to the caller's style
     * @param withholdUsageChunk the provider was asked for a usage chunk the caller did not ask for (GD-21)
     * @param hook               offered failures before the answer began (retries); {@link AttemptHook#NONE} for none
     * @param onDone             run once when the caller's answer is complete or abandoned, with how it ended; the
     *                           request's record then holds the tokens used
     */
    public AnswerWriter(ChannelHandlerContext ctx, GatewayRequest request, String provider, ApiStyle providerStyle,
            UpstreamLimitsConfig limits, CollectedBudget budget, ResponseTranslator translator,
            boolean withholdUsageChunk, AttemptHook hook, Consumer<Outcome> onDone, Source source) {
        this.ctx = ctx;
        this.alloc = ctx.alloc();
        this.out = AnswerStart.of(ctx);
        this.request = request;
        this.provider = provider;
        this.providerStyle = providerStyle;
        this.limits = limits;
        this.budget = budget;
        this.translator = translator;
        this.withholdUsageChunk = withholdUsageChunk;
        this.hook = hook;
        this.onDone = onDone;
        this.source = source;
        this.accounting = new AnswerAccounting(request, provider);
    }

    /** The provider's own secrets, removed from its error answers besides the credential shapes. */
    public void redactor(SecretRedactor redactor) {
        this.redactor = redactor;
    }

    /** The request went to the provider: a cancel before its answer may still have cost input tokens. */
    public void asked() {
        accounting.asked();
    }

    /** The answer is over (answered, abandoned or cancelled): nothing more is taken. */
    public boolean done() {
        return done;
    }

    /** No head of the answer arrived yet. */
    public boolean waiting() {
        return mode == Mode.WAITING;
    }

    /** Something of the answer was written to the caller. */
    public boolean headSent() {
        return headSent;
    }

    // what the writer's parts (StreamRelay, CollectedAnswer) use of it

    GatewayRequest request() {
        return request;
    }

    ChannelHandlerContext ctx() {
        return ctx;
    }

    ByteBufAllocator alloc() {
        return alloc;
    }

    /** The caller's style. */
    ApiStyle style() {
        return request.style();
    }

    String provider() {
        return provider;
    }

    ApiStyle providerStyle() {
        return providerStyle;
    }

    SecretRedactor redactor() {
        return redactor;
    }

    /** A translated whole answer was written: the usage its translator determined, when the body had none to read. */
    void translated(ResponseTranslator done) {
        if (done.answeredUsage() != null) {
            accounting.answered(done.answeredUsage(), done.answeredUsageEstimated());
        }
    }

    // ------------------------------------------------------------------ the answer, as it arrives

    /** The head of the provider's final answer (a status of 200 or more; interim answers are the feeder's to skip). */
    public void head(HttpResponseStatus status, HttpHeaders headers) {
        this.status = status;
        request.record().upstreamHead(System.nanoTime());
        int code = status.code();
        if (code >= 400 && offerAtHead(code, headers)) {
            return;
        }
        // As held by the decoder (a view into the head it read), not copied into a String: both go out unchanged.
        CharSequence contentType = ArrayHttpHeaders.firstValue(headers, HttpHeaderNames.CONTENT_TYPE);
        if (code == 401 || code == 403) {
            // Our provider credentials were refused: the caller's key is fine, so never a 401 to them (contract 8.10).
            LOG.warning("upstream " + provider + " refused the provider credentials with " + code);
            mode = Mode.DISCARD;
            return;
        }
        if (code >= 300) {
            // An error answer: collected whole, then redacted and answered. Its headers are kept only when they hold
            // no secret.
            mode = Mode.ERROR;
            collected = CollectedAnswer.error(this, collectedBody(limits.maxErrorBodyBytes(), headers), status, headers);
            return;
        }
        hook.onAnswerStarted();
        if (contentType != null && AsciiString.regionMatches(contentType, true, 0, "text/event-stream", 0, 17)) {
            mode = Mode.STREAM;
            accounting.stream();
            StreamTranslator streamTranslator = translator == null ? null : translator.newStream(alloc);
            if (streamTranslator != null && streamTranslator.wantsInputEstimate()) {
                // 8.9 step 1: the caller's message_start carries the gateway's count of the input (once per answer).
                streamTranslator.inputEstimate(InputTokenCounter.messagesRequest(request.body()));
            }
            stream = new StreamRelay(this, new SseEventScanner(alloc, limits.maxSseEventBytes()),
                    streamTranslator, accounting, withholdUsageChunk);
            return; // the head goes out with the first event (GD-24)
        }
        accounting.body();
        if (translator != null) {
            mode = Mode.COLLECT; // answered once the whole body is in
            collected = CollectedAnswer.translated(this, collectedBody(limits.maxCollectedBytes(), headers), translator);
            return;
        }
        mode = Mode.RELAY;
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, status,
                ArrayHttpHeaders.trusted(2 + request.decorations()));
        HttpHeaders h = head.headers();
        if (contentType != null) {
            h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        CharSequence length = ArrayHttpHeaders.firstValue(headers, HttpHeaderNames.CONTENT_LENGTH);
        if (length != null) {
            h.set(HttpHeaderNames.CONTENT_LENGTH, length);
        } else {
            HttpUtil.setTransferEncodingChunked(head, true);
        }
        request.decorate(h);
        HttpUtil.setKeepAlive(head, request.keepAlive());
        if (code != 204) {
            heldHead = head; // sent with the body once it is known to be JSON, or once it is large
            return;
        }
        headSent = true;
        write(head);
    }

    /** A body to collect whole, within {@code cap} and the process's budget, sized by its announced length. */
    private CollectedBody collectedBody(int cap, HttpHeaders headers) {
        long announced = HttpUtil.getContentLength(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                headers), -1L);
        return new CollectedBody(alloc, budget, limits.collectedBudgetBytes(), cap, announced);
    }

    /** A piece of the answer's body ({@code last}: its end). Borrowed: the feeder releases it. */
    public void content(ByteBuf c, boolean last) {
        if (done) {
            return;
        }
        switch (mode) {
            case RELAY -> relay(c, last);
            case STREAM -> stream.feed(c, last);
            case COLLECT -> {
                accounting.bodyPiece(c);
                collected.feed(c, last);
            }
            case ERROR -> collected.feed(c, last);
            case DISCARD -> {
                // Read to its end to keep the connection, but no further than an error body may go.
                discarded += c.readableBytes();
                boolean tooLong = !last && discarded > limits.maxErrorBodyBytes();
                if (tooLong) {
                    reusable = false;
                }
                if (last || tooLong) {
                    fail(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                            "The upstream provider refused the gateway's credentials.", null, null), null, true);
                }
            }
            case WAITING -> {
                // only the empty last content a decoder adds after an interim (1xx) head: nothing to do
            }
        }
    }

    /** The end of one read of the provider's answer: what it brought leaves in one write (one system call). */
    public void readComplete() {
        if (!done && (mode == Mode.RELAY || mode == Mode.STREAM)) {
            writePending();
            if (chunks != null) {
                chunks.flush(); // the whole channel: what went through the codec this read as well
            } else {
                out.flush();
            }
        }
    }

    private void relay(ByteBuf c, boolean last) {
        accounting.bodyPiece(c);
        if (heldHead != null) {
            hold(c, last);
        } else if (last) {
            if (!accounting.bodyWellFormed()) {
                // Too late for a 502: withhold the end, so the caller sees a response cut short.
                LOG.warning("upstream " + provider + " sent a malformed answer (past the hold limit)");
                ctx.close();
                finish(false, Outcome.UPSTREAM_ERROR);
                return;
            }
            writeAndFlush(new DefaultLastHttpContent(c.retain()));
            finish(true, statusOutcome());
        } else if (c.isReadable()) {
            write(new DefaultHttpContent(c.retain()));
        }
    }

    /**
     * A piece of a held 2xx body. The common case — head and whole body in one read, one piece — holds that piece as
     * it is (no copy, no composite) and sends it with the head.
     */
    private void hold(ByteBuf piece, boolean last) {
        if (piece.isReadable()) {
            if (held == null) {
                held = piece.retain();
            } else {
                if (!(held instanceof CompositeByteBuf)) {
                    CompositeByteBuf pieces = alloc.compositeBuffer(16);
                    pieces.addComponent(true, held);
                    held = pieces;
                }
                ((CompositeByteBuf) held).addComponent(true, piece.retain());
            }
        }
        if (last) {
            if (!accounting.bodyWellFormed()) {
                LOG.warning("upstream " + provider + " sent a malformed answer (" + status.code() + ")");
                failBeforeHead(UpstreamFailures.MALFORMED_ANSWER);
                return;
            }
            sendHeld(true);
            finish(true, statusOutcome());
        } else if (held != null && held.readableBytes() > HOLD_LIMIT) {
            sendHeld(false); // a large answer: relayed from here on, checked at its end
        }
    }

    /**
     * The held head and body pieces go out: a complete body with its head as one full response (one message for the
     * encoder to frame), else the head and the body so far, the rest to follow.
     */
    private void sendHeld(boolean complete) {
        HttpResponse head = heldHead;
        ByteBuf body = held != null ? held : Unpooled.EMPTY_BUFFER;
        heldHead = null;
        held = null;
        headSent = true;
        if (complete) {
            costHeader(head.headers());
            writeAndFlush(new DefaultFullHttpResponse(head.protocolVersion(), head.status(), body, head.headers(),
                    EmptyHttpHeaders.INSTANCE));
        } else {
            write(head);
            write(new DefaultHttpContent(body));
        }
    }

    /** A header value of an error answer, or null when it holds a secret (or is absurdly long). */
    String withoutSecret(String value) {
        if (value == null || value.length() > 256 || redactor.containsSecret(value)) {
            return null;
        }
        return value;
    }

    // ------------------------------------------------------------------ endings

    /**
     * Offers a failure to the hook (once per attempt). When the hook takes over, the writer ends here without an
     * answer: buffers released, the source told to let go.
     */
    public boolean offer(UpstreamFailure failure) {
        if (reported || done) {
            return false;
        }
        reported = true;
        if (!hook.onFailureBeforeHead(failure)) {
            return false;
        }
        abandon(false);
        return true;
    }

    /** An error head offered to the hook; taken over, the source may read its body to the end and keep going. */
    private boolean offerAtHead(int code, HttpHeaders headers) {
        reported = true;
        if (!hook.onFailureBeforeHead(UpstreamFailure.status(code, UpstreamFailure.retryAfterMillis(headers)))) {
            return false;
        }
        abandon(true);
        return true;
    }

    /** The hook took over: end without answering, without accounting, without {@code onDone}. */
    private void abandon(boolean atHead) {
        done = true;
        releaseBuffers();
        source.abandoned(atHead);
    }

    /**
     * The provider failed (its connection lost, its time up, …). Before anything was written: offered to the hook
     * ({@code failure}, null for none), else answered with {@code beforeAnswer}; mid-stream: {@code midStream} as the
     * style's error event; a relayed body cut half way: the client connection closed (the only honest signal left).
     */
    public void failed(UpstreamFailure failure, GatewayError beforeAnswer, GatewayError midStream) {
        if (done) {
            return;
        }
        if (!headSent) {
            if (failure != null && offer(failure)) {
                return;
            }
            failBeforeHead(beforeAnswer);
        } else if (mode == Mode.STREAM) {
            stream.dropPartialEvent();
            stream.endWithError(midStream);
        } else {
            ctx.close();
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /**
     * The provider broke HTTP (a head or body its decoder refused, a protocol switch, a doubly framed head): its
     * connection is never reused; offered for a retry while nothing was sent, else {@code error} (502) or the style's
     * error event. Logged and counted.
     */
    public void protocolFailure(String reason, String what, GatewayError error) {
        reusable = false;
        protocolError(reason, what);
        failed(UpstreamFailure.PROTOCOL_ERROR, error, error);
    }

    /**
     * A buffer could not be allocated for this answer: it ends here, once, logged and counted, with an honest answer
     * (503 / 529 before anything was sent, the style's error event mid-stream, else a closed connection), never
     * passed off as the provider's doing. If even that cannot be allocated, the client connection is closed.
     */
    public void allocationFailed(Throwable cause) {
        if (done) {
            return;
        }
        request.record().memoryRefusal(provider, "allocation_failed");
        LOG.warning("request " + request.requestId() + ": out of buffer memory handling the answer of upstream "
                + provider + " (" + cause + "); the exchange was ended");
        reusable = false;
        source.finished(false); // stop reading at once
        try {
            failed(null, UpstreamFailures.OUT_OF_MEMORY, UpstreamFailures.OUT_OF_MEMORY);
        } catch (OutOfMemoryError again) {
            ctx.close(); // not even the error could be written: closing is the only signal left
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /**
     * The client connection reported a failure (a write that failed comes here too). A buffer that could not be
     * allocated on the way out ends the answer as an allocation failure: logged once, counted, the client connection
     * closed (part of the answer is lost, so nothing after it may follow). Any other failure (the client gone) is
     * left to the handler, which closes the connection and cancels the exchange.
     */
    public void clientFailed(Throwable cause) {
        if (done || !isAllocationFailure(cause)) {
            return;
        }
        request.record().memoryRefusal(provider, "allocation_failed");
        LOG.warning("request " + request.requestId() + ": out of buffer memory writing to the client (" + cause
                + "); the exchange was ended");
        reusable = false;
        ctx.close();
        finish(false, Outcome.UPSTREAM_ERROR);
    }

    /** The client went away: the provider is let go at once (it stops generating, and billing). */
    public void cancel() {
        finish(false, Outcome.CANCELLED);
    }

    /** Whether {@code t} (or one of its causes) is a failed allocation: heap or direct memory. */
    public static boolean isAllocationFailure(Throwable t) {
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    /** Counts a broken rule of the provider's ({@code gateway_upstream_protocol_errors_total}) and logs it once. */
    void protocolError(String reason, String what) {
        request.record().protocolError(provider, reason);
        LOG.warning("upstream " + provider + " " + what + "; request " + request.requestId() + " ended");
    }

    void failBeforeHead(GatewayError error) {
        fail(error, null, false);
    }

    /** Answers {@code error} (with the provider's Retry-After, or null) before anything was sent, and ends. */
    void failBeforeHead(GatewayError error, String retryAfter) {
        reusable = false;
        fail(error, retryAfter, false);
    }

    private void fail(GatewayError error, String retryAfter, boolean clean) {
        if (done) {
            return;
        }
        HttpResponses.sendError(ctx, request, error, retryAfter);
        finish(clean, Outcome.UPSTREAM_ERROR);
    }

    /** An answer relayed or translated as it is: its own 429 or 5xx counts as an upstream error. */
    private Outcome statusOutcome() {
        int code = status == null ? 0 : status.code();
        return code == 429 || code >= 500 ? Outcome.UPSTREAM_ERROR : Outcome.DONE;
    }

    /** Ends the answer once: accounted, buffers released, the source let go (kept only after a clean answer). */
    void finish(boolean clean, Outcome outcome) {
        if (done) {
            return;
        }
        done = true;
        accounting.account(outcome, status == null ? 0 : status.code());
        releaseBuffers();
        source.finished(clean && reusable);
        onDone.accept(outcome);
    }

    private void releaseBuffers() {
        if (stream != null) {
            stream.release(); // idempotent; a feed in progress may still touch the scanner
        }
        if (collected != null) {
            collected.release();
        }
        heldHead = null;
        if (held != null) {
            held.release();
            held = null;
        }
        if (pending != null) {
            pending.release(); // the answer ended without a last write (the client left, the provider failed)
            pending = null;
            pendingMerged = false;
        }
    }

    /**
     * A key with {@code cost_header: true} gets the cost of a whole 2xx answer in {@code x-gateway-cost-usd}: its body
     * is in, so its usage is known before its head (a stream's is not: its cost is in the access log and metrics only).
     * Prices the record as the exchange's end will again, with the same counts.
     */
    void costHeader(HttpHeaders h) {
        KeyConfig key = request.key();
        ExchangeRecord record = request.record();
        if (key == null || !key.costHeader() || !record.priced()) {
            return;
        }
        accounting.account(Outcome.DONE, status == null ? 0 : status.code());
        record.priceIt();
        h.set(Usd.COST_HEADER, Usd.format(record.costUsd()));
    }

    // ------------------------------------------------------------------ writing

    /** The head of an answer whose body follows in parts, with the request's headers. */
    void sendHead(HttpResponse head) {
        request.decorate(head.headers());
        HttpUtil.setKeepAlive(head, request.keepAlive());
        headSent = true;
        write(head);
        boolean framed = mode == Mode.STREAM && HttpUtil.isTransferEncodingChunked(head)
                && head.status().code() >= 200 && head.status().code() != 204 && head.status().code() != 304
                && !HttpMethod.HEAD.equals(request.http().method());
        chunks = framed ? ChunkOut.of(ctx.channel()) : null;
    }

    /** A whole answer, with the request's headers, written and flushed. */
    void sendWhole(FullHttpResponse response) {
        request.decorate(response.headers());
        HttpUtil.setKeepAlive(response, request.keepAlive());
        headSent = true;
        writeAndFlush(response);
    }

    /**
     * Writes to the client with the channel's void promise: no promise object per write, and a write that fails is
     * fired into the client pipeline's {@code exceptionCaught}, which hands it back here ({@link #clientFailed}).
     */
    void write(Object msg) {
        if (mode == Mode.STREAM && msg.getClass() == DefaultHttpContent.class) {
            pend(((DefaultHttpContent) msg).content());
            return;
        }
        writePending();
        out.write(msg, out.voidPromise());
    }

    /** A piece of a stream's body, as {@link #write} of it in a {@code DefaultHttpContent}, without the wrapper. */
    void writeStreamPiece(ByteBuf piece) {
        if (mode == Mode.STREAM) {
            pend(piece);
        } else {
            write(new DefaultHttpContent(piece));
        }
    }

    /**
     * {@code length} bytes of {@code buf} from {@code index} as a piece of a stream's body, lent: copied where the
     * pieces of a read are merged (always on HTTP/1.1), else kept as a retained slice.
     */
    void writeStreamPiece(ByteBuf buf, int index, int length) {
        if (mode == Mode.STREAM && (chunks != null || pending != null)) {
            merge(buf, index, length);
        } else {
            writeStreamPiece(buf.retainedSlice(index, length));
        }
    }

    void writeAndFlush(Object msg) {
        writePending();
        out.writeAndFlush(msg, out.voidPromise());
    }

    /**
     * A stream's chunks are merged while one read of the upstream is handled and leave as one chunk at its end
     * ({@link #readComplete}), or before anything else is written: an upstream that sends each event in its own HTTP
     * chunk (as OpenAI's API does) costs the client side one chunk header, one outbound entry and one message per
     * read, not per event. The bytes and their order are the same. The second piece of a read starts one buffer
     * that the pieces are copied into and released: events are small (a few hundred bytes), and a composite of
     * them would cost an object per event twice, its component and, at the socket's gathering write, a
     * {@code java.nio.ByteBuffer} view of it. On HTTP/1.1 ({@link #chunks}) every piece is copied into a buffer
     * with room for the chunk's size line, which leaves framed ({@link ChunkFrame}) below the HTTP encoder: one
     * buffer, one outbound entry and one system call per read, where the encoder would write three and combine their
     * promises, and no walk through the handlers above it. That buffer is the event loop's own ({@link #MERGED})
     * whenever the socket took the last one whole: it stays in the cache, where a new buffer per read would be memory
     * gone cold.
     */
    private void pend(ByteBuf piece) {
        if (pending == null && chunks == null) {
            pending = piece;
            return;
        }
        try {
            merge(piece, piece.readerIndex(), piece.readableBytes());
        } finally {
            piece.release(); // copied, or (the allocation failed) dropped with the exchange, which ends on the error
        }
    }

    /** Copies {@code length} bytes of {@code src} from {@code index} to the read's merged chunk (made when needed). */
    private void merge(ByteBuf src, int index, int length) {
        if (pending == null) {
            // Room for the rest of this read (an upper bound of what it merges), its size line and closing CRLF: a
            // burst then needs no growing, and where the loop's buffer is still being written (io_uring) the buffer
            // taken instead has the size of what comes.
            int rest = src.writerIndex() - index;
            pending = ChunkFrame.withHeadroom(MERGED.take(alloc, ChunkFrame.HEADROOM + rest + 2));
            pendingMerged = true;
        } else if (!pendingMerged) {
            ByteBuf merged = MERGED.take(alloc, pending.readableBytes() + length);
            append(merged, pending, pending.readerIndex(), pending.readableBytes());
            pending.release();
            pending = merged;
            pendingMerged = true;
        }
        append(pending, src, index, length); // grows the buffer when needed
        if (pending.readableBytes() >= ctx.channel().config().getWriteBufferHighWaterMark()) {
            // A read loop may bring far more than one read: past the high watermark the merged bytes go out now, so
            // the connection's writability (which pauses the provider for a slow client) sees them (design rule 8).
            writePending();
        }
    }

    /**
     * Copies {@code n} bytes of {@code src} from {@code index} to the end of {@code dst} (growing it when needed).
     * Read from the source into the destination rather than {@code dst.writeBytes(src)}: Netty's adaptive buffers
     * take the latter through a {@code java.nio} view of the source, an object per copy, the former as a plain
     * memory copy.
     */
    private static void append(ByteBuf dst, ByteBuf src, int index, int n) {
        dst.ensureWritable(n);
        src.getBytes(index, dst, dst.writerIndex(), n);
        dst.writerIndex(dst.writerIndex() + n);
    }

    /** The chunks merged so far, out as one, before whatever is written next. */
    private void writePending() {
        if (pending != null) {
            ByteBuf merged = pending;
            pending = null;
            pendingMerged = false;
            if (chunks == null) {
                out.write(new DefaultHttpContent(merged), out.voidPromise());
            } else if (merged.isReadable()) {
                // Below the codec, past the response observer: the record is stamped here (the data, not the framing).
                request.record().bodyBytes(ChunkFrame.frame(merged));
                chunks.write(merged);
            } else {
                merged.release(); // nothing to send: a chunk of size zero would end the body
            }
        }
    }
}
