package io.modelgateway.core.upstream;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.server.HttpResponses;
import io.modelgateway.core.server.PipelineNames;
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
import io.modelgateway.core.observe.ExchangeRecord;
import io.modelgateway.core.observe.Outcome;
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
 * ({@link #held}) are retained and owned by the exchange until written or released.
 *
 * <p>Garbage (API-CONTRACT 7.3): a relayed 2xx body is held, head included, until it is complete or passes
 * {@link #HOLD_LIMIT}; a complete body that is not structurally well-formed JSON ({@link BodyUsageScanner#wellFormed})
 * becomes a 502 in the caller's style. A larger body is relayed once the limit is passed; if it turns out malformed
 * at its end, its last piece is not sent and the client connection is closed, so the caller never sees a clean 2xx
 * with garbage. A stream event whose data is not JSON ({@link SseDataCheck}) ends the caller's stream with the
 * style's error event (or a 502 when nothing was sent yet, GD-24).
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
     * WAITING for the head; RELAY the upstream's body as it is; STREAM its events (spliced, or translated);
     * COLLECT a body to translate as a whole (a translated answer, or a cross-style error); DISCARD a body
     * the caller must not see (our provider credentials refused).
     */
    private enum Mode { WAITING, RELAY, STREAM, COLLECT, DISCARD }

    /**
     * Largest 2xx body held back until it is complete, to check it is JSON before the caller sees the head. Chat
     * and messages answers fit; long embeddings lists pass it and are relayed from there on.
     */
    static final int HOLD_LIMIT = 64 * 1024;

    /** Largest upstream body collected for translation (answers and errors; embeddings may be large). */
    private static final int MAX_COLLECTED_BYTES = 64 * 1024 * 1024;

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final ProviderConfig provider;
    private final UpstreamPools pools;
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
    private CompositeByteBuf collected;
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
    /** The upstream's Retry-After (seconds), kept for errors re-expressed in the caller's style; null if none. */
    private String upstreamRetryAfter;
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
     * @param upstreamBody the body to send (the exchange takes ownership)
     * @param translator   null for pass-through; else how the answer is translated to the caller's style
     * @param withholdUsageChunk the upstream was asked for a usage chunk the caller did not ask for (GD-21)
     * @param onDone       run once when the client response is complete or abandoned, with how it ended; the
     *                     request's record then holds the tokens used
     */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            UpstreamPools pools, ByteBuf upstreamBody, ResponseTranslator translator, boolean withholdUsageChunk,
            Consumer<Outcome> onDone) {
        this(ctx, request, provider, pools, upstreamBody, translator, withholdUsageChunk, AttemptHook.NONE, onDone);
    }

    /** As above, offering failures before the answer began to {@code hook} first. */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            UpstreamPools pools, ByteBuf upstreamBody, ResponseTranslator translator, boolean withholdUsageChunk,
            AttemptHook hook, Consumer<Outcome> onDone) {
        this.hook = hook;
        this.ctx = ctx;
        this.request = request;
        this.provider = provider;
        this.pools = pools;
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
                (UpstreamResponseReceiver) upstream.pipeline().get(PipelineNames.UPSTREAM_RECEIVER);
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
        // Client headers the provider config asks to pass on; credentials never (API-CONTRACT 2.1), nor the
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
            if (!done && msg instanceof HttpResponse response) {
                onHead(response);
            }
            if (msg instanceof HttpContent content) {
                if (!done) {
                    onContent(content);
                } else if (draining && content instanceof LastHttpContent) {
                    drained();
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onHead(HttpResponse response) {
        upstreamStatus = response.status();
        lastUpstreamNanos = System.nanoTime();
        request.record().upstreamHead(System.nanoTime());
        upstreamKeepAlive = HttpUtil.isKeepAlive(response);
        upstreamRetryAfter = response.headers().get(HttpHeaderNames.RETRY_AFTER);
        int code = upstreamStatus.code();
        if (code == 100) {
            return;
        }
        if (code >= 400 && offerAtHead(code, response.headers())) {
            return;
        }
        String contentType = response.headers().get(HttpHeaderNames.CONTENT_TYPE);
        if (code == 401 || code == 403) {
            // Our provider credentials were refused: the caller's key is fine, so never a 401 to them (8.10).
            LOG.warning("upstream " + provider.name() + " refused the provider credentials with " + code);
            mode = Mode.DISCARD;
            return;
        }
        boolean ok = code >= 200 && code < 300;
        if (ok) {
            hook.onAnswerStarted();
        }
        if (ok && contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17)) {
            mode = Mode.STREAM;
            scanner = new SseEventScanner(ctx.alloc());
            streamUsage = new StreamUsageTracker();
            if (translator != null) {
                streamTranslator = translator.newStream(ctx.alloc());
            }
            return; // the head goes out with the first event (GD-24)
        }
        if (ok) {
            bodyUsage = new BodyUsageScanner();
        }
        if ((ok && translator != null) || (!ok && crossStyle())) {
            mode = Mode.COLLECT; // answered once the whole body is in
            collected = ctx.alloc().compositeBuffer(64);
            return;
        }
        mode = Mode.RELAY;
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, upstreamStatus, UpstreamTarget.TRUSTED_HEADERS);
        HttpHeaders h = head.headers();
        if (contentType != null) {
            h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        if (HttpUtil.isContentLengthSet(response)) {
            h.set(HttpHeaderNames.CONTENT_LENGTH, response.headers().get(HttpHeaderNames.CONTENT_LENGTH));
        } else {
            HttpUtil.setTransferEncodingChunked(head, true);
        }
        copy(response.headers(), h, HttpHeaderNames.RETRY_AFTER);
        copy(response.headers(), h, HttpResponses.RETRY_AFTER_MS);
        HttpResponses.ensureRetryHeaders(h, code);
        request.decorate(h);
        HttpUtil.setKeepAlive(head, request.keepAlive());
        if (ok && code != 204) {
            heldHead = head; // sent with the body once it is known to be JSON, or once it is large
            return;
        }
        headSent = true;
        ctx.write(head);
    }

    private void onContent(HttpContent content) {
        lastUpstreamNanos = System.nanoTime();
        boolean last = content instanceof LastHttpContent;
        switch (mode) {
            case RELAY -> {
                ByteBuf c = content.content();
                if (bodyUsage != null) {
                    bodyUsage.feed(c);
                }
                if (heldHead != null) {
                    hold(c, last);
                } else if (last) {
                    if (bodyUsage != null && !bodyUsage.wellFormed()) {
                        // Too late for a 502: withhold the end, so the caller sees a response cut short.
                        LOG.warning("upstream " + provider.name() + " sent a malformed answer (past the hold limit)");
                        ctx.close();
                        finish(false, Outcome.UPSTREAM_ERROR);
                        return;
                    }
                    ctx.writeAndFlush(new DefaultLastHttpContent(c.retain()));
                    finish(true, statusOutcome());
                } else if (c.isReadable()) {
                    ctx.write(new DefaultHttpContent(c.retain()));
                }
            }
            case STREAM -> {
                scanner.feed(content.content(), streamTranslator == null ? this::passEvent : this::translateEvent);
                if (done) {
                    scanner.release(); // an event ended the exchange (malformed); drop what the feed kept after it
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
                    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    // A translated stream that ended unfinished (no finish reason) closed with an error event.
                    finish(true, streamTranslator != null && streamTranslator.failed() ? Outcome.UPSTREAM_ERROR : Outcome.DONE);
                }
            }
            case COLLECT -> {
                ByteBuf c = content.content();
                if (bodyUsage != null) {
                    bodyUsage.feed(c);
                }
                if (c.isReadable()) {
                    if (collected.readableBytes() + c.readableBytes() > MAX_COLLECTED_BYTES) {
                        failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                                "The upstream provider's answer is too large to translate.", null, null));
                        return;
                    }
                    collected.addComponent(true, c.retain());
                }
                if (last) {
                    answerCollected();
                }
            }
            case DISCARD -> {
                if (last) {
                    failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                            "The upstream provider refused the gateway's credentials.", null, null));
                }
            }
            case WAITING -> {
                // content before a head cannot happen with HttpClientCodec; drop it
            }
        }
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
        ctx.write(head);
        if (complete) {
            ctx.writeAndFlush(new DefaultLastHttpContent(body));
        } else {
            ctx.write(new DefaultHttpContent(body));
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
     * Ends a stream whose head was sent with {@code error} as the style's error event (GD-10) and no terminator
     * ({@code [DONE]} / {@code message_stop}); the HTTP response itself ends properly, so the client reads a
     * stream that carries the error and its connection stays usable. The upstream is closed.
     */
    private void endStreamWithError(GatewayError error) {
        if (streamTranslator != null) {
            streamTranslator.onFailure(error, this::writeEvent);
        } else {
            ctx.write(new DefaultHttpContent(ErrorBodies.streamEvent(ctx.alloc(), request.style(), error)));
        }
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        finish(false, Outcome.UPSTREAM_ERROR);
    }

    /** Drops half an event the scanner still holds: never hand a client a torn frame. */
    private void dropPartialEvent() {
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
        streamUsage.onEvent(event);
        try {
            streamTranslator.onEvent(event, this::writeEvent);
        } finally {
            event.release();
        }
        if (streamTranslator.failed()) {
            // The translator ended the caller's stream with an error event (a bad event inside, an error the
            // upstream sent): nothing after it is relayed; the upstream is closed and the answer is a failure.
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /** A complete collected body: a translated answer, or an upstream error re-expressed in the caller's style. */
    private void answerCollected() {
        ByteBuf body = collected;
        collected = null;
        try {
            int code = upstreamStatus.code();
            if (code >= 200 && code < 300) {
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
                ctx.writeAndFlush(response);
                finish(true, Outcome.DONE);
            } else {
                GatewayError error = ErrorTranslator.fromUpstream(provider.type().style(), code, body, request.style());
                HttpResponses.sendError(ctx, request, error, upstreamRetryAfter);
                finish(true, statusOutcome());
            }
        } finally {
            body.release();
        }
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
        ctx.write(new DefaultHttpContent(event));
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
        ctx.write(head);
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
        if (done) {
            return;
        }
        HttpResponses.sendError(ctx, request, error, null);
        finish(mode == Mode.DISCARD, Outcome.UPSTREAM_ERROR);
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
     * already reported, and one token per content event sent); nothing for an answer the upstream refused.
     */
    private void account(Outcome outcome) {
        ExchangeRecord record = request.record();
        int code = upstreamStatus == null ? 0 : upstreamStatus.code();
        boolean ok = code >= 200 && code < 300;
        UsageCounts counts = streamUsage != null ? streamUsage.counts() : bodyUsage != null ? bodyUsage.counts() : null;
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
        UpstreamResponseReceiver receiver = (UpstreamResponseReceiver) u.pipeline().get(PipelineNames.UPSTREAM_RECEIVER);
        if (receiver != null) {
            receiver.listener(null);
        }
        u.close();
    }

    private static void copy(HttpHeaders from, HttpHeaders to, CharSequence name) {
        String v = from.get(name);
        if (v != null) {
            to.set(name, v);
        }
    }
}
