package io.modelgateway.bench.loadgen;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;

/**
 * The one request the connections of an event loop send, built once. The body is encoded once into a
 * direct buffer; each request carries a retained duplicate of it (its own indexes, the same memory),
 * which the HTTP encoder releases after writing, so sending allocates no body bytes and builds no
 * strings. There is one template per event loop, so the body's reference count is only ever touched
 * by one thread. The headers object is read-only after construction.
 *
 * <p>{@link #close()} drops the template's own reference once no more requests will be made.
 */
final class RequestTemplate implements AutoCloseable {
    private final HttpMethod method;
    private final String target;
    private final HttpHeaders headers;
    private final ByteBuf body;

    RequestTemplate(LoadOptions options) {
        this.method = HttpMethod.valueOf(options.method());
        this.target = options.requestTarget();
        byte[] bytes = options.body();
        this.body = Unpooled.directBuffer(Math.max(bytes.length, 1)).writeBytes(bytes);
        HttpHeaders h = new DefaultHttpHeaders();
        h.set(HttpHeaderNames.HOST, options.hostHeader());
        h.set(HttpHeaderNames.USER_AGENT, "modelgateway-loadgen");
        boolean hasType = false;
        for (String[] nv : options.headers()) {
            h.add(nv[0], nv[1]);
            hasType |= nv[0].equalsIgnoreCase("content-type");
        }
        if (bytes.length > 0 || method.equals(HttpMethod.POST) || method.equals(HttpMethod.PUT)) {
            if (!hasType && bytes.length > 0) {
                h.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
            }
            h.set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        }
        this.headers = h;
    }

    /** A new request sharing the body's memory; whoever writes it releases it (the HTTP encoder does). */
    FullHttpRequest newRequest() {
        return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target, body.retainedDuplicate(), headers,
                EmptyHttpHeaders.INSTANCE);
    }

    int bodyLength() {
        return body.readableBytes();
    }

    /** Releases the template's own reference; requests still in flight keep the memory until written. */
    @Override
    public void close() {
        if (body.refCnt() > 0) {
            body.release();
        }
    }
}
