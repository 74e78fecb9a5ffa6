package io.modelgateway.core.auth;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.RequestStep;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Iterator;

/**
 * Authenticates the gateway key of every {@link GatewayRequest} (contract 2.1, GD-1): both
 * {@code Authorization: Bearer} and {@code x-api-key} are accepted on every endpoint; none, an unknown key, or
 * two different keys answer 401 in the caller's style. "Two different keys" counts every credential header line:
 * two {@code Authorization} (or two {@code x-api-key}) lines with different keys are refused like
 * {@code Authorization} ≠ {@code x-api-key}, rather than one of them winning silently (a component in front that
 * picks the other would then disagree with the gateway about who is calling). The same key repeated names one
 * caller and passes. Empty values count as absent. A known key is attached to the request, which is passed
 * on; a refused request is released here. The key itself is never logged or echoed; only its SHA-256 is
 * compared, in constant time, against the configured hashes.
 */
public final class KeyAuthenticator extends RequestStep {
    public static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");

    private static final FastThreadLocal<MessageDigest> SHA256 = new FastThreadLocal<>() {
        @Override
        protected MessageDigest initialValue() throws NoSuchAlgorithmException {
            return MessageDigest.getInstance("SHA-256");
        }
    };

    public KeyAuthenticator(Exchanges exchanges) {
        super(exchanges);
    }

    /** The model list needs a key too (it lists the models that key may use). */
    @Override
    protected boolean checksModelList() {
        return true;
    }

    @Override
    protected GatewayError check(GatewayRequest request) {
        HttpHeaders h = request.headers();
        String bearer = null;
        for (Iterator<String> it = h.valueStringIterator(HttpHeaderNames.AUTHORIZATION); it.hasNext(); ) {
            String b = bearer(it.next());
            if (isEmpty(b)) {
                continue;
            }
            if (bearer != null && !bearer.equals(b)) {
                return conflict("two Authorization headers carry different keys");
            }
            bearer = b;
        }
        String apiKey = null;
        for (Iterator<String> it = h.valueStringIterator(X_API_KEY); it.hasNext(); ) {
            String k = it.next().trim();
            if (k.isEmpty()) {
                continue;
            }
            if (apiKey != null && !apiKey.equals(k)) {
                return conflict("two x-api-key headers carry different keys");
            }
            apiKey = k;
        }
        boolean anthropic = request.style() == ApiStyle.ANTHROPIC;
        if (bearer == null && apiKey == null) {
            return new GatewayError(ErrorKind.AUTHENTICATION, anthropic
                    ? "x-api-key header is required"
                    : "You didn't provide an API key. Provide it in the Authorization header (Bearer <key>).",
                    null, "missing_api_key");
        }
        if (bearer != null && apiKey != null && !bearer.equals(apiKey)) {
            return conflict("Authorization and x-api-key carry different keys");
        }
        String presented = bearer == null ? apiKey : bearer;
        MessageDigest md = SHA256.get();
        byte[] hash = md.digest(presented.getBytes(StandardCharsets.UTF_8));
        KeyConfig key = request.config().findKey(hash);
        if (key == null) {
            return new GatewayError(ErrorKind.AUTHENTICATION, anthropic ? "invalid x-api-key"
                    : "Incorrect API key provided.", null, "invalid_api_key");
        }
        request.key(key);
        return null;
    }

    private static GatewayError conflict(String what) {
        return new GatewayError(ErrorKind.AUTHENTICATION, "Conflicting credentials: " + what + ".", null,
                "invalid_api_key");
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
