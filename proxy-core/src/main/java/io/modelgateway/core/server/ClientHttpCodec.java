package io.modelgateway.core.server;

import io.modelgateway.core.auth.KeyAuthenticator;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.HeadBytes;
import io.modelgateway.core.exchange.SharedNames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
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
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.StringUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;

/**
 * The HTTP/1.1 codec of a client connection: Netty's request decoder and response encoder joined the way Netty's
 * {@code HttpServerCodec} joins them — the decoder notes each request's method, and the encoder gives the answer to
 * a {@code HEAD} no body and drops {@code Transfer-Encoding} from a 2xx to a {@code CONNECT} — with five differences
 * in the objects a request is made of, none in what it holds:
 * <ul>
 *   <li>a header name that clients commonly send, spelled exactly as in {@link #SHARED_NAMES}, is that one shared
 *       {@link AsciiString} instead of a new one (and a copy of its bytes) per name per request. Netty's decoder
 *       shares only {@code Host}, {@code Accept}, {@code Connection}, {@code Content-Type} and
 *       {@code Content-Length}, spelled so; the official SDKs send their names in lower case, a dozen of them per
 *       request (proxy-bench/README.md, issue #13);</li>
 *   <li>a request target spelled as the last one on the connection is that same String;</li>
 *   <li>a name not shared, spelled as the one in its place among the last head's unshared names, is that same
 *       {@link AsciiString} (a client's own headers, sent in the same order on each request);</li>
 *   <li>a request's headers are an {@link ArrayHttpHeaders} with room for as many as the last request on the
 *       connection had, so that it is one array of the right size;</li>
 *   <li>a request that is whole in one read and plain is read by the decoder's own fast path into the objects
 *       Netty's decoder makes of it, and a header value spelled as the one in its place in the last head read so
 *       is that same String (anything else is Netty's decoder's; {@code Decoder#whole} says what is plain).</li>
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

    /** How many lines a head may have to be read by the decoder's fast path (more go to Netty's decoder). */
    private static final int MAX_FAST_LINES = 64;
    private static final byte[] CONTENT_LENGTH = "content-length".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding".getBytes(StandardCharsets.US_ASCII);
    /** The bytes of an HTTP token (RFC 9110 section 5.6.2). */
    private static final boolean[] TCHAR = new boolean[256];

    static {
        for (int c = '0'; c <= '9'; c++) {
            TCHAR[c] = true;
        }
        for (int c = 'a'; c <= 'z'; c++) {
            TCHAR[c] = true;
            TCHAR[c - 32] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TCHAR[c] = true;
        }
    }

    /** Whether {@code h[start, end)} is {@code lower}, ignoring the case of its letters. */
    private static boolean named(byte[] h, int start, int end, byte[] lower) {
        if (end - start != lower.length) {
            return false;
        }
        for (int k = 0; k < lower.length; k++) {
            int b = h[start + k];
            if ((b >= 'A' && b <= 'Z' ? b + 32 : b) != lower[k]) {
                return false;
            }
        }
        return true;
    }

    /** {@code h[start, end)} as a length written plainly (one to nine digits, no leading zero but in 0), else -1. */
    private static long digits(byte[] h, int start, int end) {
        if (end == start || end - start > 9 || (h[start] == '0' && end - start > 1)) {
            return -1;
        }
        long v = 0;
        for (int k = start; k < end; k++) {
            if (h[k] < '0' || h[k] > '9') {
                return -1;
            }
            v = 10 * v + (h[k] - '0');
        }
        return v;
    }

    /** The longest head copy a thread keeps for the next one, and the longest value or name a connection remembers. */
    private static final int KEPT_HEAD = 2048;
    private static final int KEPT_VALUE = 256;

    /**
     * What {@code Decoder#whole} reads a head into: the head's bytes, where each line starts and where each header
     * line's colon is. Nothing made of a head refers to these (Netty's methods copy what they make), so they are
     * one set per thread — a decoder reads on its connection's event loop —, not one per connection.
     */
    private static final class FastHead {
        byte[] head = new byte[256];
        final int[] lines = new int[MAX_FAST_LINES + 2];
        final int[] colons = new int[MAX_FAST_LINES + 2];
    }

    private static final FastThreadLocal<FastHead> FAST_HEAD = new FastThreadLocal<>() {
        @Override
        protected FastHead initialValue() {
            return new FastHead();
        }
    };

    /** How many of a head's names not shared a connection remembers for its next head. */
    private static final int LAST_NAMES = 8;

    /** Whether {@code s} is {@code b[start, start + length)}, byte for byte. */
    static boolean spells(AsciiString s, byte[] b, int start, int length) {
        return s.length() == length
                && Arrays.equals(s.array(), s.arrayOffset(), s.arrayOffset() + length, b, start, start + length);
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

        /** The names of the last head read that are not {@link #SHARED_NAMES}, in order (null until there is one). */
        private AsciiString[] lastNames;
        /** How many such names the head being read has had so far. */
        private int nameIndex;

        /** The limits Netty's decoder enforces; a head past them is left to it. */
        private final int maxInitialLine;
        private final int maxHeaderSize;
        private final int maxChunkSize;

        /**
         * Whether Netty's decoder is between messages (nothing of the next one read into its state), so that the
         * next one may be read by {@link #whole}. False from any failure on: Netty's decoder then discards the rest.
         */
        private boolean between = true;
        /** The header values of the last head {@link #whole} read, by place (null until there is one). */
        private String[] lastValues;

        Decoder(HttpDecoderConfig config) {
            super(config);
            maxInitialLine = config.getMaxInitialLineLength();
            maxHeaderSize = config.getMaxHeaderSize();
            maxChunkSize = config.getMaxChunkSize();
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out) throws Exception {
            int before = out.size();
            if (!between || !whole(buffer, out)) {
                int read = buffer.readerIndex();
                super.decode(ctx, buffer, out);
                if (out.size() > before) {
                    between = out.get(out.size() - 1) instanceof LastHttpContent last
                            && last.decoderResult().isSuccess();
                } else if (buffer.readerIndex() != read) {
                    between = false;
                }
            }
            for (int i = before; i < out.size(); i++) {
                if (out.get(i) instanceof HttpRequest r) {
                    methods.add(r.method());
                    lastHeaderCount = r.headers().size();
                }
            }
        }

        /**
         * Reads a request that is whole in {@code in} and plain — {@code GET} or {@code POST} to a target of visible
         * ASCII, {@code HTTP/1.1}, every line ending in CRLF, names that are tokens, values of visible ASCII, spaces
         * and tabs, one {@code Content-Length} in plain digits and no {@code Transfer-Encoding}, within Netty's
         * limits, the body at most one of its chunks — into the very objects Netty's decoder makes of it, by the same
         * steps: the method, target and names through the same methods, the headers added in order to a head from
         * the same factory, the body a retained slice in one last content. What differs is only that a value spelled
         * as the one in its place in the connection's last head read here is that same String (a client sends the
         * same Host, credential and content type each time). Anything else (false, nothing read) goes to Netty's
         * decoder, which is between messages.
         */
        private boolean whole(ByteBuf in, List<Object> out) {
            int start = in.readerIndex();
            int readable = in.readableBytes();
            int first = readable > 0 ? in.getByte(start) : 0;
            if (first != 'P' && first != 'G') {
                return false;
            }
            // The lines, to the empty one that ends the head (where each starts, the empty line included).
            FastHead scratch = FAST_HEAD.get();
            int[] lines = scratch.lines;
            int scanEnd = start + Math.min(readable, maxInitialLine + maxHeaderSize + 2 * (MAX_FAST_LINES + 2));
            int n = 0;
            int at = start;
            while (true) {
                int lf = in.indexOf(at, scanEnd, (byte) '\n');
                if (lf < 0 || lf == start || in.getByte(lf - 1) != '\r') {
                    return false;
                }
                lines[n++] = at - start;
                at = lf + 1;
                if (lf - 1 == lines[n - 1] + start) {
                    break; // the empty line
                }
                if (n > MAX_FAST_LINES) {
                    return false;
                }
            }
            n--; // the empty line is not a header
            int headLength = at - start;
            byte[] h = scratch.head; // the head copied out of the buffer, as Netty's decoder copies each line
            if (h.length < headLength) {
                // Kept for the next head up to KEPT_HEAD bytes; a larger head (within Netty's limits) gets its own.
                h = new byte[headLength];
                if (headLength <= KEPT_HEAD) {
                    scratch.head = h;
                }
            }
            in.getBytes(start, h, 0, headLength); // line i ends at lines[i + 1] - 2 (the last at the empty line's start)

            // The request line.
            int lineEnd = lines[1] - 2;
            if (lineEnd > maxInitialLine) {
                return false;
            }
            int methodEnd = h[0] == 'P' && h[1] == 'O' && h[2] == 'S' && h[3] == 'T' ? 4
                    : h[0] == 'G' && h[1] == 'E' && h[2] == 'T' ? 3 : -1;
            if (methodEnd < 0 || h[methodEnd] != ' ') {
                return false;
            }
            int targetStart = methodEnd + 1;
            int targetEnd = targetStart;
            while (targetEnd < lineEnd && h[targetEnd] > ' ' && h[targetEnd] < 0x7f) {
                targetEnd++;
            }
            if (targetEnd == targetStart || lineEnd - targetEnd != 9 || h[targetEnd] != ' ' || h[targetEnd + 1] != 'H'
                    || h[targetEnd + 2] != 'T' || h[targetEnd + 3] != 'T' || h[targetEnd + 4] != 'P'
                    || h[targetEnd + 5] != '/' || h[targetEnd + 6] != '1' || h[targetEnd + 7] != '.'
                    || h[targetEnd + 8] != '1') {
                return false;
            }

            // The header lines: checked whole before anything is made of them (each line's colon noted).
            int[] colons = scratch.colons;
            long contentLength = -1;
            int headerSize = 0;
            for (int i = 1; i < n; i++) {
                int ls = lines[i];
                int le = lines[i + 1] - 2;
                headerSize += le - ls;
                int colon = ls;
                while (colon < le && TCHAR[h[colon] & 0xff]) {
                    colon++;
                }
                if (colon == ls || colon == le || h[colon] != ':') {
                    return false;
                }
                colons[i] = colon;
                for (int k = colon + 1; k < le; k++) {
                    byte b = h[k];
                    if ((b < ' ' && b != '\t') || b >= 0x7f) {
                        return false;
                    }
                }
                if (named(h, ls, colon, TRANSFER_ENCODING)) {
                    return false;
                }
                if (named(h, ls, colon, CONTENT_LENGTH)) {
                    if (contentLength >= 0) {
                        return false;
                    }
                    contentLength = digits(h, HeadBytes.skipBlanks(h, colon + 1, le),
                            HeadBytes.trimEnd(h, colon + 1, le));
                    if (contentLength < 0) {
                        return false;
                    }
                }
            }
            if (headerSize > maxHeaderSize || contentLength < 0 || contentLength > maxChunkSize
                    || readable < headLength + contentLength) {
                return false;
            }

            // As Netty's decoder makes it.
            String method = splitFirstWordInitialLine(h, 0, methodEnd);
            String target = splitSecondWordInitialLine(h, targetStart, targetEnd - targetStart);
            HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method), target,
                    headersFactory);
            HttpHeaders headers = request.headers();
            String[] values = lastValues;
            if (values == null || values.length < n) {
                values = lastValues = values == null ? new String[Math.max(n, 8)]
                        : Arrays.copyOf(values, Math.max(n, 2 * values.length));
            }
            for (int i = 1; i < n; i++) {
                int ls = lines[i];
                int le = lines[i + 1] - 2;
                int colon = colons[i];
                AsciiString name = splitHeaderName(h, ls, colon - ls);
                int vs = HeadBytes.skipBlanks(h, colon + 1, le);
                int ve = HeadBytes.trimEnd(h, vs, le);
                String value;
                if (vs == ve) {
                    value = StringUtil.EMPTY_STRING;
                } else {
                    value = values[i - 1];
                    if (value == null || !spells(value, h, vs, ve - vs)) {
                        value = new String(h, vs, ve - vs, StandardCharsets.ISO_8859_1);
                        // An idle connection keeps no more than a few short values of its last head.
                        values[i - 1] = ve - vs <= KEPT_VALUE ? value : null;
                    }
                }
                headers.add(name, value);
            }
            in.skipBytes(headLength);
            out.add(request);
            out.add(contentLength == 0 ? LastHttpContent.EMPTY_LAST_CONTENT
                    : new DefaultLastHttpContent(in.readRetainedSlice((int) contentLength), trailersFactory));
            return true;
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

        /** The method: a new request's head begins, so its names are matched against the last head's from the first. */
        @Override
        protected String splitFirstWordInitialLine(byte[] sb, int start, int length) {
            nameIndex = 0;
            return super.splitFirstWordInitialLine(sb, start, length);
        }

        @Override
        protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
            AsciiString shared = sharedName(sb, start, length);
            if (shared != null) {
                return shared;
            }
            // A name not shared: the one in the same place among the last head's unshared names, when spelled the
            // same (a client sends its own headers in the same order each time), else a new one, remembered there.
            int i = nameIndex++;
            if (i >= LAST_NAMES) {
                return super.splitHeaderName(sb, start, length);
            }
            if (lastNames == null) {
                lastNames = new AsciiString[LAST_NAMES];
            }
            AsciiString last = lastNames[i];
            if (last != null && spells(last, sb, start, length)) {
                return last;
            }
            AsciiString made = super.splitHeaderName(sb, start, length);
            lastNames[i] = length <= KEPT_VALUE ? made : null;
            return made;
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
