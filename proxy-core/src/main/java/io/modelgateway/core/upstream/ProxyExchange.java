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
import io.modelgateway.codecs.sse.SseEventScanner;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
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
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A same-style exchange with an HTTP upstream (pass-through). The request body goes upstream as the caller's
 * bytes (spliced only where the model name differs); the answer comes back as the upstream's bytes: a
 * non-stream body piece by piece, a stream event by event as retained slices flushed one at a time
 * (DESIGN rules 2–3). Everything runs on the client's event loop, which is also the upstream connection's.
 *
 * <p>Ownership: the exchange owns {@link #upstreamBody} until it finishes; every upstream message handed to
 * {@link #onUpstreamMessage} is written to the client or released there.
 */
public final class ProxyExchange implements Exchange, UpstreamListener {
    private static final Logger LOG = Logger.getLogger(ProxyExchange.class.getName());
    private static final AsciiString TEXT_EVENT_STREAM = AsciiString.cached("text/event-stream; charset=utf-8");
    private static final AsciiString X_ACCEL_BUFFERING = AsciiString.cached("x-accel-buffering");
    private static final AsciiString ANTHROPIC_VERSION = AsciiString.cached("anthropic-version");
    private static final AsciiString ANTHROPIC_BETA = AsciiString.cached("anthropic-beta");
    private static final String USER_AGENT = "model-gateway/0.1";

    private enum Mode { WAITING, RELAY, STREAM, DISCARD }

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final ProviderConfig provider;
    private final UpstreamPools pools;
    private final Runnable onDone;
    private ByteBuf upstreamBody;
    private Channel upstream;
    private SseEventScanner scanner;
    private Mode mode = Mode.WAITING;
    private HttpResponseStatus upstreamStatus;
    private boolean headSent;
    private boolean upstreamKeepAlive;
    private boolean retried;
    private boolean done;

    /**
     * @param upstreamBody the body to send (the exchange takes ownership)
     * @param onDone       run once when the client response is complete or abandoned
     */
    public ProxyExchange(ChannelHandlerContext ctx, GatewayRequest request, ProviderConfig provider,
            UpstreamPools pools, ByteBuf upstreamBody, Runnable onDone) {
        this.ctx = ctx;
        this.request = request;
        this.provider = provider;
        this.pools = pools;
        this.upstreamBody = upstreamBody;
        this.onDone = onDone;
    }

    @Override
    public void start() {
        Future<Channel> f = pools.acquire(ctx.channel().eventLoop(), provider);
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
        upstream.config().setAutoRead(ctx.channel().isWritable());
        upstream.writeAndFlush(buildRequest()).addListener((ChannelFutureListener) wf -> {
            if (!wf.isSuccess() && !done) {
                wf.channel().close(); // onUpstreamClosed decides between retry and error
            }
        });
    }

    private FullHttpRequest buildRequest() {
        URI base = provider.baseUrl();
        String basePath = base.getRawPath() == null ? "" : base.getRawPath();
        if (basePath.endsWith("/")) {
            basePath = basePath.substring(0, basePath.length() - 1);
        }
        Endpoint endpoint = request.endpoint();
        FullHttpRequest out = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                basePath + endpoint.upstreamSuffix(), upstreamBody.retainedDuplicate());
        HttpHeaders h = out.headers();
        int port = UpstreamPools.port(base);
        boolean defaultPort = port == ("https".equalsIgnoreCase(base.getScheme()) ? 443 : 80);
        h.set(HttpHeaderNames.HOST, defaultPort ? base.getHost() : base.getHost() + ":" + port);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, upstreamBody.readableBytes());
        h.set(HttpHeaderNames.USER_AGENT, USER_AGENT);
        h.set(HttpResponses.X_REQUEST_ID, request.requestId());
        // Client headers the provider config asks to pass on; credentials never (API-CONTRACT 2.1).
        if (!provider.forwardHeaders().isEmpty()) {
            for (Map.Entry<String, String> e : request.headers()) {
                String name = e.getKey().toLowerCase(Locale.ROOT);
                if (!name.equals("authorization") && !name.equals("x-api-key") && provider.forwardsHeader(name)) {
                    h.add(name, e.getValue());
                }
            }
        }
        for (Map.Entry<String, String> e : provider.headers().entrySet()) {
            h.set(e.getKey(), e.getValue());
        }
        String key = provider.apiKey();
        if (provider.type().style() == ApiStyle.ANTHROPIC) {
            if (key != null) {
                h.set("x-api-key", key);
            }
            String version = request.headers().get(ANTHROPIC_VERSION);
            h.set(ANTHROPIC_VERSION, version != null ? version : "2023-06-01");
            String beta = request.headers().get(ANTHROPIC_BETA);
            if (beta != null) {
                h.set(ANTHROPIC_BETA, beta);
            }
        } else if (key != null) {
            h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + key);
        }
        return out;
    }

    // ------------------------------------------------------------------ upstream side

    @Override
    public void onUpstreamMessage(HttpObject msg) {
        if (done) {
            ReferenceCountUtil.release(msg);
            return;
        }
        try {
            if (msg instanceof HttpResponse response) {
                onHead(response);
            }
            if (msg instanceof HttpContent content) {
                onContent(content);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onHead(HttpResponse response) {
        upstreamStatus = response.status();
        upstreamKeepAlive = HttpUtil.isKeepAlive(response);
        int code = upstreamStatus.code();
        if (code == 100) {
            return;
        }
        String contentType = response.headers().get(HttpHeaderNames.CONTENT_TYPE);
        if (code == 401 || code == 403) {
            // Our provider credentials were refused: the caller's key is fine, so never a 401 to them (8.10).
            LOG.warning("upstream " + provider.name() + " refused the provider credentials with " + code);
            mode = Mode.DISCARD;
            return;
        }
        if (code >= 200 && code < 300 && contentType != null
                && contentType.regionMatches(true, 0, "text/event-stream", 0, 17)) {
            mode = Mode.STREAM;
            scanner = new SseEventScanner(ctx.alloc());
            return; // the head goes out with the first event (GD-24)
        }
        mode = Mode.RELAY;
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, upstreamStatus);
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
        HttpResponses.requestId(h, request.requestId());
        HttpUtil.setKeepAlive(head, request.keepAlive());
        headSent = true;
        ctx.write(head);
    }

    private void onContent(HttpContent content) {
        boolean last = content instanceof LastHttpContent;
        switch (mode) {
            case RELAY -> {
                if (last) {
                    ctx.writeAndFlush(new io.netty.handler.codec.http.DefaultLastHttpContent(
                            content.content().retain()));
                    finish(true);
                } else if (content.content().isReadable()) {
                    ctx.write(new DefaultHttpContent(content.content().retain()));
                }
            }
            case STREAM -> {
                scanner.feed(content.content(), this::writeEvent);
                if (last) {
                    ByteBuf rest = scanner.drainRemainder();
                    if (rest != null) {
                        writeEvent(rest);
                    }
                    if (!headSent) {
                        sendStreamHead(); // an empty stream still gets a well-formed response
                    }
                    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    finish(true);
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

    private void writeEvent(ByteBuf event) {
        if (!headSent) {
            sendStreamHead();
        }
        ctx.writeAndFlush(new DefaultHttpContent(event));
    }

    private void sendStreamHead() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        HttpHeaders h = head.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, TEXT_EVENT_STREAM);
        h.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        h.set(X_ACCEL_BUFFERING, "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        HttpResponses.requestId(h, request.requestId());
        HttpUtil.setKeepAlive(head, request.keepAlive());
        headSent = true;
        ctx.write(head);
    }

    @Override
    public void onUpstreamReadComplete() {
        if (!done && mode == Mode.RELAY) {
            ctx.flush();
        }
    }

    @Override
    public void onUpstreamClosed(Throwable cause) {
        if (done) {
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
            Future<Channel> f = pools.acquireFresh(ctx.channel().eventLoop(), provider);
            f.addListener(this::connected);
            return;
        }
        upstream = null;
        if (!headSent) {
            failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                    "The upstream provider closed the connection before the response was complete.", null, null));
        } else if (mode == Mode.STREAM) {
            // GD-10: the style's error event and no terminator ([DONE] / message_stop). The HTTP response
            // itself ends properly, so clients see a readable stream that carries the error, and the client
            // connection stays usable.
            ByteBuf rest = scanner.drainRemainder();
            if (rest != null) {
                rest.release(); // half an event is no event: never hand a client a torn frame
            }
            ByteBuf event = ErrorBodies.streamEvent(ctx.alloc(), request.style(), new GatewayError(
                    ErrorKind.UPSTREAM_ERROR, "Upstream connection lost", null, null));
            ctx.write(new DefaultHttpContent(event));
            ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            finish(false);
        } else {
            ctx.close(); // a non-stream body cut short: closing is the only honest signal left
            finish(false);
        }
    }

    private void failBeforeHead(GatewayError error) {
        if (done) {
            return;
        }
        HttpResponses.sendError(ctx, request.style(), error, request.requestId(), request.keepAlive());
        finish(mode == Mode.DISCARD);
    }

    // ------------------------------------------------------------------ client side

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (upstream != null && !done) {
            upstream.config().setAutoRead(writable);
        }
    }

    @Override
    public void cancel() {
        if (done) {
            return;
        }
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            UpstreamResponseReceiver receiver = (UpstreamResponseReceiver) u.pipeline().get(PipelineNames.UPSTREAM_RECEIVER);
            if (receiver != null) {
                receiver.listener(null);
            }
            u.close(); // the provider stops generating (and billing) now
        }
        finish(false);
    }

    /** Ends the exchange once: the upstream connection goes back to the pool only after a clean, complete answer. */
    private void finish(boolean clean) {
        if (done) {
            return;
        }
        done = true;
        if (scanner != null) {
            scanner.release();
        }
        if (upstreamBody != null) {
            upstreamBody.release();
            upstreamBody = null;
        }
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            if (clean && upstreamKeepAlive) {
                pools.release(u);
            } else {
                UpstreamResponseReceiver receiver = (UpstreamResponseReceiver) u.pipeline().get(PipelineNames.UPSTREAM_RECEIVER);
                if (receiver != null) {
                    receiver.listener(null);
                }
                u.close();
            }
        }
        onDone.run();
    }

    private static void copy(HttpHeaders from, HttpHeaders to, CharSequence name) {
        String v = from.get(name);
        if (v != null) {
            to.set(name, v);
        }
    }
}
