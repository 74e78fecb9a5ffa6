package io.modelgateway.core.exchange;

import io.netty.handler.codec.http.HttpHeadersFactory;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import java.util.concurrent.TimeUnit;

/**
 * Builds the gateway's own responses: errors in the caller's style (design rule 7, via {@link ErrorBodies})
 * and small JSON answers. Every response carries the request id in both header spellings (GD-5).
 */
public final class HttpResponses {
    public static final AsciiString X_REQUEST_ID = AsciiString.cached("x-request-id");
    public static final AsciiString REQUEST_ID = AsciiString.cached("request-id");
    public static final AsciiString RETRY_AFTER_MS = AsciiString.cached("retry-after-ms");
    public static final AsciiString APPLICATION_JSON = AsciiString.cached("application/json");
    /**
     * Headers the gateway makes from values already validated (its own constants, config values checked at load,
     * header values an HTTP decoder accepted): no re-validation on every {@code set}, and the small flat table of
     * {@link ArrayHttpHeaders}.
     */
    public static final HttpHeadersFactory TRUSTED_HEADERS = ArrayHttpHeaders.TRUSTED;

    private HttpResponses() {
    }

    /** Adds the request-id pair. */
    public static void requestId(HttpHeaders headers, String requestId) {
        headers.set(X_REQUEST_ID, requestId);
        headers.set(REQUEST_ID, requestId);
    }

    /**
     * GD-25: a 429, 503 or 529 always tells when to come back, in seconds ({@code Retry-After}) and in
     * milliseconds ({@code retry-after-ms}); whichever the source gave is kept and the other derived.
     */
    public static void ensureRetryHeaders(HttpHeaders h, int status) {
        if (status != 429 && status != 503 && status != 529) {
            return;
        }
        String seconds = h.get(HttpHeaderNames.RETRY_AFTER);
        String millis = h.get(RETRY_AFTER_MS);
        if (seconds == null && millis == null) {
            h.set(HttpHeaderNames.RETRY_AFTER, "1");
            h.set(RETRY_AFTER_MS, "1000");
        } else if (millis == null) {
            try {
                // A provider's number, so bounded: never negative, never wrapped past Long.MAX_VALUE.
                h.set(RETRY_AFTER_MS, Long.toString(Saturating.multiply(Math.max(0, Long.parseLong(seconds.trim())),
                        1000)));
            } catch (NumberFormatException e) {
                // an HTTP date: the SDKs understand it as it is
            }
        } else if (seconds == null) {
            try {
                h.set(HttpHeaderNames.RETRY_AFTER,
                        Long.toString(Math.max(1, Saturating.add(Long.parseLong(millis.trim()), 999) / 1000)));
            } catch (NumberFormatException e) {
                h.set(HttpHeaderNames.RETRY_AFTER, "1");
            }
        }
    }

    /**
     * Writes an error in the caller's style and flushes it. When {@code keepAlive} is false the connection is
     * closed after the write.
     */
    public static ChannelFuture sendError(ChannelHandlerContext ctx, ApiStyle style, GatewayError error,
            String requestId, boolean keepAlive) {
        return sendError(ctx, style, error, requestId, keepAlive, null);
    }

    /** As above, passing on an upstream's {@code Retry-After} (seconds or an HTTP date; null for none). */
    public static ChannelFuture sendError(ChannelHandlerContext ctx, ApiStyle style, GatewayError error,
            String requestId, boolean keepAlive, String retryAfter) {
        ByteBuf body = ErrorBodies.body(ctx.alloc(), style, error, requestId);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(error.kind().status(style)), body, TRUSTED_HEADERS, TRUSTED_HEADERS);
        if (retryAfter != null) {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, retryAfter);
        }
        ensureRetryHeaders(response.headers(), response.status().code());
        return send(ctx, response, requestId, keepAlive);
    }

    /**
     * 405 in the caller's style with the {@code Allow} header listing the methods the path takes (an HTTP 405
     * must carry it).
     */
    public static ChannelFuture methodNotAllowed(ChannelHandlerContext ctx, ApiStyle style, String requestId,
            boolean keepAlive, String allow) {
        GatewayError error = new GatewayError(ErrorKind.METHOD_NOT_ALLOWED, "Method not allowed; use "
                + allow.replace(", ", " or ") + ".", null, "method_not_allowed");
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.METHOD_NOT_ALLOWED, ErrorBodies.body(ctx.alloc(), style, error, requestId),
                TRUSTED_HEADERS, TRUSTED_HEADERS);
        response.headers().set(HttpHeaderNames.ALLOW, allow);
        return send(ctx, response, requestId, keepAlive);
    }

    /**
     * An error answering {@code request}, in its style, with every header its responses carry
     * ({@link GatewayRequest#decorate}: request ids, and rate-limit headers once a limit has spoken).
     *
     * @param retryAfter an upstream's {@code Retry-After} to pass on, or null
     */
    public static ChannelFuture sendError(ChannelHandlerContext ctx, GatewayRequest request, GatewayError error,
            String retryAfter) {
        ByteBuf body = ErrorBodies.body(ctx.alloc(), request.style(), error, request.requestId());
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(error.kind().status(request.style())), body, TRUSTED_HEADERS,
                TRUSTED_HEADERS);
        request.decorate(response.headers());
        if (retryAfter != null) {
            response.headers().set(HttpHeaderNames.RETRY_AFTER, retryAfter);
            response.headers().remove(RETRY_AFTER_MS); // derived again from the upstream's value
        }
        ensureRetryHeaders(response.headers(), response.status().code());
        return send(ctx, response, request.requestId(), request.keepAlive());
    }

    /** Writes a small JSON body (already encoded) with status 200 or the given one. */
    public static ChannelFuture sendJson(ChannelHandlerContext ctx, HttpResponseStatus status, ByteBuf body,
            String requestId, boolean keepAlive) {
        return send(ctx, new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body, TRUSTED_HEADERS,
                TRUSTED_HEADERS), requestId, keepAlive);
    }

    private static ChannelFuture send(ChannelHandlerContext ctx, FullHttpResponse response, String requestId,
            boolean keepAlive) {
        HttpHeaders h = response.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, APPLICATION_JSON);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        if (requestId != null) {
            requestId(h, requestId);
        }
        if (!keepAlive) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        HttpUtil.setKeepAlive(response, keepAlive);
        ChannelFuture f = ctx.writeAndFlush(response);
        if (!keepAlive) {
            f.addListener((ChannelFutureListener) done -> lingeringClose(done.channel()));
        }
        return f;
    }

    /**
     * Closes a connection the gateway gave up on without resetting it: closing a socket with unread input
     * makes the kernel send RST, which can destroy the error response before the client reads it. So the
     * write side is shut first (the client sees the end of the response), input is drained, and the socket
     * closes when the client closes it or after {@link #LINGER_MS}, whichever comes first. Over TLS the write side
     * ends with the TLS close first, so the client can tell the end from a cut. An HTTP/2 stream (not a socket) is
     * simply closed: that resets only the stream, after its answer.
     */
    public static void lingeringClose(Channel ch) {
        if (!(ch instanceof DuplexChannel duplex) || !ch.isActive()) {
            ch.close();
            return;
        }
        ch.config().setAutoRead(true);
        SslHandler tls = ch.pipeline().get(SslHandler.class);
        if (tls != null) {
            tls.closeOutbound().addListener(f -> shutdownOutput(duplex));
        } else {
            shutdownOutput(duplex);
        }
        ch.eventLoop().schedule(() -> {
            ch.close();
        }, LINGER_MS, TimeUnit.MILLISECONDS);
    }

    private static void shutdownOutput(DuplexChannel duplex) {
        duplex.shutdownOutput().addListener(f -> {
            if (!f.isSuccess()) {
                duplex.close();
            }
        });
    }

    static final long LINGER_MS = 2000;
}
