package io.modelgateway.core.exchange;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.AttributeKey;

/**
 * Where an answer's writes start in a client pipeline. The server sets it on each HTTP/1.1 connection and HTTP/2
 * stream to the context of the handler just after the response observer (the request body aggregator): every handler
 * from there to the exchange's own is inbound only, so a write or flush started there meets exactly the handlers a
 * write from the exchange's context meets, without Netty walking past the ten request steps that ignore it, twice
 * for each event of a stream (its write and its flush).
 */
public final class AnswerStart {
    /** Set once per client channel, when its pipeline is built. */
    public static final AttributeKey<ChannelHandlerContext> KEY = AttributeKey.valueOf("gateway.answer-start");

    private AnswerStart() {
    }

    /** The context to write {@code ctx}'s answers from: the channel's answer start, or {@code ctx} without one. */
    public static ChannelHandlerContext of(ChannelHandlerContext ctx) {
        ChannelHandlerContext start = ctx.channel().attr(KEY).get();
        return start != null ? start : ctx;
    }
}
