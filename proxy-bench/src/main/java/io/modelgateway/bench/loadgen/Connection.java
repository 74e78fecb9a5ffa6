package io.modelgateway.bench.loadgen;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;

/**
 * One of the {@code --connections}: a keep-alive HTTP/1.1 connection that sends the request, reads
 * the answer, and sends again — at once (closed loop) or at its next scheduled time (open loop). It
 * outlives its channel: when the channel closes (server closed it, a timeout, a protocol error) it
 * reconnects, keeping its schedule, so a server that drops connections costs requests, not load.
 *
 * <p>Everything here runs on one event loop (the channel is always bootstrapped on {@link
 * LoopStats#loop}), so there is no synchronisation. The {@link Reader} handler sits after the HTTP
 * client codec and releases every message it is given.
 *
 * <p><b>Latency origin.</b> In a closed loop an exchange is timed from its actual send. In an open loop
 * it is timed from the moment the schedule said it should be sent, even when the connection was still
 * busy with the previous answer then: a server that stalls holds up the requests queued behind the
 * stall, and their waiting shows in the percentiles (the correction for coordinated omission that wrk2
 * made known). Time to first token is measured from the same origin.
 */
final class Connection {
    private static final int IDLE = 0;
    private static final int CONNECTING = 1;
    private static final int AWAITING_HEAD = 2;
    private static final int READING_BODY = 3;

    private final LoadRun run;
    private final LoopStats stats;
    private final SseScanner sse = new SseScanner();
    private final long interval; // open loop: nanoseconds between this connection's sends; 0 = closed loop

    private Channel channel;
    private int state = IDLE;
    private boolean started;
    private long nextSend;       // open loop: the scheduled time of the next request
    private boolean sendPending; // open loop: a timer will send
    private boolean discarding;  // we are closing the channel on purpose: ignore what it still delivers

    // The exchange in flight.
    private long origin;      // latency origin (scheduled or actual send)
    private long sentAt;      // actual send, for the timeout
    private long lastEventAt;
    private long events;
    private int status;
    /** The head of the current answer was counted (measuring, not stopped): its status error must be too. */
    private boolean headCounted;
    private boolean stream;
    private boolean keepAlive;

    Connection(LoadRun run, LoopStats stats, long interval) {
        this.run = run;
        this.stats = stats;
        this.interval = interval;
    }

    EventLoop loop() {
        return stats.loop;
    }

    /** Opens the channel. {@code onDone} (may be null) runs once the first attempt succeeded or failed. */
    void connect(Runnable onDone) {
        if (run.stopped()) {
            if (onDone != null) {
                onDone.run();
            }
            return;
        }
        state = CONNECTING;
        ChannelFuture f = run.bootstrap(stats.loop, new Reader()).connect(run.address());
        f.addListener((ChannelFuture done) -> {
            if (onDone != null) {
                onDone.run();
            }
            if (done.isSuccess()) {
                channel = done.channel();
                discarding = false;
                stats.open(1);
                state = IDLE;
                if (started) {
                    sendNext();
                }
            } else {
                state = IDLE;
                if (!run.stopped()) {
                    error(ErrorKind.CONNECT);
                    // Not at once: a server that refuses would turn this into a busy loop.
                    stats.loop.schedule(() -> connect(null), 100, TimeUnit.MILLISECONDS);
                }
            }
        });
    }

    /** The load starts: {@code firstSend} is this connection's first scheduled time (open loop). */
    void start(long firstSend) {
        started = true;
        nextSend = firstSend;
        if (channel != null && state == IDLE) {
            sendNext();
        }
    }

    /** Called every so often on the event loop: an exchange older than the timeout fails. */
    void checkTimeout(long now, long timeoutNanos) {
        if ((state == AWAITING_HEAD || state == READING_BODY) && now - sentAt > timeoutNanos) {
            endExchange();
            error(ErrorKind.TIMEOUT);
            closeOnPurpose();
        }
    }

    /** Closes the channel for good (the run is over). */
    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    private void sendNext() {
        if (run.stopped() || channel == null || !channel.isActive() || sendPending) {
            return;
        }
        long now = System.nanoTime();
        if (interval == 0) {
            send(now, now);
        } else if (nextSend - now <= 0) {
            long scheduled = nextSend;
            nextSend += interval;
            send(scheduled, now);
        } else {
            sendPending = true;
            stats.loop.schedule(() -> {
                sendPending = false;
                if (state == IDLE) {
                    sendNext();
                }
            }, nextSend - now, TimeUnit.NANOSECONDS);
        }
    }

    private void send(long origin, long now) {
        this.origin = origin;
        this.sentAt = now;
        this.events = 0;
        this.status = 0;
        this.stream = false;
        this.keepAlive = true;
        state = AWAITING_HEAD;
        stats.busy(1);
        // A write failure is reported through exceptionCaught, which closes the channel.
        channel.writeAndFlush(stats.template.newRequest(), channel.voidPromise());
    }

    private void endExchange() {
        state = IDLE;
        stats.busy(-1);
    }

    private void onHead(HttpResponse head) {
        if (state != AWAITING_HEAD || head.decoderResult().isFailure()) {
            protocolError();
            return;
        }
        state = READING_BODY;
        status = head.status().code();
        // An answer whose head is counted has its status error counted too, even if the run stops before its end.
        headCounted = run.measuring() && !run.stopped();
        stats.head(status, headCounted);
        keepAlive = HttpUtil.isKeepAlive(head);
        String type = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
        stream = type != null && type.regionMatches(true, 0, "text/event-stream", 0, 17);
        if (stream) {
            sse.reset();
        }
    }

    private void onContent(HttpContent content) {
        if (state != READING_BODY || content.decoderResult().isFailure()) {
            protocolError();
            return;
        }
        boolean last = content instanceof LastHttpContent;
        if (stream && status / 100 == 2) {
            int n = sse.scan(content.content());
            if (last) {
                n += sse.finish();
            }
            if (n > 0) {
                onEvents(n, System.nanoTime());
            }
        }
        if (last) {
            onAnswerEnd(System.nanoTime());
        }
    }

    /** {@code n} content events arrived together at {@code now}. */
    private void onEvents(int n, long now) {
        if (run.measuring()) {
            if (events == 0) {
                stats.ttft.recordValue(LoopStats.micros(now - origin));
            } else {
                stats.itl.recordValue(LoopStats.micros(now - lastEventAt));
            }
            if (n > 1) {
                // Events that came in one read are, as far as the client can tell, zero apart.
                stats.itl.recordValueWithCount(0, n - 1);
            }
            stats.events += n;
        }
        events += n;
        lastEventAt = now;
    }

    private void onAnswerEnd(long now) {
        endExchange();
        boolean measuring = run.measuring();
        if (status / 100 != 2) {
            if (headCounted) {
                stats.statusError(status, true);
            } else if (!run.stopped()) {
                stats.statusError(status, measuring);
            }
        } else if (stream && sse.failed()) {
            error(ErrorKind.STREAM_ERROR);
        } else if (stream && !sse.ended()) {
            error(ErrorKind.STREAM_CUT);
        } else {
            if (measuring) {
                stats.latency.recordValue(LoopStats.micros(now - origin));
                stats.completed++;
                if (stream) {
                    stats.streams++;
                    stats.streamEvents += events;
                }
            }
            stats.completedAnyPhase();
        }
        if (!keepAlive) {
            closeOnPurpose();
            return;
        }
        sendNext();
    }

    private void protocolError() {
        if (state == AWAITING_HEAD || state == READING_BODY) {
            endExchange();
        }
        error(ErrorKind.PROTOCOL);
        closeOnPurpose();
    }

    /** Counts an error, unless the run is over (then the exchange was merely cut short by the stop). */
    private void error(ErrorKind kind) {
        if (!run.stopped()) {
            stats.error(kind, run.measuring());
        }
    }

    /** Closes with no exchange in flight; {@link #onClosed} then only reconnects. */
    private void closeOnPurpose() {
        discarding = true;
        channel.close();
    }

    private void onClosed(Channel closed) {
        if (closed != channel) {
            return;
        }
        channel = null;
        stats.open(-1);
        if (state == AWAITING_HEAD || state == READING_BODY) {
            ErrorKind kind = state == AWAITING_HEAD ? ErrorKind.CLOSED_BEFORE_RESPONSE
                    : stream ? ErrorKind.STREAM_CUT : ErrorKind.CLOSED_MID_BODY;
            endExchange();
            error(kind);
        }
        state = IDLE;
        if (!run.stopped()) {
            connect(null);
        }
    }

    /** The pipeline's last handler for one channel of this connection. Releases what it reads. */
    private final class Reader extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (ctx.channel() != channel || discarding) {
                    return;
                }
                if (!(msg instanceof HttpObject)) {
                    protocolError();
                    return;
                }
                if (msg instanceof HttpResponse head) {
                    onHead(head);
                }
                // onHead may have failed the exchange (state IDLE, discarding): the body is not read then.
                if (msg instanceof HttpContent content && !discarding) {
                    onContent(content);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            onClosed(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // Resets, write failures, decoder exceptions: the close that follows decides the error kind.
            ctx.close();
        }
    }
}
