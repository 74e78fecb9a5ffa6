package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * An HTTP/2 stream's frames as the HTTP/1.1 objects the request path reads and writes, at the top of each stream's
 * pipeline. In: the request's HEADERS become an {@link io.netty.handler.codec.http.HttpRequest} (a
 * {@link io.netty.handler.codec.http.FullHttpRequest} when they end the stream; otherwise chunked unless a
 * {@code content-length} is given), {@code :authority} its {@code Host}, several {@code cookie} fields one (RFC 9113
 * section 8.2.3), the other pseudo-header fields dropped; DATA becomes content, and HEADERS after DATA the trailers.
 * The frame codec below has already refused what HTTP/2 does not allow in a request (upper-case names,
 * connection-specific fields, missing pseudo-header fields); the headers are checked again as the HTTP/1.1
 * decoder checks them ({@link ArrayHttpHeaders#VALIDATING}). Out: a response head becomes HEADERS with
 * {@code :status}, its names in lower case and the connection-specific fields (and any named in {@code Connection})
 * left out (RFC 9113 section 8.2.2); content becomes DATA, the last content ends the stream, trailers become a final
 * HEADERS; a 1xx head is sent without ending the stream. Other frames (a reset, a window update) pass untouched.
 *
 * <p>What Netty's general {@code Http2StreamFrameToHttpObjectCodec} does for any peer, done for this one's needs:
 * no extension headers added to the request only to be removed again, no output list or promise combiner per
 * object, the response headers copied without validating names the gateway wrote or the upstream's decoder
 * checked. Stateless; one shared by every stream.
 */
@ChannelHandler.Sharable
final class Http2StreamCodec extends ChannelDuplexHandler {
    static final Http2StreamCodec INSTANCE = new Http2StreamCodec();

    /** Fields HTTP/2 does not carry in a response (RFC 9113 section 8.2.2), and Host (the authority is not a field). */
    private static final Set<AsciiString> NOT_IN_HTTP2 = Set.of(HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE, AsciiString.cached("proxy-connection"), HttpHeaderNames.TRANSFER_ENCODING,
            HttpHeaderNames.UPGRADE, HttpHeaderNames.TE, HttpHeaderNames.HOST);

    private Http2StreamCodec() {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2HeadersFrame frame) {
            Http2Headers headers = frame.headers();
            if (headers.method() == null) {
                // Trailers (the frame codec lets HEADERS without :method through only after the request's HEADERS).
                HttpHeaders trailers = ArrayHttpHeaders.VALIDATING_TRAILERS.newHeaders();
                copyRequestFields(headers, trailers);
                ctx.fireChannelRead(new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER, trailers));
                return;
            }
            HttpMethod method = HttpMethod.valueOf(headers.method().toString());
            // CONNECT has no :path; its target is the authority (the router refuses it like any unknown path).
            CharSequence target = headers.path() != null ? headers.path() : headers.authority();
            HttpHeaders fields = ArrayHttpHeaders.VALIDATING.newHeaders();
            copyRequestFields(headers, fields);
            if (frame.isEndStream()) {
                ctx.fireChannelRead(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method,
                        target == null ? "" : target.toString(), Unpooled.EMPTY_BUFFER, fields,
                        ArrayHttpHeaders.VALIDATING_TRAILERS.newHeaders()));
            } else {
                if (!fields.contains(HttpHeaderNames.CONTENT_LENGTH)) {
                    fields.add(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
                }
                ctx.fireChannelRead(new DefaultHttpRequest(HttpVersion.HTTP_1_1, method,
                        target == null ? "" : target.toString(), fields));
            }
        } else if (msg instanceof Http2DataFrame frame) {
            // The frame's content becomes the message's: passed on, not retained and released.
            ByteBuf content = frame.content();
            ctx.fireChannelRead(frame.isEndStream() ? new DefaultLastHttpContent(content)
                    : new DefaultHttpContent(content));
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    /** A request's header fields as HTTP/1.1 fields: {@code :authority} as Host, cookies joined, other pseudo-fields out. */
    private static void copyRequestFields(Http2Headers from, HttpHeaders to) {
        String cookie = null;
        for (Map.Entry<CharSequence, CharSequence> field : from) {
            CharSequence name = field.getKey();
            if (name.length() > 0 && name.charAt(0) == ':') {
                if (Http2Headers.PseudoHeaderName.AUTHORITY.value().contentEquals(name)) {
                    to.add(HttpHeaderNames.HOST, field.getValue());
                }
            } else if (HttpHeaderNames.COOKIE.contentEquals(name)) {
                cookie = cookie == null ? field.getValue().toString() : cookie + "; " + field.getValue();
            } else {
                to.add(name, field.getValue());
            }
        }
        if (cookie != null) {
            to.add(HttpHeaderNames.COOKIE, cookie);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse response) {
            Http2Headers headers = responseFields(response);
            if (response.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
                ReferenceCountUtil.release(msg); // a 1xx has no content; the answer's own head follows
                ctx.write(new DefaultHttp2HeadersFrame(headers, false), promise);
            } else if (msg instanceof FullHttpResponse full) {
                ByteBuf content = full.content();
                HttpHeaders trailers = full.trailingHeaders();
                if (!content.isReadable() && trailers.isEmpty()) {
                    content.release();
                    ctx.write(new DefaultHttp2HeadersFrame(headers, true), promise);
                } else {
                    ctx.write(new DefaultHttp2HeadersFrame(headers, false), ctx.newPromise());
                    writeLast(ctx, content, trailers, true, promise);
                }
            } else {
                ctx.write(new DefaultHttp2HeadersFrame(headers, false), promise);
            }
        } else if (msg instanceof LastHttpContent last) {
            writeLast(ctx, last.content(), last.trailingHeaders(), false, promise);
        } else if (msg instanceof HttpContent content) {
            ctx.write(new DefaultHttp2DataFrame(content.content(), false), promise);
        } else {
            ctx.write(msg, promise);
        }
    }

    /**
     * The end of an answer: its last content as DATA ending the stream (an empty one too, unless it is a whole
     * response's content or trailers follow), then the trailers as HEADERS ending it.
     */
    private static void writeLast(ChannelHandlerContext ctx, ByteBuf content, HttpHeaders trailers, boolean whole,
            ChannelPromise promise) {
        boolean noTrailers = trailers.isEmpty();
        if (content.isReadable() || (!whole && noTrailers)) {
            ctx.write(new DefaultHttp2DataFrame(content, noTrailers), noTrailers ? promise : ctx.newPromise());
        } else {
            content.release();
        }
        if (!noTrailers) {
            Http2Headers fields = new DefaultHttp2Headers(false, trailers.size());
            copyResponseFields(trailers, fields);
            ctx.write(new DefaultHttp2HeadersFrame(fields, true), promise);
        }
    }

    private static Http2Headers responseFields(HttpResponse response) {
        HttpHeaders from = response.headers();
        Http2Headers to = new DefaultHttp2Headers(false, from.size() + 1);
        to.status(response.status().codeAsText());
        copyResponseFields(from, to);
        return to;
    }

    /** Names in lower case; the fields HTTP/2 does not carry, and those the Connection field names, left out. */
    private static void copyResponseFields(HttpHeaders from, Http2Headers to) {
        Set<AsciiString> connectionNamed = from.contains(HttpHeaderNames.CONNECTION) ? connectionNamed(from) : Set.of();
        Iterator<Map.Entry<CharSequence, CharSequence>> fields = from.iteratorCharSequence();
        while (fields.hasNext()) {
            Map.Entry<CharSequence, CharSequence> field = fields.next();
            AsciiString name = AsciiString.of(field.getKey()).toLowerCase();
            if (!NOT_IN_HTTP2.contains(name) && !connectionNamed.contains(name)) {
                to.add(name, field.getValue());
            }
        }
    }

    private static Set<AsciiString> connectionNamed(HttpHeaders headers) {
        Set<AsciiString> names = new java.util.HashSet<>();
        for (String value : headers.getAll(HttpHeaderNames.CONNECTION)) {
            for (String token : value.split(",")) {
                String name = token.trim();
                if (!name.isEmpty()) {
                    names.add(AsciiString.of(name).toLowerCase());
                }
            }
        }
        return names;
    }
}
