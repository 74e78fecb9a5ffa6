package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ApiPaths;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Answers {@code GET /metrics} with {@link GatewayMetrics}' Prometheus text exposition.
 *
 * <p>Two ways to use it:
 * <ul>
 *   <li>As a handler on the gateway's own port: {@code addBefore(ROUTER, "metrics", new MetricsResponder(m))},
 *       i.e. after the body aggregator (it reads {@link FullHttpRequest}s) and before the request router.
 *       It answers {@code /metrics} (any query string ignored) — 200 for GET, 405 otherwise — and releases
 *       that request; every other message goes on untouched (ownership moves with it). One instance can
 *       serve every channel.</li>
 *   <li>As {@link #respond}, from a handler that has already decided the request is {@code GET /metrics}
 *       ({@link AdminServer} does); the caller releases its request.</li>
 * </ul>
 *
 * <p>Cost: a scrape snapshots and formats every series on the calling event loop (CPU only, no I/O), and
 * while it runs that loop serves nothing else. Measured with the Prometheus client 1.8.0 once the JIT has
 * warmed up: about 1.5–2 µs per exposition line, e.g. 3,000 request series (≈ 7,000 lines, 700 KB) ≈ 12 ms;
 * the first scrapes of a fresh process take several times that. A small config (tens of series) costs well
 * under a millisecond. With many keys × models, serve {@code /metrics} from the {@link AdminServer}, whose
 * single loop serves nothing else.
 */
@Sharable
public final class MetricsResponder extends ChannelInboundHandlerAdapter {
    public static final String PATH = "/metrics";
    static final AsciiString CONTENT_TYPE = AsciiString.cached(GatewayMetrics.CONTENT_TYPE);

    private static final Logger LOG = Logger.getLogger(MetricsResponder.class.getName());
    private static final byte[] FAILURE_BODY =
            "The metrics could not be rendered; the gateway log says why.\n".getBytes(StandardCharsets.US_ASCII);
    private static final AsciiString FAILURE_CONTENT_TYPE = AsciiString.cached("text/plain; charset=utf-8");

    private final GatewayMetrics metrics;

    public MetricsResponder(GatewayMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        // Malformed requests go on to the router, which owns the answers for those.
        if (!(msg instanceof FullHttpRequest request) || request.decoderResult().isFailure()
                || !isMetricsPath(request.uri())) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (!HttpMethod.GET.equals(request.method())) {
                HttpResponses.methodNotAllowed(ctx, ApiStyle.OPENAI, Ids.requestId(), keepAlive, "GET");
                return;
            }
            respond(ctx, metrics, keepAlive);
        } finally {
            request.release();
        }
    }

    static boolean isMetricsPath(String uri) {
        return uri.startsWith(PATH) && ApiPaths.path(uri).equals(PATH);
    }

    /**
     * Writes and flushes a 200 with the exposition ({@code text/plain; version=0.0.4; charset=utf-8}) and a
     * request id; closes the connection after it when {@code keepAlive} is false. Releases nothing it was
     * not given: the caller keeps its request.
     *
     * <p>When the exposition cannot be made (a metric the client library refuses to render, a collector that
     * throws), the answer is a 500 with a one-line plain-text body instead, and the failure is logged with its
     * stack trace the first time it is seen: the same failure again (same exception type, thrown at the same place)
     * is not logged again, so a scraper polling a broken metric every few seconds does not flood the log.
     */
    public static ChannelFuture respond(ChannelHandlerContext ctx, GatewayMetrics metrics, boolean keepAlive) {
        FullHttpResponse response;
        try {
            response = response(ctx.alloc(), metrics);
        } catch (RuntimeException e) {
            if (metrics.firstScrapeFailure(signature(e))) {
                LOG.log(Level.WARNING, "GET /metrics could not be rendered (" + e + "); answered 500. "
                        + "This failure is logged once.", e);
            }
            response = failure();
        }
        HttpResponses.requestId(response.headers(), Ids.requestId());
        HttpUtil.setKeepAlive(response, keepAlive);
        ChannelFuture f = ctx.writeAndFlush(response);
        if (!keepAlive) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
        return f;
    }

    /** The 500 for a failed rendering: plain text, no detail (that goes to the log). */
    private static FullHttpResponse failure() {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.INTERNAL_SERVER_ERROR, Unpooled.wrappedBuffer(FAILURE_BODY));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, FAILURE_CONTENT_TYPE)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, FAILURE_BODY.length)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return response;
    }

    /** What makes two failures the same: the exception type and the place it was thrown (not its message). */
    static String signature(Throwable e) {
        StackTraceElement[] trace = e.getStackTrace();
        return e.getClass().getName() + (trace.length > 0 ? " at " + trace[0] : ": " + e.getMessage());
    }

    /** A 200 response holding the exposition; the caller owns it (writing it hands it on). */
    public static FullHttpResponse response(ByteBufAllocator alloc, GatewayMetrics metrics) {
        ByteBuf body = alloc.buffer(16384);
        try (ByteBufOutputStream out = new ByteBufOutputStream(body)) {
            metrics.scrape(out);
        } catch (IOException | RuntimeException e) {
            body.release();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, CONTENT_TYPE)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        return response;
    }
}
