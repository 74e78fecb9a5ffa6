package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ChunkOut;
import io.modelgateway.core.exchange.ConnectionEvent;

import io.modelgateway.core.exchange.ApiPaths;
import io.modelgateway.core.exchange.ArrayHttpHeaders;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Looks after the answer on the wire of one connection, and of a stream answer in particular. Sits right after
 * the HTTP codec, so what it writes goes straight to the codec (pings are not counted as answer bytes by the
 * response observer above it). Two duties:
 * <ul>
 *   <li>GD-11 keep-alive: a stream with nothing written for {@link #PING_INTERVAL_NANOS} gets an SSE comment
 *       ({@code : keep-alive}) on chat, or {@code event: ping} on messages, so proxies and clients between
 *       don't time out an upstream that is thinking.</li>
 *   <li>Draining (graceful shutdown, {@link #DRAIN}): a connection with no request in progress closes at once;
 *       one with a request in progress closes once its answer is complete; when the drain deadline comes
 *       ({@link #DRAIN_DEADLINE}), an open stream ends with the style's error event and a proper end of the
 *       response (GD-10, no {@code [DONE]} / {@code message_stop}), anything else is closed.</li>
 * </ul>
 * When an answer is complete it learns from {@link ConnectionEvent#ANSWER_COMPLETE}, like every handler of the
 * connection. The style is the request's (its path), known from the request head as it passes (the pipelining gate keeps one
 * request at a time above). Writes nothing it does not own; event-loop confined.
 */
public final class StreamGuard extends ChannelDuplexHandler implements Runnable {
    /** GD-11: every 15 s without output. */
    public static final long PING_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final byte[] CHAT_PING = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MESSAGES_PING = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
            .getBytes(StandardCharsets.US_ASCII);
    static final GatewayError SHUTTING_DOWN = new GatewayError(ErrorKind.OVERLOADED,
            "The gateway is shutting down; retry the request.", null, null);

    /** User event: the gateway stops; finish what is in progress, then close. */
    public static final Object DRAIN = "gateway-drain";
    /** User event: the drain deadline passed; end what is still open now. */
    public static final Object DRAIN_DEADLINE = "gateway-drain-deadline";

    private final long pingIntervalNanos;
    private ApiStyle style = ApiStyle.OPENAI;
    /** Requests read and answers completed on this connection: a request is in progress while they differ. */
    private long requestsRead;
    private long answersDone;
    private boolean streaming;
    private boolean draining;
    private long lastWriteNanos;
    /**
     * The keep-alive timer, this handler itself as its task. It outlives the stream that started it: the next stream
     * on the connection finds it still set and keeps it (one timer per connection at a time, not one per stream), and
     * a timer that finds no stream when it fires stops.
     */
    private ScheduledFuture<?> pingTimer;
    private ChannelHandlerContext ctx;

    public StreamGuard() {
        this(PING_INTERVAL_NANOS);
    }

    /** @param pingIntervalNanos idle time after which a stream gets a keep-alive (tests use a short one) */
    public StreamGuard(long pingIntervalNanos) {
        this.pingIntervalNanos = pingIntervalNanos;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request) {
            requestsRead++;
            style = ApiPaths.styleForPath(ApiPaths.path(request.uri()));
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse head && head.status().code() >= 200) {
            // As held (a view into the upstream's head, or a constant): no String made of it per answer.
            CharSequence type = ArrayHttpHeaders.firstValue(head.headers(), HttpHeaderNames.CONTENT_TYPE);
            streaming = type != null && AsciiString.regionMatches(type, true, 0, "text/event-stream", 0, 17);
            if (streaming) {
                startPings(ctx);
            }
        }
        if (msg instanceof HttpContent) {
            lastWriteNanos = ctx.executor().ticker().nanoTime();
        }
        ctx.write(msg, promise);
    }

    /**
     * The answer in progress was written whole: no more pings (a timer still set finds no stream and stops, unless
     * the connection's next stream began by then); a draining connection with nothing left closes.
     */
    private void answerComplete(ChannelHandlerContext ctx) {
        streaming = false;
        answersDone++;
        if (draining && requestsRead <= answersDone) {
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void startPings(ChannelHandlerContext ctx) {
        lastWriteNanos = ctx.executor().ticker().nanoTime(); // the loop's own clock, as its timers use
        this.ctx = ctx;
        if (pingTimer == null) {
            pingTimer = ctx.executor().schedule(this, pingIntervalNanos, TimeUnit.NANOSECONDS);
        }
        // else the timer set for an earlier stream on this connection looks at this one when it fires, measuring the
        // idle time from the last write, as for its own
    }

    /** The keep-alive timer fired. */
    @Override
    public void run() {
        pingTimer = null;
        if (!streaming || !ctx.channel().isActive()) {
            return;
        }
        long idle = ctx.executor().ticker().nanoTime() - lastWrite();
        if (idle >= pingIntervalNanos && ctx.channel().isWritable()) {
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(
                    style == ApiStyle.ANTHROPIC ? MESSAGES_PING : CHAT_PING)));
            lastWriteNanos = ctx.executor().ticker().nanoTime();
            idle = 0;
        }
        pingTimer = ctx.executor().schedule(this, pingIntervalNanos - Math.min(idle, pingIntervalNanos - 1),
                TimeUnit.NANOSECONDS);
    }

    /**
     * The last write of the answer's body: through this handler, or a chunk that entered below the codec
     * ({@link ChunkOut}, on HTTP/1.1) and never passed here.
     */
    private long lastWrite() {
        ChunkOut chunks = ChunkOut.of(ctx.channel());
        return chunks == null ? lastWriteNanos : Math.max(lastWriteNanos, chunks.lastWriteNanos());
    }

    private void stopPings() {
        if (pingTimer != null) {
            pingTimer.cancel(false);
            pingTimer = null;
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ConnectionEvent.ANSWER_COMPLETE) {
            answerComplete(ctx);
            ctx.fireUserEventTriggered(evt);
            return;
        }
        if (evt == DRAIN) {
            draining = true;
            if (requestsRead <= answersDone) {
                ctx.close();
            }
            return;
        }
        if (evt == DRAIN_DEADLINE) {
            if (streaming) {
                ByteBuf event = ErrorBodies.streamEvent(ctx.alloc(), style, SHUTTING_DOWN);
                ctx.write(new DefaultHttpContent(event));
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
                streaming = false;
                stopPings();
            } else {
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stopPings();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stopPings();
    }
}
