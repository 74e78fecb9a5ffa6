package io.modelgateway.core.server;

import io.modelgateway.core.exchange.HttpResponses;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2SettingsAckFrame;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The connection-level duties of an HTTP/2 connection, between the frame codec and the stream multiplexer (the
 * per-request ones run in each stream's own pipeline, as on HTTP/1.1):
 * <ul>
 *   <li>Idle timeout: a connection with no stream open for {@code idle_timeout_ms} is closed with GOAWAY
 *       (NO_ERROR). Control frames do not count as activity, so pings cannot keep an idle connection open.</li>
 *   <li>Control-frame flood (SETTINGS and PING, CVE-2019-9512/9515): this guard answers them (the codec's
 *       auto-ack is off), so a peer that sends more than {@link #MAX_CONTROL_FRAMES} of them within
 *       {@link #CONTROL_WINDOW_NANOS} gets no more answers, a GOAWAY (ENHANCE_YOUR_CALM) and a lingering close; a
 *       peer that sends them without reading the answers is cut off by the codec's own cap on queued control
 *       frames.</li>
 *   <li>Drain ({@link StreamGuard#DRAIN}): GOAWAY (NO_ERROR) so the client opens no new stream, the streams open
 *       finish, and the connection closes when the last one does. At the deadline
 *       ({@link StreamGuard#DRAIN_DEADLINE}) each open stream is told, so a stream answer ends with the style's
 *       error event exactly as on HTTP/1.1, and the connection closes.</li>
 * </ul>
 * It knows the open streams because the stream initializer registers each one ({@link #streamOpened}); streams run on
 * this connection's event loop, so everything here is event-loop confined. Frames pass on untouched.
 */
public final class Http2ConnectionGuard extends ChannelDuplexHandler {
    private static final Logger LOG = Logger.getLogger(Http2ConnectionGuard.class.getName());
    static final int MAX_CONTROL_FRAMES = 200;
    static final long CONTROL_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final long idleTimeoutNanos;
    private final Set<Channel> streams = new LinkedHashSet<>();
    private ChannelHandlerContext ctx;
    private long idleSince;
    private ScheduledFuture<?> ticker;
    private boolean draining;
    private long controlWindowStart;
    private int controlFrames;

    public Http2ConnectionGuard(long idleTimeoutMs) {
        this.idleTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(idleTimeoutMs);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        idleSince = System.nanoTime();
        controlWindowStart = idleSince;
        long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(10), idleTimeoutNanos / 4);
        ticker = ctx.executor().scheduleAtFixedRate(this::checkIdle, tick, tick, TimeUnit.NANOSECONDS);
    }

    /** A stream's channel was made (the stream initializer calls this); it is forgotten when it closes. */
    void streamOpened(Channel stream) {
        streams.add(stream);
        stream.closeFuture().addListener(f -> streamClosed(stream));
    }

    private void streamClosed(Channel stream) {
        if (streams.remove(stream) && streams.isEmpty()) {
            idleSince = System.nanoTime();
            if (draining) {
                ctx.close();
            }
        }
    }

    /** Streams open now (tests). */
    int openStreams() {
        return streams.size();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2PingFrame || (msg instanceof Http2SettingsFrame)) {
            long now = System.nanoTime();
            if (now - controlWindowStart > CONTROL_WINDOW_NANOS) {
                controlWindowStart = now;
                controlFrames = 0;
            }
            if (++controlFrames > MAX_CONTROL_FRAMES) {
                if (controlFrames == MAX_CONTROL_FRAMES + 1) {
                    LOG.log(Level.INFO, "http2: " + ctx.channel().remoteAddress() + " sent more than "
                            + MAX_CONTROL_FRAMES + " SETTINGS and PING frames in "
                            + TimeUnit.NANOSECONDS.toSeconds(CONTROL_WINDOW_NANOS) + " s; closing the connection");
                    goAwayAndClose(ctx, Http2Error.ENHANCE_YOUR_CALM);
                }
                return; // not answered: neither frame is reference-counted
            }
            // The codec leaves the answers to this guard (auto-ack off), so a flood past the limit gets none: the rest
            // of a read already in the codec costs nothing more, however the transport splits the reads.
            if (msg instanceof Http2PingFrame ping && !ping.ack()) {
                ctx.write(new DefaultHttp2PingFrame(ping.content(), true));
            } else if (msg instanceof Http2SettingsFrame) {
                ctx.write(Http2SettingsAckFrame.INSTANCE); // the codec applies the peer's settings as the ack goes out
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush(); // the acks written while the read was decoded
        ctx.fireChannelReadComplete();
    }

    /**
     * GOAWAY, then a lingering close: a flooding peer has more frames in flight, and closing a socket with unread
     * input makes the kernel reset it, which can destroy the GOAWAY before the peer reads it. What still arrives is
     * dropped in front of the codec (it answers nothing more) until the peer closes or the linger ends.
     */
    private static void goAwayAndClose(ChannelHandlerContext ctx, Http2Error error) {
        ctx.writeAndFlush(new DefaultHttp2GoAwayFrame(error)).addListener(f -> {
            Channel ch = ctx.channel();
            if (ch.pipeline().get(PipelineNames.H2_CODEC) != null) {
                ch.pipeline().addBefore(PipelineNames.H2_CODEC, PipelineNames.DISCARD, DiscardInbound.INSTANCE);
            }
            HttpResponses.lingeringClose(ch);
        });
    }

    /** Drops everything read: the input of a connection that is only being closed. */
    @Sharable
    static final class DiscardInbound extends ChannelInboundHandlerAdapter {
        static final DiscardInbound INSTANCE = new DiscardInbound();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == StreamGuard.DRAIN) {
            if (!draining) {
                draining = true;
                ctx.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR));
                if (streams.isEmpty()) {
                    ctx.close();
                }
            }
            return;
        }
        if (evt == StreamGuard.DRAIN_DEADLINE) {
            // Each stream ends its own answer (its stream guard knows the style); then the connection goes.
            List<Channel> open = new ArrayList<>(streams);
            for (Channel stream : open) {
                stream.pipeline().fireUserEventTriggered(StreamGuard.DRAIN_DEADLINE);
            }
            ctx.channel().eventLoop().execute(ctx::close);
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void checkIdle() {
        if (!ctx.channel().isActive()) {
            stopTicker();
            return;
        }
        if (streams.isEmpty() && System.nanoTime() - idleSince >= idleTimeoutNanos) {
            stopTicker();
            ctx.close(); // the codec says GOAWAY (NO_ERROR) first
        }
    }

    private void stopTicker() {
        if (ticker != null) {
            ticker.cancel(false);
            ticker = null;
        }
    }

    /**
     * A stream's error goes on to the multiplexer (which hands it to that stream's channel); a connection error (a
     * protocol violation, rapid reset, a CONTINUATION flood) is one log line without a stack trace; the codec then
     * sends GOAWAY with the error's code and closes the connection itself. Anything else closes it here.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof io.netty.handler.codec.http2.Http2FrameStreamException) {
            ctx.fireExceptionCaught(cause);
            return;
        }
        Throwable reason = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                ? cause.getCause() : cause;
        LOG.log(Level.INFO, "http2: closing the connection of " + ctx.channel().remoteAddress() + ": "
                + reason.getMessage());
        if (io.netty.handler.codec.http2.Http2CodecUtil.getEmbeddedHttp2Exception(cause) == null) {
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        stopTicker();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stopTicker();
    }
}
