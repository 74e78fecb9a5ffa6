package io.modelgateway.core.upstream;

import io.modelgateway.core.answer.CollectedBudget;

import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.modelgateway.core.exchange.UpstreamFailures;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.UpstreamLimitsConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.codecs.sse.SseDataCheck;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.translate.ErrorTranslator;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.StreamTranslator;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.codecs.usage.BodyUsageScanner;
import io.modelgateway.codecs.usage.StreamUsageTracker;
import io.modelgateway.codecs.usage.UsageCounts;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import java.util.function.Consumer;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.concurrent.TimeUnit;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * A same-style exchange with an HTTP upstream (pass-through). The request body goes upstream as the caller's
 * bytes (spliced only where the model name differs); the answer comes back as the upstream's bytes: a
 * non-stream body piece by piece, a stream event by event as retained slices flushed one at a time
 * (DESIGN rules 2–3). Everything runs on the client's event loop, which is also the upstream connection's.
 *
 * <p>Ownership: the exchange owns {@link #upstreamBody} until it finishes; every upstream message handed to
 * {@link #onUpstreamMessage} is written to the client or released there; pieces of a 2xx body held back
 * ({@link #held}) are retained and owned by the exchange until written or released; a body collected whole
 * ({@link #collected}) is a copy the exchange owns, its bytes reserved from the process's {@link CollectedBudget}
 * and given back when the exchange ends, however it ends.
 *
 * <p>Garbage (contract 7.3): a relayed 2xx body is held, head included, until it is complete or passes
 * {@link #HOLD_LIMIT}; a complete body that is not structurally well-formed JSON ({@link BodyUsageScanner#wellFormed})
 * becomes a 502 in the caller's style. A larger body is relayed once the limit is passed; if it turns out malformed
 * at its end, its last piece is not sent and the client connection is closed, so the caller never sees a clean 2xx
 * with garbage. A stream event whose data is not JSON ({@link SseDataCheck}) ends the caller's stream with the
 * style's error event (or a 502 when nothing was sent yet, GD-24).
 *
 * <p>A hostile upstream: no provider secret reaches a caller, and every size it decides has a limit
 * ({@link UpstreamLimitsConfig}):
 * <ul>
 *   <li>An error answer (any final status outside 2xx) is collected whole, up to {@code max_error_body_bytes},
 *       then the provider's own secrets and anything shaped like a credential are removed from it
 *       ({@link UpstreamTarget#redactor}) and it goes out with its Content-Length: as it is to a caller of the
 *       same style, re-expressed ({@link ErrorTranslator}) to the other. A larger one is not relayed: the caller
 *       gets the gateway's own error for that status ({@link ErrorTranslator#kindForStatus}) and the upstream
 *       connection is closed.</li>
 *   <li>A stream event longer than {@code max_sse_event_bytes} ends the stream like a malformed event.</li>
 *   <li>A 2xx answer translated as a whole is collected up to {@code max_collected_bytes} (else 502), and within
 *       the process-wide {@code collected_budget_bytes} (else 503/529 with Retry-After).</li>
 *   <li>Interim answers (1xx but 101) are skipped; a 101, a head or body the HTTP decoder refused, or a head with
 *       both Content-Length and Transfer-Encoding is a protocol failure: the connection is closed, the attempt
 *       offered for a retry while nothing was sent, else a 502 or the style's error event.</li>
 *   <li>A buffer that cannot be allocated while reading the upstream or writing to the client ends the exchange
 *       with an honest error (503/529 before the answer, the style's error event or a close after it), logged
 *       once.</li>
 * </ul>
 * Each of these is logged in one line and counted ({@code gateway_upstream_protocol_errors_total},
 * {@code gateway_memory_refusals_total}). Writes to the client go with the channel's void promise: a write that
 * fails comes back through the pipeline's {@code exceptionCaught} ({@link #clientFailed}), at no cost per write.
 *
 * <p>One exchange is one attempt at one upstream. A failure before anything was written to the client (connect
 * failure or timeout, the connection lost, an error status) is first offered to the {@link AttemptHook}; when the
 * hook takes it over, the exchange ends silently: it releases its buffers, drains an error body so its connection
 * can go back to the pool (or closes the connection), and never calls {@code onDone}.
 */
public final class ProxyExchange implements Exchange, UpstreamListener {
    private static final Logger LOG = Logger.getLogger(ProxyExchange.class.getName());
    private static final AsciiString TEXT_EVENT_STREAM = AsciiString.cached("text/event-stream; charset=utf-8");
    private static final AsciiString X_ACCEL_BUFFERING = AsciiString.cached("x-accel-buffering");
    private static final AsciiString USER_AGENT = AsciiString.cached("model-gateway/0.1");

    /**
     * WAITING for the head; RELAY the upstream's 2xx body as it is; STREAM its events (spliced, or translated);
     * COLLECT a 2xx body to translate as a whole; ERROR: collect an error body, to redact and answer at its end;
     * DISCARD a body the caller must not see (our provider credentials refused).
     */
    private enum Mode { WAITING, RELAY, STREAM, COLLECT, ERROR, DISCARD }

    /**
     * Largest 2xx body held back until it is complete, to check it is JSON before the caller sees the head. Chat
     * and messages answers fit; long embeddings lists pass it and are relayed from there on.
     */
    static final int HOLD_LIMIT = 64 * 1024;

    /** First capacity of a collected body when the upstream did not say its length. */
    private static final int COLLECT_INITIAL = 4096;

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final ProviderConfig provider;
    private final UpstreamPools pools;
    private final UpstreamLimitsConfig limits;
    private final CollectedBudget budget;
    private final Consumer<Outcome> onDone;
    private final AttemptHook hook;
    /** Null for a same-style pass-through; else translates the answer into the caller's style. */
    private final ResponseTranslator translator;
    /** The gateway asked for the usage chunk the caller did not ask for: account from it, never forward it. */
    private final boolean withholdUsageChunk;
    /** The upstream's usage, from its stream events or its JSON answer (whichever it sends). */
    private StreamUsageTracker streamUsage;
    private BodyUsageScanner bodyUsage;
    private StreamTranslator streamTranslator;
    /** A body collected whole (COLLECT, ERROR): a copy, {@link #reserved} bytes of it from the budget; null when none. */
    private ByteBuf collected;
    /** Bytes reserved from {@link #budget}, given back when the exchange ends. */
    private long reserved;
    /** The upstream's Content-Length of a body to collect (to size the buffer once); -1 when unknown. */
    private long collectLength;
    private ByteBuf upstreamBody;
    /** The head of a 2xx relayed body, not yet sent (the body is held until complete or large); null once sent. */
    private HttpResponse heldHead;
    /** The pieces of that body so far: one retained piece, or a composite of them; null when none. */
    private ByteBuf held;
    private Channel upstream;
    /** The provider's per-request parts and pool key (set by {@link #start}). */
    private UpstreamTarget target;
    private SseEventScanner scanner;
    private Mode mode = Mode.WAITING;
    private HttpResponseStatus upstreamStatus;
    /**
     * The upstream's Retry-After (seconds or a date) and retry-after-ms of an error answer, kept for the caller's
     * error; null if none (or if one held a secret).
     */
    private String upstreamRetryAfter;
    private String upstreamRetryAfterMs;
    /** The Content-Type of an error answer; null if none (or if it held a secret). */
    private String errorContentType;
    private boolean headSent;
    private boolean upstreamKeepAlive;
    private boolean retried;
    /** The request was written to an upstream (so a cancel before its answer may still have cost input tokens). */
    private boolean upstreamAsked;
    /** The attempt's deadlines (provider timeouts): one timer, re-armed lazily when it fires early. */
    private ScheduledFuture<?> watchdog;
    private long sentNanos;
    /** When the upstream last sent anything of its answer (the stream-idle clock). */
    private long lastUpstreamNanos;
    /**
     * The gateway stopped reading the upstream because the client does not take what it has (auto-read off): the
     * upstream's silence is then ours, so the idle clock does not run (the whole-exchange deadline still does).
     */
    private boolean pausedByClient;
    private boolean done;
    /** A failure was offered to the hook (and declined): never offer this attempt's failure twice. */
    private boolean reported;
    /**
     * The hook took over an error answer: the exchange is done, but still reads the error body to its end so the
     * connection can be pooled again (auto-read on, nobody else listening), or drops it if the upstream closes.
     */
    private boolean draining;
    /**
     * Bytes of an error body read and dropped so far (that one, or a refused credential's in DISCARD): past
     * {@code max_error_body_bytes} the connection is closed instead of read to the end.
     */
    private long drainedBytes;

    /**
     * @param upstreamBody the body to send (the exchange takes ownership)
     * @param translator   null for pass-through; else how the answer is translated to the caller's style
     * @param withholdUsageChunk the upstream was asked for a usage chunk the caller did not ask for (GD-21)
     * @param onDone       run once when the client response is complete or abandoned, with how it ended; the
     *                     request's record then holds the tokens used
     */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            UpstreamPools pools, UpstreamLimitsConfig limits, CollectedBudget budget, ByteBuf upstreamBody,
            ResponseTranslator translator, boolean withholdUsageChunk, Consumer<Outcome> onDone) {
        this(ctx, request, provider, pools, limits, budget, upstreamBody, translator, withholdUsageChunk,
                AttemptHook.NONE, onDone);
    }

    /**
     * As above, offering failures before the answer began to {@code hook} first.
     *
     * @param limits what an upstream answer may make the exchange hold (the current config's)
     * @param budget the process-wide budget for bodies collected whole
     */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            UpstreamPools pools, UpstreamLimitsConfig limits, CollectedBudget budget, ByteBuf upstreamBody,
            ResponseTranslator translator, boolean withholdUsageChunk, AttemptHook hook, Consumer<Outcome> onDone) {
        this.hook = hook;
        this.ctx = ctx;
        this.request = request;
        this.provider = provider;
        this.pools = pools;
        this.limits = limits;
        this.budget = budget;
        this.upstreamBody = upstreamBody;
        this.translator = translator;
        this.withholdUsageChunk = withholdUsageChunk;
        this.onDone = onDone;
    }

    @Override
    public void start() {
        target = pools.target(provider);
        Future<Channel> f = pools.acquire(ctx.channel().eventLoop(), target);
        if (f.isDone()) {
            connected(f);
        } else {
            f.addListener(this::connected);
        }
    }

    private void connected(Future<? super Channel> f) {
        if (done) {
            if (f.isSuccess()) {
                pools.release((Channel) f.getNow());
            }
            return;
        }
        if (!f.isSuccess()) {
            Throwable cause = f.cause();
            LOG.log(Level.FINE, "upstream connect failed", cause);
            boolean timeout = cause instanceof ConnectTimeoutException;
            if (offer(timeout ? UpstreamFailure.CONNECT_TIMED_OUT : UpstreamFailure.CONNECT_FAILED)) {
                return;
            }
            failBeforeHead(timeout
                    ? new GatewayError(ErrorKind.UPSTREAM_TIMEOUT, "The upstream provider did not accept the "
                            + "connection in time.", null, null)
                    : new GatewayError(ErrorKind.OVERLOADED, "The upstream provider is unavailable.", null, null));
            return;
        }
        upstream = (Channel) f.getNow();
        UpstreamResponseReceiver receiver =
                (UpstreamResponseReceiver) upstream.pipeline().get(UpstreamPipelineNames.RECEIVER);
        receiver.listener(this);
        pausedByClient = !ctx.channel().isWritable();
        upstream.config().setAutoRead(!pausedByClient);
        sentNanos = System.nanoTime();
        request.record().upstreamSent(sentNanos);
        upstreamAsked = true;
        armWatchdog(sentNanos);
        upstream.writeAndFlush(buildRequest()).addListener((ChannelFutureListener) wf -> {
            if (!wf.isSuccess() && !done) {
                wf.channel().close(); // onUpstreamClosed decides between retry and error
            }
        });
    }

    private FullHttpRequest buildRequest() {
        FullHttpRequest out = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                target.path(upstreamEndpoint()), upstreamBody.retainedDuplicate(),
                UpstreamTarget.TRUSTED_HEADERS, UpstreamTarget.TRUSTED_HEADERS);
        HttpHeaders h = out.headers();
        h.set(HttpHeaderNames.HOST, target.host);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, upstreamBody.readableBytes());
        h.set(HttpHeaderNames.USER_AGENT, USER_AGENT);
        h.set(HttpResponses.X_REQUEST_ID, request.requestId());
        // Client headers the provider config asks to pass on; credentials never (contract 2.1), nor the
        // Anthropic headers, which follow their own rule below. The names are matched as the decoder made them,
        // without lower-cased copies.
        if (!provider.forwardHeaders().isEmpty()) {
            java.util.Iterator<Map.Entry<CharSequence, CharSequence>> it = request.headers().iteratorCharSequence();
            while (it.hasNext()) {
                Map.Entry<CharSequence, CharSequence> e = it.next();
                if (provider.forwardsHeader(e.getKey()) && !AnthropicHeaders.isAnthropicHeader(e.getKey())) {
                    h.add(AsciiString.of(e.getKey()).toLowerCase(), e.getValue());
                }
            }
        }
        for (int i = 0; i < target.extraNames.length; i++) {
            h.set(target.extraNames[i], target.extraValues[i]);
        }
        AnthropicHeaders.add(h, provider, request);
        if (target.credentialName != null) {
            h.set(target.credentialName, target.credentialValue);
        }
        return out;
    }

    /** The upstream's endpoint: the caller's, or the other style's chat endpoint when translating. */
    private Endpoint upstreamEndpoint() {
        Endpoint caller = request.endpoint();
        ApiStyle upstreamStyle = provider.type().style();
        if (caller == Endpoint.EMBEDDINGS || upstreamStyle == caller.style()) {
            return caller;
        }
        return upstreamStyle == ApiStyle.ANTHROPIC ? Endpoint.MESSAGES : Endpoint.CHAT_COMPLETIONS;
    }

    private boolean crossStyle() {
        return provider.type().style() != request.style();
    }

    // ------------------------------------------------------------------ upstream side

    @Override
    public void onUpstreamMessage(HttpObject msg) {
        try {
            if (msg.decoderResult().isFailure()) {
                // The decoder refused the head or the body framing (and skips the rest): the connection is unusable.
                if (!done) {
                    protocolFailure(msg instanceof HttpResponse ? "malformed_head" : "malformed_body",
                            "sent a malformed response " + (msg instanceof HttpResponse ? "head" : "body") + " ("
                                    + msg.decoderResult().cause() + ")",
                            UpstreamFailures.MALFORMED_RESPONSE);
                } else if (draining) {
                    drainFailed();
                }
                return;
            }
            if (!done && msg instanceof HttpResponse response) {
                onHead(response);
            }
            if (msg instanceof HttpContent content) {
                if (!done) {
                    onContent(content);
                } else if (draining) {
                    drain(content);
                }
            }
        } catch (OutOfMemoryError e) {
            allocationFailed(e); // a buffer for this answer could not be had: end it honestly
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onHead(HttpResponse response) {
        int code = response.status().code();
        if (code < 200) {
            if (code < 100) {
                protocolFailure("malformed_head", "answered with status " + code, UpstreamFailures.MALFORMED_RESPONSE);
            } else if (code == 101) {
                protocolFailure("switching_protocols", "answered 101 Switching Protocols",
                        UpstreamFailures.SWITCHED_PROTOCOLS);
            }
            // 100 Continue, 103 Early Hints, …: interim answers, never the answer. The decoder follows each with an
            // empty last content, which WAITING drops; the final head comes next, within first_byte_ms still.
            return;
        }
        HttpHeaders headers = response.headers();
        if (headers.contains(HttpHeaderNames.CONTENT_LENGTH) && headers.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            // Two framings at once (the decoder refuses this too when configured strictly, as UpstreamPools does).
            protocolFailure("malformed_head", "sent both Content-Length and Transfer-Encoding",
                    UpstreamFailures.MALFORMED_RESPONSE);
            return;
        }
        upstreamStatus = response.status();
        lastUpstreamNanos = System.nanoTime();
        request.record().upstreamHead(System.nanoTime());
        upstreamKeepAlive = HttpUtil.isKeepAlive(response);
        if (code >= 400 && offerAtHead(code, headers)) {
            return;
        }
        String contentType = headers.get(HttpHeaderNames.CONTENT_TYPE);
        if (code == 401 || code == 403) {
            // Our provider credentials were refused: the caller's key is fine, so never a 401 to them (8.10).
            LOG.warning("upstream " + provider.name() + " refused the provider credentials with " + code);
            mode = Mode.DISCARD;
            return;
        }
        boolean ok = code < 300;
        if (!ok) {
            // An error answer: collected whole, then redacted and answered (answerError). Its headers are kept only
            // when they hold no secret.
            mode = Mode.ERROR;
            upstreamRetryAfter = withoutSecret(headers.get(HttpHeaderNames.RETRY_AFTER));
            upstreamRetryAfterMs = withoutSecret(headers.get(HttpResponses.RETRY_AFTER_MS));
            errorContentType = withoutSecret(contentType);
            collectLength = HttpUtil.getContentLength(response, -1L);
            return;
        }
        hook.onAnswerStarted();
        if (contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17)) {
            mode = Mode.STREAM;
            scanner = new SseEventScanner(ctx.alloc(), limits.maxSseEventBytes());
            streamUsage = new StreamUsageTracker();
            if (translator != null) {
                streamTranslator = translator.newStream(ctx.alloc());
            }
            return; // the head goes out with the first event (GD-24)
        }
        bodyUsage = new BodyUsageScanner();
        if (translator != null) {
            mode = Mode.COLLECT; // answered once the whole body is in
            collectLength = HttpUtil.getContentLength(response, -1L);
            return;
        }
        mode = Mode.RELAY;
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, upstreamStatus, UpstreamTarget.TRUSTED_HEADERS);
        HttpHeaders h = head.headers();
        if (contentType != null) {
            h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        if (HttpUtil.isContentLengthSet(response)) {
            h.set(HttpHeaderNames.CONTENT_LENGTH, headers.get(HttpHeaderNames.CONTENT_LENGTH));
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

    private void onContent(HttpContent content) {
        lastUpstreamNanos = System.nanoTime();
        boolean last = content instanceof LastHttpContent;
        switch (mode) {
            case RELAY -> {
                ByteBuf c = content.content();
                bodyUsage.feed(c);
                if (heldHead != null) {
                    hold(c, last);
                } else if (last) {
                    if (!bodyUsage.wellFormed()) {
                        // Too late for a 502: withhold the end, so the caller sees a response cut short.
                        LOG.warning("upstream " + provider.name() + " sent a malformed answer (past the hold limit)");
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
            case STREAM -> {
                boolean fits = scanner.feed(content.content(),
                        streamTranslator == null ? this::passEvent : this::translateEvent);
                if (done) {
                    scanner.release(); // an event ended the exchange (malformed); drop what the feed kept after it
                    return;
                }
                if (!fits) {
                    eventTooLarge();
                    return;
                }
                if (last) {
                    ByteBuf rest = scanner.drainRemainder();
                    if (rest != null) {
                        if (streamTranslator == null) {
                            passEvent(rest);
                        } else {
                            translateEvent(rest);
                        }
                        if (done) {
                            return;
                        }
                    }
                    if (streamTranslator != null) {
                        streamTranslator.onEnd(true, this::writeEvent);
                    }
                    if (!headSent) {
                        sendStreamHead(); // an empty stream still gets a well-formed response
                    }
                    writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    // A translated stream that ended unfinished (no finish reason) closed with an error event.
                    finish(true, streamTranslator != null && streamTranslator.failed() ? Outcome.UPSTREAM_ERROR : Outcome.DONE);
                }
            }
            case COLLECT -> {
                ByteBuf c = content.content();
                bodyUsage.feed(c);
                if (collect(c, limits.maxCollectedBytes()) && last) {
                    answerCollected();
                }
            }
            case ERROR -> {
                if (collect(content.content(), limits.maxErrorBodyBytes()) && last) {
                    answerError();
                }
            }
            case DISCARD -> {
                // Read to its end to keep the connection, but no further than an error body may go.
                drainedBytes += content.content().readableBytes();
                boolean tooLong = !last && drainedBytes > limits.maxErrorBodyBytes();
                if (tooLong) {
                    upstreamKeepAlive = false;
                }
                if (last || tooLong) {
                    failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                            "The upstream provider refused the gateway's credentials.", null, null));
                }
            }
            case WAITING -> {
                // only the empty last content the decoder adds after an interim (1xx) head: nothing to do
            }
        }
    }

    /**
     * Adds a piece of a body collected whole (COLLECT, ERROR) to {@link #collected}, a copy: reserved from the
     * process's budget first, within {@code cap} for this exchange. Past either, the exchange is answered here and
     * false returned.
     */
    private boolean collect(ByteBuf piece, int cap) {
        int n = piece.readableBytes();
        if (n == 0) {
            return true;
        }
        long have = collected == null ? 0 : collected.readableBytes();
        if (have + n > cap) {
            collectedTooLarge(cap);
            return false;
        }
        if (!budget.tryReserve(n, limits.collectedBudgetBytes())) {
            budgetExhausted();
            return false;
        }
        reserved += n;
        if (collected == null) {
            // One buffer of the announced length when there is one (within the cap), else one that grows by doubling.
            int initial = collectLength >= n && collectLength <= cap ? (int) collectLength : Math.max(n, COLLECT_INITIAL);
            collected = ctx.alloc().buffer(Math.min(initial, cap));
        }
        collected.writeBytes(piece, piece.readerIndex(), n);
        return true;
    }

    /** A body to collect passed this exchange's cap: not read further, the connection closed. */
    private void collectedTooLarge(int cap) {
        upstreamKeepAlive = false;
        if (mode == Mode.ERROR) {
            int code = upstreamStatus.code();
            protocolError("error_body_too_large", "sent an error body (" + code + ") larger than max_error_body_bytes ("
                    + cap + ")");
            // The caller learns what the status said, in its own style, not what the body said.
            failBeforeHead(new GatewayError(ErrorTranslator.kindForStatus(code), "The upstream provider's error "
                    + "response (HTTP " + code + ") was larger than " + cap + " bytes and was not relayed.", null, null),
                    upstreamRetryAfter);
        } else {
            protocolError("answer_too_large", "sent an answer to translate larger than max_collected_bytes (" + cap + ")");
            failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR, "The upstream provider's answer is larger than "
                    + cap + " bytes, too large to translate.", null, null));
        }
    }

    /** The process holds {@code collected_budget_bytes} of collected bodies already: refused as overloaded. */
    private void budgetExhausted() {
        upstreamKeepAlive = false;
        request.record().memoryRefusal(provider.name(), "collected_budget");
        LOG.warning("request " + request.requestId() + ": the answer of upstream " + provider.name() + " was refused: "
                + "collected answers already hold upstream_limits.collected_budget_bytes (" + limits.collectedBudgetBytes()
                + ")");
        failBeforeHead(UpstreamFailures.COLLECTED_BUDGET_EXHAUSTED); // 503 / 529 with Retry-After
    }

    /**
     * A piece of a held 2xx body. The common case — head and whole body in one read, one piece — holds that piece
     * as it is (no copy, no composite) and sends it with the head.
     */
    private void hold(ByteBuf piece, boolean last) {
        if (piece.isReadable()) {
            if (held == null) {
                held = piece.retain();
            } else {
                if (!(held instanceof CompositeByteBuf)) {
                    CompositeByteBuf pieces = ctx.alloc().compositeBuffer(16);
                    pieces.addComponent(true, held);
                    held = pieces;
                }
                ((CompositeByteBuf) held).addComponent(true, piece.retain());
            }
        }
        if (last) {
            if (!bodyUsage.wellFormed()) {
                LOG.warning("upstream " + provider.name() + " sent a malformed answer (" + upstreamStatus.code() + ")");
                failBeforeHead(UpstreamFailures.MALFORMED_ANSWER); // releases what is held, closes the upstream
                return;
            }
            sendHeld(true);
            finish(true, statusOutcome());
        } else if (held != null && held.readableBytes() > HOLD_LIMIT) {
            sendHeld(false); // a large answer: relayed from here on, checked at its end
        }
    }

    /** The held head and body pieces go out (the body as the last content when it is complete). */
    private void sendHeld(boolean complete) {
        HttpResponse head = heldHead;
        ByteBuf body = held != null ? held : Unpooled.EMPTY_BUFFER;
        heldHead = null;
        held = null;
        headSent = true;
        write(head);
        if (complete) {
            writeAndFlush(new DefaultLastHttpContent(body));
        } else {
            write(new DefaultHttpContent(body));
        }
    }

    /** One upstream event as it is (pass-through): to the client, unless it is a usage chunk we withhold. */
    private void passEvent(ByteBuf event) {
        if (done) {
            event.release(); // the exchange ended on an earlier event of the same read
            return;
        }
        if (!SseDataCheck.plausible(event)) {
            event.release();
            malformedEvent();
            return;
        }
        if (SseDataCheck.looksLikeError(event)) {
            event = withoutSecrets(event);
        }
        if (streamUsage.onEvent(event) && withholdUsageChunk) {
            event.release(); // counted above; the caller did not ask for it (GD-21)
            return;
        }
        writeEvent(event);
    }

    /**
     * The upstream sent an event whose data is not JSON: nothing after it can be trusted. Before anything was sent,
     * a 502 (GD-24); else the style's error event after what was delivered, no terminator (GD-10). Either way the
     * upstream connection is closed and the exchange is an upstream error, accounted with what was delivered.
     */
    private void malformedEvent() {
        LOG.warning("upstream " + provider.name() + " sent a malformed stream event");
        if (!headSent) {
            failBeforeHead(UpstreamFailures.MALFORMED_ANSWER);
            return;
        }
        // Called from inside the scanner's feed: what it holds after this event is dropped when the exchange ends
        // (releaseBuffers), not drained here.
        endStreamWithError(UpstreamFailures.MALFORMED_EVENT);
    }

    /**
     * An event grew past {@code max_sse_event_bytes}: the scanner dropped it and takes nothing more. Ended like a
     * malformed event (a 502 before anything was sent, else the style's error event), the upstream closed.
     */
    private void eventTooLarge() {
        int max = scanner.maxEventBytes();
        upstreamKeepAlive = false;
        protocolError("sse_event_too_large", "sent a stream event larger than max_sse_event_bytes (" + max + ")");
        GatewayError error = new GatewayError(ErrorKind.UPSTREAM_ERROR,
                "The upstream provider sent a stream event larger than " + max + " bytes.", null, null);
        if (!headSent) {
            failBeforeHead(error);
        } else {
            endStreamWithError(error);
        }
    }

    /**
     * Ends a stream whose head was sent with {@code error} as the style's error event (GD-10) and no terminator
     * ({@code [DONE]} / {@code message_stop}); the HTTP response itself ends properly, so the client reads a
     * stream that carries the error and its connection stays usable. The upstream is closed.
     */
    private void endStreamWithError(GatewayError error) {
        if (streamTranslator != null) {
            streamTranslator.onFailure(error, this::writeEvent);
        } else {
            write(new DefaultHttpContent(ErrorBodies.streamEvent(ctx.alloc(), request.style(), error)));
        }
        writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        finish(false, Outcome.UPSTREAM_ERROR);
    }

    /**
     * An error event the upstream sent mid-stream, with the provider's secrets and key shapes removed (it may echo
     * the request's credential like an error body): the same event when it holds none, else a redacted copy (the
     * original released). Only error events come here: one prefix comparison per event decides.
     */
    private ByteBuf withoutSecrets(ByteBuf event) {
        ByteBuf clean = target.redactor.redactSseEvent(ctx.alloc(), event);
        if (clean == null) {
            return event;
        }
        event.release();
        return clean;
    }

    /** Drops half an event the scanner still holds: never hand a client a torn frame. */
    private void dropPartialEvent() {
        if (scanner == null) {
            return;
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            rest.release();
        }
    }

    /** One upstream event through the stream translator; its outputs go to the client one by one. */
    private void translateEvent(ByteBuf event) {
        if (done) {
            event.release();
            return;
        }
        if (!SseDataCheck.plausible(event)) {
            event.release();
            malformedEvent();
            return;
        }
        if (SseDataCheck.looksLikeError(event)) {
            event = withoutSecrets(event);
        }
        streamUsage.onEvent(event);
        try {
            streamTranslator.onEvent(event, this::writeEvent);
        } finally {
            event.release();
        }
        if (streamTranslator.failed()) {
            // The translator ended the caller's stream with an error event (a bad event inside, an error the
            // upstream sent): nothing after it is relayed; the upstream is closed and the answer is a failure.
            writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /** A complete collected 2xx body: the translated answer. */
    private void answerCollected() {
        ByteBuf body = collected != null ? collected : Unpooled.EMPTY_BUFFER;
        collected = null;
        try {
            ByteBuf out;
            try {
                out = translator.translate(ctx.alloc(), body);
            } catch (TranslationException e) {
                failBeforeHead(e.error());
                return;
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, out);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, out.readableBytes());
            request.decorate(response.headers());
            HttpUtil.setKeepAlive(response, request.keepAlive());
            headSent = true;
            writeAndFlush(response);
            finish(true, Outcome.DONE);
        } finally {
            body.release();
        }
    }

    /**
     * A complete error body (any final status outside 2xx): the provider's secrets removed, then relayed with its
     * status and a correct Content-Length to a caller of the upstream's style, or re-expressed in the caller's style.
     */
    private void answerError() {
        ByteBuf body = collected != null ? collected : Unpooled.EMPTY_BUFFER;
        collected = null;
        ByteBuf clean = target.redactor.redactBody(ctx.alloc(), body);
        if (clean != null) {
            body.release();
            body = clean;
        }
        int code = upstreamStatus.code();
        if (crossStyle()) {
            try {
                GatewayError error = ErrorTranslator.fromUpstream(provider.type().style(), code, body, request.style());
                HttpResponses.sendError(ctx, request, error, upstreamRetryAfter);
            } finally {
                body.release();
            }
        } else {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, upstreamStatus, body,
                    UpstreamTarget.TRUSTED_HEADERS, UpstreamTarget.TRUSTED_HEADERS);
            HttpHeaders h = response.headers();
            if (errorContentType != null) {
                h.set(HttpHeaderNames.CONTENT_TYPE, errorContentType);
            }
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            if (upstreamRetryAfter != null) {
                h.set(HttpHeaderNames.RETRY_AFTER, upstreamRetryAfter);
            }
            if (upstreamRetryAfterMs != null) {
                h.set(HttpResponses.RETRY_AFTER_MS, upstreamRetryAfterMs);
            }
            HttpResponses.ensureRetryHeaders(h, code);
            request.decorate(h);
            HttpUtil.setKeepAlive(response, request.keepAlive());
            headSent = true;
            writeAndFlush(response);
        }
        finish(true, statusOutcome());
    }

    /** A header value of an error answer, or null when it holds a secret (or is absurdly long). */
    private String withoutSecret(String value) {
        if (value == null || value.length() > 256 || target.redactor.containsSecret(value)) {
            return null;
        }
        return value;
    }

    /**
     * One event to the client, as its own chunk; flushed at the end of the upstream read that brought it
     * ({@link #onUpstreamReadComplete}): events that arrived together leave together in one write, which is
     * no later for any of them than a flush per event and costs one system call instead of one per event.
     */
    private void writeEvent(ByteBuf event) {
        if (!headSent) {
            sendStreamHead();
        }
        write(new DefaultHttpContent(event));
    }

    private void sendStreamHead() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, UpstreamTarget.TRUSTED_HEADERS);
        HttpHeaders h = head.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, TEXT_EVENT_STREAM);
        h.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        h.set(X_ACCEL_BUFFERING, "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        request.decorate(h);
        HttpUtil.setKeepAlive(head, request.keepAlive());
        headSent = true;
        write(head);
    }

    /**
     * Writes to the client with the channel's void promise: no promise object per write, and a write that fails
     * (a buffer the encoder could not allocate, a connection gone) is fired into the client pipeline's
     * {@code exceptionCaught}, which hands it back here ({@link #clientFailed}).
     */
    private void write(Object msg) {
        ctx.write(msg, ctx.voidPromise());
    }

    private void writeAndFlush(Object msg) {
        ctx.writeAndFlush(msg, ctx.voidPromise());
    }

    @Override
    public void onUpstreamReadComplete() {
        if (!done && (mode == Mode.RELAY || mode == Mode.STREAM)) {
            ctx.flush();
        }
    }

    @Override
    public void onUpstreamClosed(Throwable cause) {
        if (done) {
            if (draining) {
                draining = false; // the error body of a taken-over attempt was cut: the connection is gone
                upstream = null;
            }
            return;
        }
        if (isAllocationFailure(cause)) {
            upstream = null; // the transport closes a connection whose read buffer could not be allocated
            allocationFailed(cause);
            return;
        }
        if (cause != null) {
            LOG.log(Level.FINE, "upstream connection failed", cause);
        }
        boolean nothingReceived = mode == Mode.WAITING;
        if (nothingReceived && !retried && UpstreamPools.wasPooled(upstream)) {
            // A pooled keep-alive connection the upstream had already closed: try once on a fresh one.
            retried = true;
            upstream = null;
            Future<Channel> f = pools.acquireFresh(ctx.channel().eventLoop(), target);
            f.addListener(this::connected);
            return;
        }
        upstream = null;
        if (!headSent) {
            if (offer(UpstreamFailure.LOST_BEFORE_ANSWER)) {
                return;
            }
            failBeforeHead(UpstreamFailures.LOST_BEFORE_ANSWER);
        } else if (mode == Mode.STREAM) {
            dropPartialEvent();
            endStreamWithError(UpstreamFailures.LOST_MID_STREAM);
        } else {
            ctx.close(); // a non-stream body cut short: closing is the only honest signal left
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /**
     * Offers a failure to the hook (once per attempt). When the hook takes over, the exchange ends here without an
     * answer: buffers released, the connection (if any) closed.
     */
    private boolean offer(UpstreamFailure failure) {
        if (reported) {
            return false;
        }
        reported = true;
        if (!hook.onFailureBeforeHead(failure)) {
            return false;
        }
        abandon();
        return true;
    }

    /**
     * An error head offered to the hook. Taken over, its body is read to the end and dropped, so a keep-alive
     * connection goes back to the pool rather than being closed for one small error body.
     */
    private boolean offerAtHead(int code, HttpHeaders headers) {
        reported = true;
        if (!hook.onFailureBeforeHead(UpstreamFailure.status(code, UpstreamFailure.retryAfterMillis(headers)))) {
            return false;
        }
        draining = true;
        upstream.config().setAutoRead(true); // nobody relays client writability to a drained connection
        abandon();
        return true;
    }

    // ------------------------------------------------------------------ timeouts (GD-9, GD-10)

    private long totalDeadline() {
        return request.startNanos() + TimeUnit.MILLISECONDS.toNanos(provider.timeouts().totalMs());
    }

    /** The next deadline: the first byte while waiting for the head, else the idle gap; the total always. */
    private long nextDeadline() {
        if (pausedByClient && mode != Mode.WAITING) {
            return totalDeadline();
        }
        long at = mode == Mode.WAITING
                ? sentNanos + TimeUnit.MILLISECONDS.toNanos(provider.timeouts().firstByteMs())
                : lastUpstreamNanos + TimeUnit.MILLISECONDS.toNanos(provider.timeouts().streamIdleMs());
        return Math.min(at, totalDeadline());
    }

    private void armWatchdog(long now) {
        watchdog = ctx.executor().schedule(this::watchdogFired, Math.max(0, nextDeadline() - now),
                TimeUnit.NANOSECONDS);
    }

    private void cancelWatchdog() {
        if (watchdog != null) {
            watchdog.cancel(false);
            watchdog = null;
        }
    }

    /** Content arriving only moves a field; the timer looks again when it fires and sleeps on if it may. */
    private void watchdogFired() {
        watchdog = null;
        if (done) {
            return;
        }
        long now = System.nanoTime();
        if (now < nextDeadline()) {
            armWatchdog(now);
            return;
        }
        boolean total = now >= totalDeadline();
        LOG.fine(() -> "upstream " + provider.name() + " timed out (" + (total ? "total"
                : mode == Mode.WAITING ? "first byte" : "idle") + ")");
        if (mode == Mode.WAITING && !total && offer(UpstreamFailure.FIRST_BYTE_TIMED_OUT)) {
            return; // the routing layer tries again elsewhere
        }
        if (mode == Mode.STREAM && headSent) {
            dropPartialEvent();
            endStreamWithError(UpstreamFailures.TIMED_OUT_MID_STREAM);
        } else if (headSent) {
            ctx.close(); // a relayed body stalled half way: closing is the only honest signal left
            finish(false, Outcome.UPSTREAM_ERROR);
        } else {
            failBeforeHead(UpstreamFailures.TIMED_OUT_BEFORE_ANSWER);
        }
    }

    /** The hook took over: end without answering, without accounting, without {@code onDone}. */
    private void abandon() {
        cancelWatchdog();
        done = true;
        releaseBuffers();
        if (!draining) {
            closeUpstream();
        }
    }

    /**
     * A piece of the dropped error body of a taken-over attempt: at its end the connection may serve another request;
     * a body longer than an error body may be is not worth reading to its end, the connection is closed instead.
     */
    private void drain(HttpContent content) {
        drainedBytes += content.content().readableBytes();
        if (content instanceof LastHttpContent) {
            drained();
        } else if (drainedBytes > limits.maxErrorBodyBytes()) {
            drainFailed();
        }
    }

    /** The dropped error body of a taken-over attempt cannot be read to a clean end: close its connection. */
    private void drainFailed() {
        draining = false;
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            detachAndClose(u);
        }
    }

    /** The dropped error body of a taken-over attempt is complete: the connection may serve another request. */
    private void drained() {
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
    }

    private void failBeforeHead(GatewayError error) {
        failBeforeHead(error, null);
    }

    /** As above, passing on an upstream's Retry-After (null for none). */
    private void failBeforeHead(GatewayError error, String retryAfter) {
        if (done) {
            return;
        }
        HttpResponses.sendError(ctx, request, error, retryAfter);
        finish(mode == Mode.DISCARD, Outcome.UPSTREAM_ERROR);
    }

    // ------------------------------------------------------------------ a hostile upstream, memory

    /**
     * The upstream broke HTTP: the decoder refused its head or body framing, it switched protocols, or its head framed
     * the body twice. The connection is never reused. Before anything reached the caller the attempt is offered to
     * the hook like a lost connection (another deployment may do better), else answered with {@code error} (502);
     * mid-stream the style's error event ends the stream; a relayed body is cut by closing the client connection.
     */
    private void protocolFailure(String reason, String what, GatewayError error) {
        upstreamKeepAlive = false;
        protocolError(reason, what);
        if (!headSent) {
            if (offer(UpstreamFailure.PROTOCOL_ERROR)) {
                return;
            }
            failBeforeHead(error);
        } else if (mode == Mode.STREAM) {
            dropPartialEvent();
            endStreamWithError(error);
        } else {
            ctx.close(); // a relayed body gone bad half way: closing is the only honest signal left
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /** Counts a broken rule of the upstream's ({@code gateway_upstream_protocol_errors_total}) and logs it once. */
    private void protocolError(String reason, String what) {
        request.record().protocolError(provider.name(), reason);
        LOG.warning("upstream " + provider.name() + " " + what + "; request " + request.requestId() + " ended");
    }

    /**
     * A buffer could not be allocated for this exchange (reading its upstream, or handling what it read): it ends
     * here, once, logged and counted, with an honest answer — 503 / 529 with Retry-After before anything was sent,
     * the style's error event mid-stream, else a closed connection — never passed off as the upstream's doing.
     * The upstream connection is closed. If even the answer cannot be allocated, the client connection is closed.
     */
    private void allocationFailed(Throwable cause) {
        if (done) {
            return;
        }
        request.record().memoryRefusal(provider.name(), "allocation_failed");
        LOG.warning("request " + request.requestId() + ": out of buffer memory handling the answer of upstream "
                + provider.name() + " (" + cause + "); the exchange was ended");
        upstreamKeepAlive = false;
        closeUpstream();
        try {
            if (!headSent) {
                failBeforeHead(UpstreamFailures.OUT_OF_MEMORY);
            } else if (mode == Mode.STREAM) {
                dropPartialEvent();
                endStreamWithError(UpstreamFailures.OUT_OF_MEMORY);
            } else {
                ctx.close(); // a relayed body cut short
                finish(false, Outcome.UPSTREAM_ERROR);
            }
        } catch (OutOfMemoryError again) {
            ctx.close(); // not even the error could be written: closing is the only signal left
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /**
     * The client connection reported a failure; a write to it that failed comes here too (see {@link #write}). A
     * buffer that could not be allocated on the way out ends the exchange as an allocation failure: logged once,
     * counted, the upstream closed, the client connection closed (part of the answer is lost, so nothing after it
     * may follow). Any other failure (the client gone) is left to the handler, which closes the connection and
     * cancels the exchange.
     */
    @Override
    public void clientFailed(Throwable cause) {
        if (done || !isAllocationFailure(cause)) {
            return;
        }
        request.record().memoryRefusal(provider.name(), "allocation_failed");
        LOG.warning("request " + request.requestId() + ": out of buffer memory writing to the client (" + cause
                + "); the exchange was ended");
        upstreamKeepAlive = false;
        ctx.close();
        finish(false, Outcome.UPSTREAM_ERROR);
    }

    /** Whether {@code t} (or one of its causes) is a failed allocation: heap or direct memory. */
    static boolean isAllocationFailure(Throwable t) {
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof OutOfMemoryError) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ client side

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (upstream != null && !done) {
            if (pausedByClient && writable) {
                // The idle clock starts again from here; a timer set for the total deadline while paused must not
                // be the next look.
                lastUpstreamNanos = System.nanoTime();
                if (watchdog != null) {
                    cancelWatchdog();
                    armWatchdog(lastUpstreamNanos);
                }
            }
            pausedByClient = !writable;
            upstream.config().setAutoRead(writable);
        }
    }

    @Override
    public void cancel() {
        if (done) {
            return;
        }
        closeUpstream(); // the provider stops generating (and billing) now
        finish(false, Outcome.CANCELLED);
    }

    /** An upstream answer relayed or translated as it is: its own 429 or 5xx counts as an upstream error. */
    private Outcome statusOutcome() {
        int code = upstreamStatus == null ? 0 : upstreamStatus.code();
        return code == 429 || code >= 500 ? Outcome.UPSTREAM_ERROR : Outcome.DONE;
    }

    /**
     * Puts the tokens this exchange used on its record: the upstream's own counts when its answer was complete;
     * otherwise an estimate of what was delivered (the reserved input estimate, or the input the upstream
     * already reported, and one token per content event sent); nothing for an answer the upstream refused. Counts
     * the upstream reported but the codecs did not believe (see {@code TokenCount}) are as good as none.
     */
    private void account(Outcome outcome) {
        ExchangeRecord record = request.record();
        int code = upstreamStatus == null ? 0 : upstreamStatus.code();
        boolean ok = code >= 200 && code < 300;
        UsageCounts counts = streamUsage != null ? streamUsage.counts() : bodyUsage != null ? bodyUsage.counts() : null;
        if (counts != null && counts.implausible()) {
            // A count no exchange can have: none of this usage is believed, the estimate below stands in for it.
            LOG.warning("upstream " + provider.name() + " reported an implausible token count ("
                    + counts.implausibleField() + "); the exchange is accounted with the gateway's estimate");
            counts = null;
        }
        boolean complete = counts != null && (streamUsage == null || streamUsage.complete());
        if (ok && outcome == Outcome.DONE && complete) {
            Usage u = counts.usage();
            record.usage(u.promptTokens(), u.completionTokens(), ExchangeRecord.UsageSource.UPSTREAM);
        } else if (ok || (outcome == Outcome.CANCELLED && upstreamStatus == null && upstreamAsked)) {
            Usage u = counts == null ? null : counts.usage();
            long input = u != null && u.promptTokens() > 0 ? u.promptTokens() : request.estimatedInputTokens();
            long output = streamUsage == null ? 0 : Math.max(u == null ? 0 : u.completionTokens(), streamUsage.otherEvents());
            record.usage(input, output, ExchangeRecord.UsageSource.ESTIMATED);
        } else {
            record.usage(0, 0, ExchangeRecord.UsageSource.NONE);
        }
    }

    /** Ends the exchange once: the upstream connection goes back to the pool only after a clean, complete answer. */
    private void finish(boolean clean, Outcome outcome) {
        if (done) {
            return;
        }
        done = true;
        cancelWatchdog();
        account(outcome);
        releaseBuffers();
        if (clean && upstreamKeepAlive && upstream != null) {
            Channel u = upstream;
            upstream = null;
            pools.release(u);
        } else {
            closeUpstream();
        }
        onDone.accept(outcome);
    }

    private void releaseBuffers() {
        if (scanner != null) {
            scanner.release(); // idempotent; the scanner stays, a feed in progress may still touch it
        }
        if (collected != null) {
            collected.release();
            collected = null;
        }
        if (reserved > 0) {
            budget.release(reserved);
            reserved = 0;
        }
        heldHead = null;
        if (held != null) {
            held.release();
            held = null;
        }
        if (upstreamBody != null) {
            upstreamBody.release();
            upstreamBody = null;
        }
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
