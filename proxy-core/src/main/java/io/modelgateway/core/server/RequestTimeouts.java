package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ConnectionEvent;

import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Client-side deadlines of one connection, ahead of the HTTP codec (it sees the raw bytes, so the clock of a
 * request starts at its first byte, before its headers are complete):
 * <ul>
 *   <li>a request not received whole within {@code request_timeout_ms} of its first byte — headers or body
 *       trickled in — is answered 408 in the style of its path and the connection closed (GD-9);</li>
 *   <li>a keep-alive connection with no request in progress for {@code idle_timeout_ms} is closed quietly.</li>
 * </ul>
 * Whether a request is complete, and whether its answer is, comes from the connection's signals
 * ({@link ConnectionEvent}), told by the {@code AnswerBoundary} after the codec. One periodic check per connection, a quarter of the
 * shorter deadline apart, so a deadline is noticed at most 25% late and no request pays for scheduling or
 * cancelling a timer: the request path only writes a field. The bytes pass on untouched; event-loop confined.
 *
 * <p>Known gap: when the end of one request and the start of the next arrive in the same read, the next one's
 * clock starts at its next read rather than its first byte; the idle timeout still bounds such a connection.
 */
public final class RequestTimeouts extends ChannelInboundHandlerAdapter {
    private static final byte[] POST = "POST ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MESSAGES_PATH = "/api/v1/messages".getBytes(StandardCharsets.US_ASCII);

    private final long requestTimeoutNanos;
    private final long idleTimeoutNanos;
    private ChannelHandlerContext ctx;
    /** First byte of the request being received; 0 when none is. */
    private long receivingSince;
    /** Whether that request's first bytes are the start of a messages request (for the 408's style). */
    private boolean messagesStyle;
    /** Requests received whole whose answers are not complete. */
    private int inProgress;
    /** When the connection last became idle (nothing received, nothing in progress). */
    private long idleSince;
    private ScheduledFuture<?> ticker;
    private boolean timedOut;

    public RequestTimeouts(long requestTimeoutMs, long idleTimeoutMs) {
        this.requestTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(requestTimeoutMs);
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (ctx.channel().isActive()) {
            start(); // added once the protocol was chosen (after a TLS handshake or the h2c detector)
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        start();
        ctx.fireChannelActive();
    }

    private void start() {
        if (ticker != null || timedOut) {
            return;
        }
        idleSince = System.nanoTime();
        long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(requestTimeoutNanos, idleTimeoutNanos) / 4);
        ticker = ctx.executor().scheduleAtFixedRate(this::check, tick, tick, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (timedOut) {
            io.netty.util.ReferenceCountUtil.release(msg); // answered 408 already; the rest is not read
            return;
        }
        if (receivingSince == 0 && msg instanceof ByteBuf bytes && bytes.isReadable()) {
            receivingSince = System.nanoTime();
            messagesStyle = isMessagesRequest(bytes);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == ConnectionEvent.REQUEST_RECEIVED) {
            requestReceived();
        } else if (evt == ConnectionEvent.ANSWER_COMPLETE) {
            answerComplete();
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** A request was received whole (its last part decoded). */
    private void requestReceived() {
        receivingSince = 0;
        inProgress++;
    }

    /** The answer to a request was written whole. */
    private void answerComplete() {
        if (inProgress > 0) {
            inProgress--;
        }
        if (inProgress == 0 && receivingSince == 0) {
            idleSince = System.nanoTime();
        }
    }

    private void check() {
        if (!ctx.channel().isActive() || timedOut) {
            stopTicker();
            return;
        }
        long now = System.nanoTime();
        if (receivingSince != 0) {
            if (now - receivingSince >= requestTimeoutNanos) {
                stopTicker();
                timeOut();
            }
        } else if (inProgress == 0 && now - idleSince >= idleTimeoutNanos) {
            stopTicker();
            ctx.close();
        }
        // a request in progress: its exchange's own deadlines apply
    }

    private void stopTicker() {
        if (ticker != null) {
            ticker.cancel(false);
            ticker = null;
        }
    }

    /** 408 in the request's style, as raw bytes (this handler sits below the codec), then a lingering close. */
    private void timeOut() {
        timedOut = true;
        ApiStyle style = messagesStyle ? ApiStyle.ANTHROPIC : ApiStyle.OPENAI;
        String requestId = Ids.requestId();
        GatewayError error = new GatewayError(ErrorKind.REQUEST_TIMEOUT,
                "The request was not received in time; send the whole request within "
                        + TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos) + " ms.", null, null);
        ByteBuf body = ErrorBodies.body(ctx.alloc(), style, error, requestId);
        String head = "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: "
                + body.readableBytes() + "\r\nconnection: close\r\nx-request-id: " + requestId + "\r\nrequest-id: "
                + requestId + "\r\n\r\n";
        CompositeByteBuf out = ctx.alloc().compositeBuffer(2);
        out.addComponent(true, ctx.alloc().buffer(head.length()).writeBytes(head.getBytes(StandardCharsets.US_ASCII)));
        out.addComponent(true, body);
        ctx.writeAndFlush(out).addListener(f -> HttpResponses.lingeringClose(ctx.channel()));
    }

    /**
     * Whether the first bytes of a request are a POST to the messages path, as {@code POST /api/v1/messages} or in
     * absolute form ({@code POST http://host/api/v1/messages}, which the head validator turns into the path later).
     */
    static boolean isMessagesRequest(ByteBuf b) {
        int start = b.readerIndex();
        int end = b.writerIndex();
        if (!regionEquals(b, start, end, POST)) {
            return false;
        }
        int at = start + POST.length;
        if (at < end && b.getByte(at) != '/') {
            // absolute form: skip the scheme and the authority, up to the path's first '/'
            int slashes = 0;
            while (at < end && slashes < 3) {
                byte c = b.getByte(at);
                if (c == ' ') {
                    return false;
                }
                if (c == '/') {
                    slashes++;
                }
                at++;
            }
            if (slashes < 3) {
                return false;
            }
            at--;
        }
        return regionEquals(b, at, end, MESSAGES_PATH);
    }

    private static boolean regionEquals(ByteBuf b, int at, int end, byte[] expected) {
        if (end - at < expected.length) {
            return false;
        }
        for (int i = 0; i < expected.length; i++) {
            if (b.getByte(at + i) != expected[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stopTicker();
        ctx.fireChannelInactive();
    }
}
