package io.modelgateway.core.exchange;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * One step of a request's way down the server pipeline, with the continue / stop contract every step keeps: the
 * step {@link #check checks} the {@link GatewayRequest} (adding to it what it learned) and either lets it go on to
 * the next step, or stops it — the request is answered with the step's error in the caller's style, ended with the
 * step's outcome and released ({@link Exchanges#reject}). Anything that is not a request passes untouched, as does
 * the model list unless the step {@link #checksModelList checks it too}. Event-loop confined; a step holds no state
 * of its own between requests.
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
        GatewayError error = check(request);
        if (error == null) {
            ctx.fireChannelRead(request);
        } else {
            exchanges.reject(ctx, request, error, refusal());
        }
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
