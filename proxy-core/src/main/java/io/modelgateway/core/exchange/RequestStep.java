package io.modelgateway.core.exchange;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * One step of a request's way down the server pipeline, with the continue / stop contract every step keeps: the
 * step {@link #check checks} the {@link GatewayRequest} (adding to it what it learned) and either lets it go on to
 * the next step, or stops it — the request is answered with the step's error in the caller's style, ended with the
 * step's outcome and released ({@link Exchanges#reject}). Anything that is not a request passes untouched, as does
 * the model list unless the step {@link #checksModelList checks it too}.
 *
 * <p>A step whose answer is not known at once (the shared limits ask Redis) overrides {@link #decide}: it holds
 * the request, owning it, without blocking the loop, and later ends the hold with exactly one call of
 * {@link #proceed} on the channel's event loop; if the connection closes first, the step ends and releases the
 * request itself (outcome {@link Outcome#CANCELLED}). The pipelining gate in front passes one request at a time, so
 * a step holds at most one. Event-loop confined; a step holds no state of its own between requests, and one that
 * holds none at all is {@link io.netty.channel.ChannelHandler.Sharable shared}: one instance serves every connection
 * and stream of a listener.
 */
public abstract class RequestStep extends ChannelInboundHandlerAdapter {
    private final Exchanges exchanges;

    protected RequestStep(Exchanges exchanges) {
        this.exchanges = exchanges;
    }

    @Override
    public final void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GatewayRequest request) || (request.isModelList() && !checksModelList())) {
            ctx.fireChannelRead(msg);
            return;
        }
        decide(ctx, request);
    }

    /**
     * Decides on {@code request}, which the step now owns: by default at once, by {@link #check}. A step that
     * answers later overrides this and calls {@link #proceed} when it knows.
     */
    protected void decide(ChannelHandlerContext ctx, GatewayRequest request) {
        proceed(ctx, request, check(request));
    }

    /**
     * Lets {@code request} go on to the next step ({@code error} null), or stops it: answered with {@code error},
     * ended with {@link #refusal()}, released. On the channel's event loop; ownership of the request moves on.
     */
    protected final void proceed(ChannelHandlerContext ctx, GatewayRequest request, GatewayError error) {
        if (error == null) {
            ctx.fireChannelRead(request);
        } else {
            exchanges.reject(ctx, request, error, refusal());
        }
    }

    /** The beginning and end of every request, for a step that ends one itself (a held request whose client left). */
    protected final Exchanges exchanges() {
        return exchanges;
    }

    /** Null to let the request go on; else the error that stops it. */
    protected abstract GatewayError check(GatewayRequest request);

    /** The outcome of a request this step stops. */
    protected Outcome refusal() {
        return Outcome.REJECTED;
    }

    /** Whether {@code GET /api/v1/models} passes this step too (it has no body and names no model). */
    protected boolean checksModelList() {
        return false;
    }
}
