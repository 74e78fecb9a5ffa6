package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ApiPaths;

import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;

/**
 * Aggregates a request body up to the configured limit (32 MiB by default, GD-18). A body announced or
 * found to be larger is answered with 413 in the caller's style and the connection is closed without
 * reading the rest (a declared Content-Length over the limit is refused before any body byte is read).
 *
 * <p>Most requests arrive whole in one read: the codec hands on their head, then one last content holding the
 * whole body. Such a request is made whole from that content's buffer as it is, without Netty's aggregator
 * gathering it into a composite buffer first (a composite, its component array and a component per request, and a
 * second reference count to release). To know, the head waits for the next message: if it is a last content that
 * succeeded and fits the limit, the request is whole; anything else (a body in several pieces, a failed decode)
 * goes through Netty's aggregator as it would have, the head first. Heads the aggregator must act on at once (an
 * {@code Expect} header, a declared length over the limit, a failed decode) never wait. The whole request is the
 * same either way: Netty's own message type, {@code Transfer-Encoding: chunked} removed, {@code Content-Length} set
 * when missing, the trailers kept ({@code RequestBodyAggregatorTest} compares the two on random requests).
 */
public final class RequestBodyAggregator extends HttpObjectAggregator {
    /** A request head whose first body message has not come yet (not reference-counted). */
    private HttpRequest waitingHead;

    public RequestBodyAggregator(int maxContentLength) {
        super(maxContentLength, true);
    }

    @Override
    public boolean acceptInboundMessage(Object msg) throws Exception {
        return (waitingHead != null && msg instanceof HttpContent) || super.acceptInboundMessage(msg);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, HttpObject msg, List<Object> out) throws Exception {
        HttpRequest head = waitingHead;
        if (head != null) {
            waitingHead = null;
            if (msg instanceof LastHttpContent last && last.decoderResult().isSuccess()
                    && last.content().readableBytes() <= maxContentLength()) {
                FullHttpMessage whole = beginAggregation(head, last.content().retain());
                aggregate(whole, last);
                finishAggregation(whole);
                out.add(whole);
                return;
            }
            super.decode(ctx, head, out); // begins aggregating, as if the head had not waited
        } else if (msg instanceof HttpRequest request && !(msg instanceof FullHttpRequest) && canWait(request)) {
            waitingHead = request;
            return;
        }
        super.decode(ctx, msg, out);
    }

    /** Whether the aggregator has nothing to do for {@code head} before its body comes. */
    private boolean canWait(HttpRequest head) {
        if (!head.decoderResult().isSuccess() || head.headers().contains(HttpHeaderNames.EXPECT)) {
            return false;
        }
        try {
            return HttpUtil.getContentLength(head, -1L) <= maxContentLength();
        } catch (NumberFormatException e) {
            return false; // the aggregator's own check lets such a head pass; it does so from there
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (waitingHead != null && !ctx.channel().config().isAutoRead()) {
            ctx.read(); // the rest of the request is needed to answer it, as while aggregating
        }
        super.channelReadComplete(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        HttpRequest head = waitingHead;
        if (head != null) {
            // Closed between the head and its body: the aggregator reports it as for a body cut short.
            waitingHead = null;
            super.decode(ctx, head, new ArrayList<>(0));
        }
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        waitingHead = null;
        super.handlerRemoved(ctx);
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        if (!(oversized instanceof HttpRequest request)) {
            ctx.close();
            return;
        }
        HttpUtil.setKeepAlive(oversized, false);
        GatewayError error = new GatewayError(ErrorKind.REQUEST_TOO_LARGE,
                "The request body is larger than the limit of " + maxContentLength() + " bytes.", null, null);
        HttpResponses.sendError(ctx, ApiPaths.styleForPath(ApiPaths.path(request.uri())), error,
                Ids.requestId(), false);
    }
}
