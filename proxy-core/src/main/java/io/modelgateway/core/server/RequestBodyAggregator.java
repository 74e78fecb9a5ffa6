package io.modelgateway.core.server;

import io.modelgateway.core.exchange.ApiPaths;

import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Aggregates a request body up to the configured limit (32 MiB by default, GD-18). A body announced or
 * found to be larger is answered with 413 in the caller's style and the connection is closed without
 * reading the rest (a declared Content-Length over the limit is refused before any body byte is read).
 */
public final class RequestBodyAggregator extends HttpObjectAggregator {
    private final long limit;

    public RequestBodyAggregator(int maxContentLength) {
        super(maxContentLength, true);
        this.limit = maxContentLength;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        if (!(oversized instanceof HttpRequest request)) {
            ctx.close();
            return;
        }
        HttpUtil.setKeepAlive(oversized, false);
        GatewayError error = new GatewayError(ErrorKind.REQUEST_TOO_LARGE,
                "The request body is larger than the limit of " + limit + " bytes.", null, null);
        HttpResponses.sendError(ctx, ApiPaths.styleForPath(ApiPaths.path(request.uri())), error,
                Ids.requestId(), false);
    }
}
