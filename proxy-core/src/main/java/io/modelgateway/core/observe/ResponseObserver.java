package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ConnectionEvent;

import io.modelgateway.core.exchange.ExchangeRecord;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import java.util.ArrayDeque;

/**
 * Watches what the gateway writes to its client and stamps it on the exchange's record: the status and
 * time of the response head, the body bytes and the time of the first one (time to first token for a
 * stream), and the end of the response.
 *
 * <p>Where it sits: in the server pipeline right after the HTTP codec, on the application side
 * ({@code addAfter(HTTP_CODEC, ...)}), so every {@code HttpObject} any handler writes passes it on its
 * way to the codec, whoever wrote it. Inbound messages go by untouched.
 *
 * <p>Which record: HTTP/1.1 answers requests in order, so records wait in a FIFO. Whoever makes a record
 * for a request calls {@link #expect} (in request order, on this channel's event loop) before that request's
 * answer can be written. A non-1xx {@link HttpResponse} stamps the head of the FIFO; {@link HttpContent}
 * adds body bytes to it (a stream's chunks that enter below the codec, {@code ChunkOut}, do not pass here: their
 * writer stamps the record itself); the connection's {@link ConnectionEvent#ANSWER_COMPLETE} signal completes it and takes it
 * off the FIFO. With the FIFO empty (health, readiness, a 413 from the aggregator — anything
 * answered before a record exists), writes pass untouched. Interim 1xx responses (100 Continue) are not the
 * answer and are ignored.
 *
 * <p>Ownership: it never retains, releases or copies a message; each one goes on to the codec with its
 * promise exactly as written. Per write it costs a few {@code instanceof} checks and one
 * {@link System#nanoTime()}, and allocates nothing.
 *
 * <p>Threading: one instance per channel; the FIFO is touched only on the channel's event loop.
 */
public final class ResponseObserver extends ChannelDuplexHandler {
    /** Records whose response has not been completely written, oldest first. Event loop only. */
    private final ArrayDeque<ExchangeRecord> pending = new ArrayDeque<>(4);

    /** Queues the record of the next request to be answered on this connection. Call on the event loop. */
    public void expect(ExchangeRecord record) {
        pending.addLast(record);
    }

    /** Records still waiting for (the end of) their response; for tests and diagnostics. */
    public int pendingCount() {
        return pending.size();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        ExchangeRecord record = pending.peekFirst();
        if (record != null) {
            observe(record, msg);
        }
        ctx.write(msg, promise);
    }

    private void observe(ExchangeRecord record, Object msg) {
        long now = System.nanoTime();
        if (msg instanceof HttpResponse response) {
            int status = response.status().code();
            if (status < 200) {
                return; // interim response: the real head (and its record) is still to come
            }
            record.head(status, now);
        }
        if (msg instanceof HttpContent content) {
            record.bodyBytes(content.content().readableBytes(), now);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt == ConnectionEvent.ANSWER_COMPLETE) {
            ExchangeRecord record = pending.pollFirst();
            if (record != null) {
                record.markResponseComplete();
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        // The records belong to their exchanges, which end them; only drop our references.
        pending.clear();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        pending.clear();
    }
}
