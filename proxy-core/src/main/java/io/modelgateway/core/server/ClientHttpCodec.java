package io.modelgateway.core.server;

import io.modelgateway.core.auth.KeyAuthenticator;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.SharedNames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.util.AsciiString;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.1 codec of a client connection: Netty's request decoder and response encoder joined the way Netty's
 * {@code HttpServerCodec} joins them — the decoder notes each request's method, and the encoder gives the answer to
 * a {@code HEAD} no body and drops {@code Transfer-Encoding} from a 2xx to a {@code CONNECT} — with three differences
 * in the objects a request is made of, none in what it holds:
 * <ul>
 *   <li>a header name that clients commonly send, spelled exactly as in {@link #SHARED_NAMES}, is that one shared
 *       {@link AsciiString} instead of a new one (and a copy of its bytes) per name per request. Netty's decoder
 *       shares only {@code Host}, {@code Accept}, {@code Connection}, {@code Content-Type} and
 *       {@code Content-Length}, spelled so; the official SDKs send their names in lower case, a dozen of them per
 *       request (proxy-bench/README.md, issue #13);</li>
 *   <li>a request target spelled as the last one on the connection is that same String;</li>
 *   <li>a request's headers are an {@link ArrayHttpHeaders} with room for as many as the last request on the
 *       connection had, so that it is one array of the right size.</li>
 * </ul>
 * Which names a request carries, their spelling and their values are exactly what Netty's decoder reads.
 */
public final class ClientHttpCodec extends CombinedChannelDuplexHandler<HttpRequestDecoder, HttpResponseEncoder> {
    /** The names shared, as clients spell them: the SDKs' lower case, and the usual capitalised forms. */
    static final AsciiString[] SHARED_NAMES = {
            HttpHeaderNames.HOST, HttpHeaderNames.CONTENT_TYPE, HttpHeaderNames.CONTENT_LENGTH,
            HttpHeaderNames.AUTHORIZATION, KeyAuthenticator.X_API_KEY, HttpHeaderNames.ACCEPT,
            HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderNames.ACCEPT_LANGUAGE, HttpHeaderNames.USER_AGENT,
            HttpHeaderNames.CONNECTION, HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.EXPECT, HttpHeaderNames.TE, HttpHeaderNames.ORIGIN, HttpHeaderNames.REFERER,
            AsciiString.cached("anthropic-version"), AsciiString.cached("anthropic-beta"),
            AsciiString.cached("openai-organization"), AsciiString.cached("openai-project"),
            AsciiString.cached("openai-beta"), AsciiString.cached("idempotency-key"),
            AsciiString.cached("x-request-id"), AsciiString.cached("traceparent"), AsciiString.cached("tracestate"),
            AsciiString.cached("x-stainless-lang"), AsciiString.cached("x-stainless-package-version"),
            AsciiString.cached("x-stainless-os"), AsciiString.cached("x-stainless-arch"),
            AsciiString.cached("x-stainless-runtime"), AsciiString.cached("x-stainless-runtime-version"),
            AsciiString.cached("x-stainless-retry-count"), AsciiString.cached("x-stainless-timeout"),
            AsciiString.cached("x-stainless-async"), AsciiString.cached("x-stainless-helper-method"),
            AsciiString.cached("x-stainless-raw-response"), AsciiString.cached("x-stainless-poll-helper"),
            AsciiString.cached("Authorization"), AsciiString.cached("Accept-Encoding"),
            AsciiString.cached("User-Agent"), AsciiString.cached("X-Api-Key"), AsciiString.cached("Transfer-Encoding"),
            AsciiString.cached("Expect"), AsciiString.cached("Accept-Language"), AsciiString.cached("Keep-Alive"),
            AsciiString.cached("Anthropic-Version"), AsciiString.cached("Idempotency-Key"),
            AsciiString.cached("X-Request-Id"), AsciiString.cached("Origin"),
    };

    private static final SharedNames SHARED = new SharedNames(SHARED_NAMES);

    /** The methods of the requests decoded and not answered yet, oldest first (pipelined requests queue here). */
    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(2);

    /**
     * How many headers the last request on this connection had: the next one gets an array that size (a client sends
     * about the same head each time, and a dozen or more for the SDKs, past the first capacity of a head).
     */
    private int lastHeaderCount = 12;

    /**
     * {@code config}'s heads are made here, as {@link ArrayHttpHeaders#validating} heads sized to the connection's
     * last request; its other settings are used as they are.
     */
    public ClientHttpCodec(HttpDecoderConfig config) {
        HttpHeadersFactory heads = new HttpHeadersFactory() {
            @Override
            public HttpHeaders newHeaders() {
                return ArrayHttpHeaders.validating(lastHeaderCount);
            }

            @Override
            public HttpHeaders newEmptyHeaders() {
                return ArrayHttpHeaders.validating(0);
            }
        };
        init(new Decoder(config.clone().setHeadersFactory(heads)), new Encoder());
    }

    /** The shared name spelled as {@code line[start, start + length)}, or null. */
    static AsciiString sharedName(byte[] line, int start, int length) {
        return SHARED.find(line, start, length);
    }

    /** Whether {@code s} is {@code b[start, start + length)} read as ISO-8859-1 (as Netty's decoder reads a line). */
    static boolean spells(String s, byte[] b, int start, int length) {
        if (s.length() != length) {
            return false;
        }
        for (int k = 0; k < length; k++) {
            if (s.charAt(k) != (char) (b[start + k] & 0xff)) {
                return false;
            }
        }
        return true;
    }

    private final class Decoder extends HttpRequestDecoder {
        /** The request target of the last request read, or null. */
        private String lastTarget;

        Decoder(HttpDecoderConfig config) {
            super(config);
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            int before = out.size();
            super.decode(ctx, buffer, out);
            for (int i = before; i < out.size(); i++) {
                if (out.get(i) instanceof HttpRequest r) {
                    methods.add(r.method());
                    lastHeaderCount = r.headers().size();
                }
            }
        }

        /**
         * The request target: the last one read on this connection when it is spelled the same (a client sends one
         * path over and over), else a new String of it, as Netty's decoder makes.
         */
        @Override
        protected String splitSecondWordInitialLine(byte[] sb, int start, int length) {
            String last = lastTarget;
            if (last != null && spells(last, sb, start, length)) {
                return last;
            }
            return lastTarget = super.splitSecondWordInitialLine(sb, start, length);
        }

        @Override
        protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
            AsciiString shared = sharedName(sb, start, length);
            return shared != null ? shared : super.splitHeaderName(sb, start, length);
        }
    }

    private final class Encoder extends HttpResponseEncoder {
        /** The method of the request the response being encoded answers. */
        private HttpMethod method;

        @Override
        protected boolean isContentAlwaysEmpty(HttpResponse msg) {
            method = methods.poll();
            return HttpMethod.HEAD.equals(method) || super.isContentAlwaysEmpty(msg);
        }

        @Override
        protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
            if (!isAlwaysEmpty && HttpMethod.CONNECT.equals(method)
                    && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
                // A 2xx to CONNECT switches to a tunnel: it has no framing of its own (RFC 9112 section 6.1).
                msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
                return;
            }
            super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
        }
    }
}
