package io.modelgateway.core.server;

import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.exchange.Exchanges;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.modelgateway.core.exchange.ApiPaths;

import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.observe.ResponseObserver;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * First handler after the codec: turns each aggregated {@link FullHttpRequest} into a {@link GatewayRequest}
 * for the three endpoints and the model list, answers health and readiness itself, and answers 400 / 404 /
 * 405 (with {@code Allow}) / 431 / 505 for what is not an API call (a head the codec or the
 * {@link RequestHeadValidator} refused arrives here as a decoder failure, answered and then closed). Releases every request it answers; passes the rest on (ownership
 * moves with the message).
 */
@ChannelHandler.Sharable
public final class RequestRouter extends ChannelInboundHandlerAdapter {
    static final String MODELS_PATH = "/api/v1/models";
    private static final byte[] HEALTH_OK = "{\"status\":\"ok\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READY = "{\"status\":\"ready\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_READY = "{\"status\":\"draining\"}".getBytes(StandardCharsets.US_ASCII);

    private final Supplier<GatewayConfig> config;
    private final BooleanSupplier ready;
    private final Exchanges exchanges;

    /**
     * @param config    the current config; each request is served under the one it finds here
     * @param ready     whether {@code /ready} says ready (false while draining)
     * @param exchanges counts the requests in progress, against {@code server.max_concurrent_requests}
     */
    public RequestRouter(Supplier<GatewayConfig> config, BooleanSupplier ready, Exchanges exchanges) {
        this.config = config;
        this.ready = ready;
        this.exchanges = exchanges;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        long start = System.nanoTime();
        boolean forwarded = false;
        try {
            String requestId = Ids.requestId();
            String path = ApiPaths.path(request.uri());
            ApiStyle style = ApiPaths.styleForPath(path);
            DecoderResult result = request.decoderResult();
            if (result.isFailure()) {
                badHttp(ctx, result.cause(), style, requestId);
                return;
            }
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            HttpMethod method = request.method();
            if (path.equals("/health") || path.equals("/ready")) {
                if (method != HttpMethod.GET && method != HttpMethod.HEAD) {
                    HttpResponses.methodNotAllowed(ctx, style, requestId, keepAlive, "GET, HEAD");
                    return;
                }
                boolean ok = path.equals("/health") || ready.getAsBoolean();
                byte[] body = path.equals("/health") ? HEALTH_OK : (ok ? READY : NOT_READY);
                HttpResponses.sendJson(ctx, ok ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                        Unpooled.wrappedBuffer(body), requestId, keepAlive);
                return;
            }
            if (method == HttpMethod.HEAD && (path.equals("/") || path.equals("/api"))) {
                // Claude Code's start-up probe of a gateway's base URL: 200, no body, no key needed.
                HttpResponses.sendJson(ctx, HttpResponseStatus.OK, Unpooled.EMPTY_BUFFER, requestId, keepAlive);
                return;
            }
            Endpoint endpoint = Endpoint.forPath(path);
            if (endpoint == null && !path.equals(MODELS_PATH)) {
                HttpResponses.sendError(ctx, style, new GatewayError(ErrorKind.NOT_FOUND,
                        "Unknown path: " + truncate(path) + ".", null, "not_found"), requestId, keepAlive);
                return;
            }
            HttpMethod expected = endpoint == null ? HttpMethod.GET : HttpMethod.POST;
            if (!method.equals(expected)) {
                HttpResponses.methodNotAllowed(ctx, style, requestId, keepAlive, expected.name());
                return;
            }
            GatewayConfig cfg = config.get();
            if (!exchanges.tryStart(cfg.server().maxConcurrentExchanges())) {
                HttpResponses.sendError(ctx, style, new GatewayError(ErrorKind.OVERLOADED,
                        "The gateway is at its limit of concurrent requests; retry shortly.", null, null),
                        requestId, keepAlive);
                return;
            }
            GatewayRequest gr = new GatewayRequest(request, endpoint, style, requestId, keepAlive, start);
            gr.config(cfg);
            exchanges.begin(gr);
            ResponseObserver responses = (ResponseObserver) ctx.pipeline().get(PipelineNames.RESPONSE_OBSERVER);
            if (responses != null) {
                responses.expect(gr.record());
            }
            forwarded = true;
            ctx.fireChannelRead(gr);
        } finally {
            if (!forwarded) {
                request.release();
            }
        }
    }

    private static void badHttp(ChannelHandlerContext ctx, Throwable cause, ApiStyle style, String requestId) {
        GatewayError error;
        if (cause instanceof RequestHeadValidator.Refusal refusal) {
            error = refusal.error(); // a 505, or a 400 for the Host header
        } else if (cause instanceof TooLongHttpHeaderException) {
            error = new GatewayError(ErrorKind.HEADERS_TOO_LARGE, "Request headers are too large.", null, null);
        } else if (cause instanceof TooLongHttpLineException || cause instanceof TooLongFrameException) {
            error = GatewayError.invalid("The request line is too long.", null, "invalid_request");
        } else {
            error = GatewayError.invalid("Malformed HTTP request.", null, "invalid_request");
        }
        // The byte stream can no longer be trusted: answer and close.
        HttpResponses.sendError(ctx, style, error, requestId, false);
    }

    private static String truncate(String s) {
        return s.length() > 128 ? s.substring(0, 128) + "…" : s;
    }
}
