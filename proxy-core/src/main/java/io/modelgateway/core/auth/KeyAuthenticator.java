package io.modelgateway.core.auth;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.RequestStep;
import io.netty.channel.ChannelHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.Iterator;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;

/**
 * Authenticates the gateway key of every {@link GatewayRequest} (contract 2.1, GD-1): both
 * {@code Authorization: Bearer} and {@code x-api-key} are accepted on every endpoint; none, an unknown key, or
 * two different keys answer 401 in the caller's style. "Two different keys" counts every credential header line:
 * two {@code Authorization} (or two {@code x-api-key}) lines with different keys are refused like
 * {@code Authorization} ≠ {@code x-api-key}, rather than one of them winning silently (a component in front that
 * picks the other would then disagree with the gateway about who is calling). The same key repeated names one
 * caller and passes. Empty values count as absent. A known key is attached to the request, which is passed
 * on; a refused request is released here. The key itself is never logged or echoed; only its SHA-256 is
 * compared, in constant time, against the configured hashes. A key with {@code client_cert_subject} is accepted only
 * on a connection whose client certificate (verified in the TLS handshake) has that subject; else 401.
 */
@ChannelHandler.Sharable
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

    /**
     * As {@link #check}, then, for a key bound to a client certificate subject, the connection's certificate (verified
     * in the handshake against {@code tls.client_ca_file}) must be there and have that subject.
     */
    @Override
    protected void decide(ChannelHandlerContext ctx, GatewayRequest request) {
        GatewayError error = check(request);
        if (error == null && request.key() != null && request.key().clientCertSubject() != null) {
            error = certificateBound(ctx.channel(), request.key().clientCertSubject());
        }
        proceed(ctx, request, error);
    }

    /** Null when the connection's verified client certificate has {@code subject}; else the 401. */
    private static GatewayError certificateBound(Channel ch, X500Principal subject) {
        X500Principal presented = peerSubject(ch);
        if (presented == null) {
            return new GatewayError(ErrorKind.AUTHENTICATION, "This API key must be used with its client "
                    + "certificate; the connection presented none.", null, "invalid_api_key");
        }
        if (!presented.equals(subject)) {
            return new GatewayError(ErrorKind.AUTHENTICATION, "This API key is bound to another client "
                    + "certificate than the one the connection presented.", null, "invalid_api_key");
        }
        return null;
    }

    /** The subject of the client certificate of {@code ch}'s TLS connection (an HTTP/2 stream's: its parent's). */
    private static X500Principal peerSubject(Channel ch) {
        Channel c = ch;
        SslHandler tls = c.pipeline().get(SslHandler.class);
        while (tls == null && c.parent() != null) {
            c = c.parent();
            tls = c.pipeline().get(SslHandler.class);
        }
        if (tls == null) {
            return null;
        }
        try {
            java.security.cert.Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? leaf.getSubjectX500Principal() : null;
        } catch (SSLPeerUnverifiedException none) {
            return null;
        }
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
