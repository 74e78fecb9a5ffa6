package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The last handler of the {@link SimulatorServer} pipeline, after {@code HttpServerCodec} and
 * {@code HttpObjectAggregator}: routes each {@link FullHttpRequest} (the upstream paths
 * {@code /v1/chat/completions}, {@code /v1/embeddings}, {@code /v1/messages}, and {@code /health}),
 * checks the API key, asks the {@link SimulatorEngine}, and hands the answer to a
 * {@link SimulatedResponseWriter}.
 *
 * <p>Ownership: this handler releases every request it receives, right after answering it (the
 * observer sees it first and must not keep it). One answer at a time per connection: requests
 * pipelined behind a running answer wait in {@link #waiting}, with auto-read off so the queue stays short.
 */
final class SimulatorHandler extends ChannelInboundHandlerAdapter {

    static final String NAME = "simulator";

    private static final byte[] HEALTH = "{\"status\":\"ok\"}".getBytes(StandardCharsets.US_ASCII);

    private final SimulatorEngine engine;
    private final byte[] apiKey;
    private final Consumer<FullHttpRequest> observer;

    // Event-loop confined, like every handler field: no locks.
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    private SimulatedResponseWriter current;

    SimulatorHandler(SimulatorEngine engine, String requiredApiKey, Consumer<FullHttpRequest> observer) {
        this.engine = engine;
        this.apiKey = requiredApiKey == null ? null : requiredApiKey.getBytes(StandardCharsets.UTF_8);
        this.observer = observer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (current != null) {
            waiting.add(request.touch("simulator: queued behind a running answer"));
            ctx.channel().config().setAutoRead(false);
            return;
        }
        serve(ctx, request);
    }

    private void serve(ChannelHandlerContext ctx, FullHttpRequest request) {
        SimulatedResponse response;
        boolean keepAlive;
        try {
            keepAlive = HttpUtil.isKeepAlive(request) && request.decoderResult().isSuccess();
            if (observer != null) {
                observer.accept(request);
            }
            response = answer(request);
        } finally {
            request.release();
        }
        current = new SimulatedResponseWriter(ctx, response, keepAlive, () -> next(ctx));
        current.start();
    }

    /** The current answer is complete and the connection stays open. */
    private void next(ChannelHandlerContext ctx) {
        current = null;
        FullHttpRequest queued = waiting.poll();
        if (queued != null) {
            serve(ctx, queued);
        } else {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private SimulatedResponse answer(FullHttpRequest request) {
        String uri = request.uri();
        int query = uri.indexOf('?');
        String path = query < 0 ? uri : uri.substring(0, query);
        ApiStyle style = path.startsWith("/v1/messages") ? ApiStyle.ANTHROPIC : ApiStyle.OPENAI;
        if (request.decoderResult().isFailure()) {
            return SimErrors.response(style, 400, "The request could not be decoded as HTTP.", null, null, 0, -1);
        }
        if ("/health".equals(path)) {
            return HttpMethod.GET.equals(request.method())
                    ? SimulatedResponse.full(200, Map.of(), 0, HEALTH)
                    : SimErrors.response(style, 405, "Use GET on /health.", null, null, 0, -1).withHeader("allow", "GET");
        }
        Endpoint endpoint = switch (path) {
            case "/v1/chat/completions" -> Endpoint.CHAT_COMPLETIONS;
            case "/v1/embeddings" -> Endpoint.EMBEDDINGS;
            case "/v1/messages" -> Endpoint.MESSAGES;
            case "/v1/messages/count_tokens" -> Endpoint.COUNT_TOKENS;
            case "/v1/responses" -> Endpoint.RESPONSES;
            case "/v1/responses/input_tokens" -> Endpoint.RESPONSES_INPUT_TOKENS;
            default -> null;
        };
        if (endpoint == null) {
            return SimErrors.response(style, 404, "Unknown path " + path + ".", null, null, 0, -1);
        }
        if (!HttpMethod.POST.equals(request.method())) {
            return SimErrors.response(style, 405, "Use POST on " + path + ".", null, null, 0, -1)
                    .withHeader("allow", "POST");
        }
        SimulatedResponse denied = authenticate(request.headers(), style);
        if (denied != null) {
            return denied;
        }
        ByteBuf content = request.content();
        HttpHeaders headers = request.headers();
        try {
            if (content.hasArray()) {
                return engine.answer(endpoint, content.array(), content.arrayOffset() + content.readerIndex(),
                        content.readableBytes(), headers::get);
            }
            byte[] body = ByteBufUtil.getBytes(content);
            return engine.answer(endpoint, body, 0, body.length, headers::get);
        } catch (RuntimeException e) {
            // A simulator bug must still look like a provider error, not a dropped connection.
            return SimErrors.response(style, 500, "The simulator failed: " + e, null, null, 0, -1);
        }
    }

    /** Null when the key matches (or none is required); otherwise the 401 to send. */
    private SimulatedResponse authenticate(HttpHeaders headers, ApiStyle style) {
        if (apiKey == null) {
            return null;
        }
        String presented = null;
        String authorization = headers.get(HttpHeaderNames.AUTHORIZATION);
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            presented = authorization.substring(7).trim();
        }
        if (presented == null && style == ApiStyle.ANTHROPIC) {
            presented = headers.get("x-api-key");
        }
        if (presented == null) {
            return style == ApiStyle.ANTHROPIC
                    ? SimErrors.response(style, 401, "x-api-key header is required", null, null, 0, -1)
                    : SimErrors.response(style, 401, "You didn't provide an API key. Send it as 'Authorization: Bearer KEY'.",
                    null, "missing_api_key", 0, -1);
        }
        if (!MessageDigest.isEqual(apiKey, presented.getBytes(StandardCharsets.UTF_8))) {
            return style == ApiStyle.ANTHROPIC
                    ? SimErrors.response(style, 401, "invalid x-api-key", null, null, 0, -1)
                    : SimErrors.response(style, 401, "Incorrect API key provided.", null, "invalid_api_key", 0, -1);
        }
        return null;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (current != null && ctx.channel().isWritable()) {
            current.resume();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (current != null) {
            current.cancel();
            current = null;
        }
        FullHttpRequest queued;
        while ((queued = waiting.poll()) != null) {
            queued.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
