package io.modelgateway.core.server;

import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.ReferenceCountUtil;
import java.util.Iterator;

/**
 * Right after the HTTP codec: the checks of a request head that the codec leaves to the server, done once so every
 * handler above sees a request they hold for.
 * <ul>
 *   <li>The version must be HTTP/1.1 or HTTP/1.0; the codec reads any {@code HTTP/x.y} (1.2, 2.0, 3.0 would be
 *       served as if they were 1.1): 505.</li>
 *   <li>{@code Host}: exactly one on HTTP/1.1, at most one on HTTP/1.0, and a well-formed authority (empty is
 *       allowed): 400 otherwise.</li>
 *   <li>An absolute-form target ({@code POST http://host/api/v1/chat/completions}), which servers must accept, is
 *       rewritten to its path and query, so routing, error styles and timeouts see the path.</li>
 * </ul>
 * A refused head is not answered here: it goes on with a failed {@link DecoderResult} whose cause is a
 * {@link Refusal} (the body aggregator passes such a request on at once, without its body), and the request router
 * answers it in the style of its path, then closes the connection. Everything after that request on the connection
 * is released unread, as the codec does after a malformed request. Event-loop confined; one per connection.
 *
 * <p>On an HTTP/2 stream the request comes from the frame codec as HTTP/1.1: its version always passes, the
 * authority is in {@code :authority} (turned into {@code Host}), which HTTP/2 does not require, and a {@code Host}
 * sent besides it must name the same authority. The extension headers the conversion adds
 * ({@code x-http2-stream-id}, {@code x-http2-scheme}, …) are removed, so nothing downstream (a
 * {@code forward_headers} glob) sees them. Closing "the connection" after a refusal then resets the stream only.
 */
public final class RequestHeadValidator extends ChannelInboundHandlerAdapter {
    private static final CharSequence[] HTTP2_EXTENSION_HEADERS = {
            HttpConversionUtil.ExtensionHeaderNames.STREAM_ID.text(),
            HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(),
            HttpConversionUtil.ExtensionHeaderNames.PATH.text(),
            HttpConversionUtil.ExtensionHeaderNames.STREAM_PROMISE_ID.text(),
            HttpConversionUtil.ExtensionHeaderNames.STREAM_DEPENDENCY_ID.text(),
            HttpConversionUtil.ExtensionHeaderNames.STREAM_WEIGHT.text()};

    /** The requests come from an HTTP/2 stream. */
    private final boolean http2Stream;
    /** A refused request is on its way up and its body is still arriving. */
    private boolean refusedInProgress;
    /** The refused request was passed whole: drop whatever the client sends after it. */
    private boolean discarding;

    /** On an HTTP/1.x connection. */
    public RequestHeadValidator() {
        this(false);
    }

    /** @param http2Stream the requests come from an HTTP/2 stream (see above) */
    public RequestHeadValidator(boolean http2Stream) {
        this.http2Stream = http2Stream;
    }

    /** Why a head was refused; the router turns it into the answer. */
    public static final class Refusal extends RuntimeException {
        private final transient GatewayError error;

        Refusal(GatewayError error) {
            super(error.message(), null, false, false);
            this.error = error;
        }

        public GatewayError error() {
            return error;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (discarding) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request && request.decoderResult().isSuccess()) {
            GatewayError error = http2Stream ? checkHttp2(request) : check(request);
            if (error != null) {
                request.setDecoderResult(DecoderResult.failure(new Refusal(error)));
                request.headers().remove(HttpHeaderNames.EXPECT); // no 100 Continue for a request refused
                refusedInProgress = true;
            }
        }
        if (refusedInProgress && msg instanceof LastHttpContent) {
            refusedInProgress = false;
            discarding = true;
        }
        ctx.fireChannelRead(msg);
    }

    /** The refusal of {@code request}'s head, or null when it passes (an absolute-form target is rewritten). */
    static GatewayError check(HttpRequest request) {
        HttpVersion version = request.protocolVersion();
        if (version != HttpVersion.HTTP_1_1 && version != HttpVersion.HTTP_1_0) {
            if (!"HTTP".equals(version.protocolName())) {
                return GatewayError.invalid("Malformed HTTP request: not an HTTP version.", null, "invalid_request");
            }
            if (version.majorVersion() != 1 || version.minorVersion() > 1) {
                return new GatewayError(ErrorKind.HTTP_VERSION_NOT_SUPPORTED, "HTTP/" + version.majorVersion() + "."
                        + version.minorVersion() + " is not supported; use HTTP/1.1.", null, null);
            }
        }
        GatewayError hostError = checkHost(request, version.minorVersion() == 1);
        if (hostError != null) {
            return hostError;
        }
        String uri = request.uri();
        if (!uri.isEmpty() && uri.charAt(0) != '/') {
            String originForm = originForm(uri);
            if (originForm != null) {
                request.setUri(originForm);
            }
        }
        return null;
    }

    /** The refusal of a head that came from an HTTP/2 stream, or null; its extension headers are removed. */
    static GatewayError checkHttp2(HttpRequest request) {
        for (CharSequence name : HTTP2_EXTENSION_HEADERS) {
            request.headers().remove(name);
        }
        Iterator<? extends CharSequence> hosts = request.headers().valueCharSequenceIterator(HttpHeaderNames.HOST);
        CharSequence first = null;
        while (hosts.hasNext()) {
            CharSequence host = hosts.next();
            if (!validAuthority(host)) {
                return GatewayError.invalid("The :authority (or Host) is not a valid host[:port].", null,
                        "invalid_request");
            }
            if (first == null) {
                first = host;
            } else if (!io.netty.util.AsciiString.contentEqualsIgnoreCase(first, host)) {
                return GatewayError.invalid("Host names another authority than :authority.", null,
                        "invalid_request");
            }
        }
        return null;
    }

    private static GatewayError checkHost(HttpRequest request, boolean required) {
        HttpHeaders headers = request.headers();
        int at = ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.HOST, 0);
        if (at < 0) {
            return required ? GatewayError.invalid("The Host header is required on HTTP/1.1.", null,
                    "invalid_request") : null;
        }
        CharSequence host = ArrayHttpHeaders.valueAt(headers, HttpHeaderNames.HOST, at);
        if (ArrayHttpHeaders.nextValue(headers, HttpHeaderNames.HOST, at + 1) >= 0) {
            return GatewayError.invalid("More than one Host header.", null, "invalid_request");
        }
        if (!validAuthority(host)) {
            return GatewayError.invalid("The Host header is not a valid host[:port].", null, "invalid_request");
        }
        return null;
    }

    /**
     * Whether {@code host} can be a URI authority without user info: the characters of a registered name, an IPv4
     * address or a bracketed IP literal, and a port. Loose on purpose (the gateway routes by path, not by host);
     * what it keeps out is whitespace, {@code /}, {@code @}, {@code ?}, {@code #} and controls.
     */
    static boolean validAuthority(CharSequence host) {
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~' || c == '%' || c == '!' || c == '$' || c == '&'
                    || c == '\'' || c == '(' || c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '='
                    || c == ':' || c == '[' || c == ']';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code http://host:port/path?query} → {@code /path?query} ({@code /} when the path is empty); null when
     * {@code uri} is not an absolute http(s) URI (then it stays as it is, and is a 404 like any unknown path).
     */
    static String originForm(String uri) {
        int schemeEnd;
        if (uri.regionMatches(true, 0, "http://", 0, 7)) {
            schemeEnd = 7;
        } else if (uri.regionMatches(true, 0, "https://", 0, 8)) {
            schemeEnd = 8;
        } else {
            return null;
        }
        int i = schemeEnd;
        while (i < uri.length() && uri.charAt(i) != '/' && uri.charAt(i) != '?' && uri.charAt(i) != '#') {
            i++;
        }
        if (i == uri.length()) {
            return "/";
        }
        return uri.charAt(i) == '/' ? uri.substring(i) : "/" + uri.substring(i);
    }
}
