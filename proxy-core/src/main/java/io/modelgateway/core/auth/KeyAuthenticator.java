package io.modelgateway.core.auth;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
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
import java.util.Arrays;
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

    private static final FastThreadLocal<Presented> PRESENTED = new FastThreadLocal<>() {
        @Override
        protected Presented initialValue() {
            return new Presented();
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
        Presented p = PRESENTED.get();
        try {
            // Each credential is found as a region of its header's value (trimmed, "Bearer " cut off): no String
            // is made of a key on the common path, one line of one of the two headers.
            GatewayError conflict = p.bearer.find(h, HttpHeaderNames.AUTHORIZATION, true,
                    "two Authorization headers carry different keys");
            if (conflict == null) {
                conflict = p.apiKey.find(h, X_API_KEY, false, "two x-api-key headers carry different keys");
            }
            if (conflict != null) {
                return conflict;
            }
            boolean anthropic = request.style() == ApiStyle.ANTHROPIC;
            if (p.bearer.value == null && p.apiKey.value == null) {
                return new GatewayError(ErrorKind.AUTHENTICATION, anthropic
                        ? "x-api-key header is required"
                        : "You didn't provide an API key. Provide it in the Authorization header (Bearer <key>).",
                        null, "missing_api_key");
            }
            if (p.bearer.value != null && p.apiKey.value != null && !p.bearer.same(p.apiKey)) {
                return conflict("Authorization and x-api-key carry different keys");
            }
            KeyConfig key = request.config().findKey(p.sha256(p.bearer.value != null ? p.bearer : p.apiKey));
            if (key == null) {
                return new GatewayError(ErrorKind.AUTHENTICATION, anthropic ? "invalid x-api-key"
                        : "Incorrect API key provided.", null, "invalid_api_key");
            }
            request.key(key);
            return null;
        } finally {
            p.clear();
        }
    }

    private static GatewayError conflict(String what) {
        return new GatewayError(ErrorKind.AUTHENTICATION, "Conflicting credentials: " + what + ".", null,
                "invalid_api_key");
    }

    /** The first index from {@code start} whose char is not one {@link String#trim()} removes. */
    private static int trimStart(CharSequence v, int start, int end) {
        while (start < end && v.charAt(start) <= ' ') {
            start++;
        }
        return start;
    }

    /** The end of {@code v[start, end)} without what {@link String#trim()} removes at its end. */
    private static int trimEnd(CharSequence v, int start, int end) {
        while (end > start && v.charAt(end - 1) <= ' ') {
            end--;
        }
        return end;
    }

    /**
     * One event loop's scratch for hashing a presented key: its UTF-8 bytes and its SHA-256, both zeroed after each
     * check (the key's bytes do not linger in a reused array), neither kept by the key lookup.
     */
    private static final class Presented {
        /** Keys up to this many bytes are encoded into the reused array; a longer one (rare, hostile) gets its own. */
        private static final int REUSED_BYTES = 256;

        /** The key of the Authorization lines, and of the x-api-key lines (null value: none). */
        final Region bearer = new Region();
        final Region apiKey = new Region();
        private final MessageDigest md;
        private final byte[] bytes = new byte[REUSED_BYTES];
        private final byte[] hash = new byte[32];
        private int used;

        Presented() {
            try {
                md = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e); // every Java runtime has SHA-256
            }
        }

        /** The SHA-256 of the UTF-8 bytes of {@code key}, as {@code String.getBytes(UTF_8)} encodes them. */
        byte[] sha256(Region key) {
            CharSequence v = key.value;
            int start = key.start;
            int end = key.end;
            int n = end - start;
            if (n <= REUSED_BYTES) {
                int i = 0;
                while (i < n) {
                    char c = v.charAt(start + i);
                    if (c >= 0x80) {
                        break;
                    }
                    bytes[i++] = (byte) c;
                }
                used = i;
                if (i == n) {
                    md.update(bytes, 0, n);
                    return digest();
                }
            }
            // Not ASCII, or long: String's own encoder (unpaired surrogates and all).
            md.update(v.subSequence(start, end).toString().getBytes(StandardCharsets.UTF_8));
            return digest();
        }

        private byte[] digest() {
            try {
                md.digest(hash, 0, hash.length);
            } catch (java.security.DigestException e) {
                throw new IllegalStateException(e); // the array holds a SHA-256
            }
            return hash;
        }

        void clear() {
            bearer.value = null;
            apiKey.value = null;
            Arrays.fill(bytes, 0, used, (byte) 0);
            Arrays.fill(hash, (byte) 0);
            used = 0;
            md.reset();
        }
    }

    /** Where a credential is: {@code value[start, end)}, or no value. */
    private static final class Region {
        CharSequence value;
        int start;
        int end;

        /**
         * Reads the lines of {@code name} (trimmed; with {@code bearerScheme}, a leading "Bearer " cut off, else the
         * bare value is the key and fails like any wrong key); empty ones count as absent. Two different keys:
         * the conflict, {@code twoKeys}; else null, with the key here (or no value).
         */
        GatewayError find(HttpHeaders h, CharSequence name, boolean bearerScheme, String twoKeys) {
            value = null;
            for (int at = ArrayHttpHeaders.nextValue(h, name, 0); at >= 0;
                    at = ArrayHttpHeaders.nextValue(h, name, at + 1)) {
                CharSequence v = ArrayHttpHeaders.valueAt(h, name, at);
                int s = trimStart(v, 0, v.length());
                int e = trimEnd(v, s, v.length());
                if (bearerScheme && e - s > 7 && AsciiString.regionMatches(v, true, s, "Bearer ", 0, 7)) {
                    s = trimStart(v, s + 7, e);
                    e = trimEnd(v, s, e);
                }
                if (s == e) {
                    continue;
                }
                if (value != null && !same(v, s, e)) {
                    return conflict(twoKeys);
                }
                value = v;
                start = s;
                end = e;
            }
            return null;
        }

        boolean same(Region o) {
            return same(o.value, o.start, o.end);
        }

        private boolean same(CharSequence b, int bStart, int bEnd) {
            if (end - start != bEnd - bStart) {
                return false;
            }
            for (int i = 0; i < end - start; i++) {
                if (value.charAt(start + i) != b.charAt(bStart + i)) {
                    return false;
                }
            }
            return true;
        }
    }
}
