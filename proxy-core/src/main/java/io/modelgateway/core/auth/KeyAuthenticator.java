package io.modelgateway.core.auth;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.server.HttpResponses;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Authenticates the gateway key of every {@link GatewayRequest} (API-CONTRACT 2.1, GD-1): both
 * {@code Authorization: Bearer} and {@code x-api-key} are accepted on every endpoint; none, an unknown key, or
 * two different keys answer 401 in the caller's style. A known key is attached to the request, which is passed
 * on; a refused request is released here. The key itself is never logged or echoed; only its SHA-256 is
 * compared, in constant time, against the configured hashes.
 */
public final class KeyAuthenticator extends ChannelInboundHandlerAdapter {
    public static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");

    private static final FastThreadLocal<MessageDigest> SHA256 = new FastThreadLocal<>() {
        @Override
        protected MessageDigest initialValue() throws NoSuchAlgorithmException {
            return MessageDigest.getInstance("SHA-256");
        }
    };

    private final GatewayContext gateway;

    public KeyAuthenticator(GatewayContext gateway) {
        this.gateway = gateway;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GatewayRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        GatewayError error = authenticate(request);
        if (error == null) {
            ctx.fireChannelRead(request);
            return;
        }
        try {
            HttpResponses.sendError(ctx, request, error, null);
        } finally {
            gateway.end(request, io.modelgateway.core.observe.Outcome.REJECTED);
            request.release();
        }
    }

    private GatewayError authenticate(GatewayRequest request) {
        HttpHeaders h = request.headers();
        String bearer = bearer(h.get(HttpHeaderNames.AUTHORIZATION));
        String apiKey = h.get(X_API_KEY);
        if (apiKey != null) {
            apiKey = apiKey.trim();
        }
        boolean anthropic = request.style() == ApiStyle.ANTHROPIC;
        if (isEmpty(bearer) && isEmpty(apiKey)) {
            return new GatewayError(ErrorKind.AUTHENTICATION, anthropic
                    ? "x-api-key header is required"
                    : "You didn't provide an API key. Provide it in the Authorization header (Bearer <key>).",
                    null, "missing_api_key");
        }
        if (!isEmpty(bearer) && !isEmpty(apiKey) && !bearer.equals(apiKey)) {
            return new GatewayError(ErrorKind.AUTHENTICATION,
                    "Conflicting credentials: Authorization and x-api-key carry different keys.", null,
                    "invalid_api_key");
        }
        String presented = isEmpty(bearer) ? apiKey : bearer;
        MessageDigest md = SHA256.get();
        byte[] hash = md.digest(presented.getBytes(StandardCharsets.UTF_8));
        KeyConfig key = gateway.config().findKey(hash);
        if (key == null) {
            return new GatewayError(ErrorKind.AUTHENTICATION, anthropic ? "invalid x-api-key"
                    : "Incorrect API key provided.", null, "invalid_api_key");
        }
        request.key(key);
        return null;
    }

    private static String bearer(String authorization) {
        if (authorization == null) {
            return null;
        }
        String a = authorization.trim();
        if (a.length() > 7 && a.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return a.substring(7).trim();
        }
        return a.isEmpty() ? null : a; // a bare value is treated as the key, and fails like any wrong key
    }

    private static boolean isEmpty(String s) {
        return s == null || s.isEmpty();
    }
}
