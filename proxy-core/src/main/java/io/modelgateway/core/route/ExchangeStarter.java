package io.modelgateway.core.route;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.codecs.usage.InputTokenCounter;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.Outcome;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Terminal step of the server pipeline: starts the exchange of a request every step before it let through, and
 * stays its connection's side of it until it ends. For a model with one deployment, no retries and no fallback the
 * exchange is that one attempt ({@link AttemptPlanner}); otherwise a {@link RetryingExchange} balances, retries and
 * falls back over the model's deployments. Client events reach the exchange from here: writability (backpressure),
 * a failed write, the connection closing (cancel). At the exchange's end the request is ended ({@link Exchanges#end})
 * and released, and a connection whose request asked to close is closed once the answer is written.
 *
 * <p>One exchange at a time per connection: the pipelining gate in front passes the next request only once the
 * answer ahead of it is complete, which is after the exchange ended here.
 */
public final class ExchangeStarter extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Logger.getLogger(ExchangeStarter.class.getName());

    private final Routing routing;
    private final AttemptPlanner planner;
    private final Exchanges exchanges;
    /** Where every exchange of this connection reports its end (one object, not one per request). */
    private final Consumer<Outcome> onDone = this::exchangeDone;
    private ChannelHandlerContext ctx;
    private Exchange active;
    private GatewayRequest activeRequest;

    public ExchangeStarter(Routing routing, AttemptPlanner planner, Exchanges exchanges) {
        this.routing = routing;
        this.planner = planner;
        this.exchanges = exchanges;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GatewayRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (active != null) {
            // The pipelining gate passes one request at a time; a second one here is a bug, not the caller's fault.
            LOG.warning("request " + request.requestId() + " arrived while another exchange was active");
            exchanges.reject(ctx, request, GatewayError.of(ErrorKind.INTERNAL,
                    "The gateway failed to process the request."), Outcome.REJECTED);
            return;
        }
        request.touch("exchange");
        if (request.endpoint() == Endpoint.COUNT_TOKENS && countsItself(request.model())) {
            countTokens(ctx, request);
            return;
        }
        Exchange exchange;
        try {
            exchange = plan(request);
        } catch (TranslationException e) {
            exchanges.reject(ctx, request, e.error(), Outcome.REJECTED);
            return;
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "request " + request.requestId() + " failed", e);
            if (request.refCnt() > 0 && !request.record().ended()) {
                exchanges.reject(ctx, request, GatewayError.of(ErrorKind.INTERNAL,
                        "The gateway failed to process the request."), Outcome.REJECTED);
            }
            return;
        }
        active = exchange;
        activeRequest = request;
        exchange.start();
    }

    private Exchange plan(GatewayRequest request) throws TranslationException {
        ModelConfig model = request.model();
        ModelRoute route = routing.table(request.config()).route(model.name());
        if (route.singleAttempt()) {
            // One deployment, no retries, no fallback: the exchange is the attempt, with nothing around it.
            DeploymentConfig deployment = model.deployments().get(0);
            request.record().deployment(deployment);
            request.record().newAttempt();
            if (request.trace() != null) {
                request.trace().attemptStarted(deployment);
            }
            return planner.attempt(ctx, request, model, deployment, AttemptHook.NONE, onDone);
        }
        RetryingExchange exchange = new RetryingExchange(ctx, request, route, planner, onDone);
        exchange.prepare();
        return exchange;
    }

    /**
     * The gateway answers count_tokens itself when the model's first deployment speaks OpenAI's style, which has
     * no such endpoint, or is on Amazon Bedrock (whose CountTokens operation the gateway does not call yet), or speaks
     * Gemini's (vertex, gemini: their countTokens is not translated); an Anthropic provider counts for itself and the
     * simulator answers it.
     */
    private static boolean countsItself(ModelConfig model) {
        ProviderType type = model.deployments().get(0).provider().type();
        return type.style() == ApiStyle.OPENAI || type == ProviderType.BEDROCK // openai, azure_openai; bedrock
                || type.style() == ApiStyle.GEMINI; // vertex, gemini
    }

    /** {@code {"input_tokens": N}} by the gateway's tokenizer ({@link InputTokenCounter}); nothing is accounted. */
    private void countTokens(ChannelHandlerContext ctx, GatewayRequest request) {
        DeploymentConfig deployment = request.model().deployments().get(0);
        request.record().deployment(deployment.provider().name(), deployment.upstreamModel());
        long n = InputTokenCounter.messagesRequest(request.body());
        if (n < 0) {
            n = Math.max(1, request.body().readableBytes() / 4);
        }
        byte[] body = ("{\"input_tokens\":" + n + "}").getBytes(StandardCharsets.US_ASCII);
        try {
            HttpResponses.sendJson(ctx, HttpResponseStatus.OK, Unpooled.wrappedBuffer(body), request.requestId(),
                    request.keepAlive());
        } finally {
            exchanges.end(request, Outcome.DONE);
            request.release();
        }
    }

    /** The active exchange is over (its record holds the tokens used): settle, observe, release. */
    private void exchangeDone(Outcome outcome) {
        GatewayRequest r = activeRequest;
        active = null;
        activeRequest = null;
        if (r == null) {
            return;
        }
        exchanges.end(r, outcome);
        boolean keepAlive = r.keepAlive();
        r.release();
        if (!keepAlive && ctx.channel().isActive()) {
            // Everything written before this empty write is on the wire when it completes.
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (active != null) {
            active.clientWritabilityChanged(ctx.channel().isWritable());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Exchange a = active;
        if (a != null) {
            a.cancel(); // runs exchangeDone, which ends and releases the request
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // I/O errors on the client connection (reset by peer and the like), and writes of an answer that failed
        // (exchanges write with the void promise): the exchange hears of it first, then the connection is closed;
        // channelInactive cleans up.
        Exchange a = active;
        if (a != null) {
            a.clientFailed(cause);
        }
        ctx.close();
    }
}
