package io.modelgateway.core.limit;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.RequestStep;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import java.util.logging.Logger;

/**
 * Request step: do the key's and the model's limits admit this request now? Reserves an estimate of its tokens
 * (input: a quarter of the body's bytes; output: see {@link #outputEstimate}) against every limit that applies;
 * refused, the request is answered 429 in its style with {@code Retry-After} and the rate-limit headers, its record
 * naming the limit, and released here; admitted, it goes on carrying its {@link Admission}, which the request's end
 * settles against the real usage ({@link Exchanges#end}). Before the rate limits, the key's spend budgets
 * ({@link SpendBudgets}) reserve the request's estimated cost at the dearest of the model's prices (and refuse when a
 * budget is used up); with a {@code redis} block the spend is shared too, checked by the same call to Redis as the
 * rate limits (and by the fallback's share of each budget while Redis is away).
 *
 * <p>Without a {@code redis} block the local {@link RateLimiter} decides at once, inside this call, allocating
 * nothing when no limit applies. With one, the {@link SharedLimiter} asks Redis: an answer known at once (no limit;
 * Redis known to be away) is taken at once too; otherwise the request is held here until the answer comes back on
 * this connection's event loop (at most the block's {@code timeout_ms}, then the fallback answers), and the loop
 * serves other connections meanwhile. A client that leaves while its request is held: the request is ended
 * (cancelled) and released at once, and the admission, when it comes, is settled with no tokens used — each once.
 *
 * <p>One per connection; event-loop confined. The pipelining gate passes one request at a time, so at most one is
 * held; this handler is the listener of its answer, so holding one allocates nothing of its own.
 */
public final class LimitCheck extends RequestStep implements GenericFutureListener<Future<Admission>> {
    private static final Logger LOG = Logger.getLogger(LimitCheck.class.getName());

    private final Limiters limiters;
    private final SpendBudgets spend;
    private ChannelHandlerContext ctx;
    /** The request held for the shared limits' answer, that answer and the request's input estimate; or null. */
    private GatewayRequest waiting;
    private Future<Admission> pending;
    private long waitingInputEstimate;

    public LimitCheck(Limiters limiters, Exchanges exchanges) {
        this(limiters, new SpendBudgets(), exchanges);
    }

    /** @param spend the keys' spend and its budgets (checked first, for a key with a budget or a priced model) */
    public LimitCheck(Limiters limiters, SpendBudgets spend, Exchanges exchanges) {
        super(exchanges);
        this.limiters = limiters;
        this.spend = spend;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    protected void decide(ChannelHandlerContext ctx, GatewayRequest request) {
        SharedAdmissions shared = limiters.sharedAdmissions();
        if (shared == null) {
            proceed(ctx, request, check(request));
            return;
        }
        if (waiting != null) {
            // The pipelining gate passes one request at a time; a second one here is a bug, not the caller's fault.
            LOG.warning("request " + request.requestId() + " arrived while another waited for the shared limits");
            exchanges().reject(ctx, request, GatewayError.of(ErrorKind.INTERNAL,
                    "The gateway failed to process the request."), Outcome.REJECTED);
            return;
        }
        long input = inputEstimate(request);
        long output = outputEstimate(request.endpoint(), request.peek(), request.model());
        // The spend is shared too: its budgets are checked and reserved by the same call.
        Future<Admission> answer = shared.admit(request.key(), request.model(), Saturating.add(input, output),
                spendEstimate(request, input, output), ctx.channel().eventLoop());
        if (answer.isDone()) {
            proceed(ctx, request, decided(request, answer.getNow(), input));
            return;
        }
        waiting = request;
        pending = answer;
        waitingInputEstimate = input;
        request.touch("limit-check: waiting for the shared limits");
        answer.addListener(this);
    }

    /** The local limits, decided at once. */
    @Override
    protected GatewayError check(GatewayRequest request) {
        ModelConfig model = request.model();
        long input = inputEstimate(request);
        long output = outputEstimate(request.endpoint(), request.peek(), model);
        SpendAdmission held = reserveSpend(request, input, output);
        if (held != null && !held.admitted()) {
            return refusedBySpend(request, held, input);
        }
        Admission admission = limiters.local().admit(request.key(), model, Saturating.add(input, output));
        return decided(request, withSpend(held, admission), input);
    }

    /** The shared limits answered (on this connection's loop: the answer completes there). */
    @Override
    public void operationComplete(Future<Admission> answer) {
        Admission admission = answer.getNow(); // the shared limiter's futures never fail
        if (answer != pending) {
            // The request was given up (its client left) before the answer came: give back what it reserved.
            if (admission != null) {
                admission.settle(0);
            }
            return;
        }
        GatewayRequest request = waiting;
        long input = waitingInputEstimate;
        waiting = null;
        pending = null;
        if (admission == null) {
            admission = Admission.UNLIMITED; // not reached: a future of the shared limiter never fails
        }
        if (!ctx.channel().isActive()) {
            // Closed, and channelInactive is on its way: end the request here, its admission settled by the end.
            request.admission(admission, input);
            exchanges().end(request, Outcome.CANCELLED);
            request.release();
            return;
        }
        proceed(ctx, request, decided(request, admission, input));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        abandon();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        abandon();
    }

    /** The connection is gone while a request waits: it ends now; its answer, when it comes, is settled unused. */
    private void abandon() {
        GatewayRequest request = waiting;
        if (request == null) {
            return;
        }
        waiting = null;
        pending = null;
        exchanges().end(request, Outcome.CANCELLED);
        request.release();
    }

    /**
     * The key's spend reserved for this request at the dearest of the model's prices: null where there is no spend to
     * count (no budget on the key, no price on the model), so a config without prices runs none of this.
     */
    private SpendAdmission reserveSpend(GatewayRequest request, long input, long output) {
        double estimate = spendEstimate(request, input, output);
        return estimate < 0 ? null : spend.admit(request.key(), estimate);
    }

    /**
     * The cost to reserve on the key's budgets, at the dearest of the model's prices (0 for a key without a budget,
     * whose spend is only counted); negative where there is no spend to count (no budget, no price).
     */
    private static double spendEstimate(GatewayRequest request, long input, long output) {
        KeyConfig key = request.key();
        ModelConfig model = request.model();
        boolean budgeted = !key.budget().isEmpty();
        if (!budgeted && !model.priced()) {
            return -1;
        }
        return budgeted ? model.costEstimate(input, output) : 0;
    }

    private static GatewayError refusedBySpend(GatewayRequest request, SpendAdmission held, long input) {
        request.admission(held, input);
        request.record().limit(held.refusedLimit());
        return held.error();
    }

    /** The local rate limits' admission with the spend reservation around it; a refusal gives the reservation back. */
    private static Admission withSpend(SpendAdmission held, Admission rateLimits) {
        if (held == null) {
            return rateLimits;
        }
        if (rateLimits.admitted()) {
            return held.wrap(rateLimits);
        }
        held.release();
        return rateLimits;
    }

    private static GatewayError decided(GatewayRequest request, Admission admission, long inputEstimate) {
        request.admission(admission, inputEstimate);
        if (admission.admitted()) {
            return null;
        }
        request.record().limit(admission.refusedLimit());
        return admission.error();
    }

    @Override
    protected Outcome refusal() {
        return Outcome.LIMITED;
    }

    /** A quarter of the body's bytes; none for count_tokens, which generates nothing (a request counted, no tokens). */
    private static long inputEstimate(GatewayRequest request) {
        return request.endpoint() == Endpoint.COUNT_TOKENS || request.endpoint() == Endpoint.RESPONSES_INPUT_TOKENS ? 0
                : Math.max(1, request.body().readableBytes() / 4);
    }

    /**
     * Output tokens to reserve before the answer is known: the caller's cap, else the default cap used when
     * translating (GD-12), for each of {@code n} choices; nothing for embeddings.
     */
    static long outputEstimate(Endpoint endpoint, RequestPeek peek, ModelConfig model) {
        if (endpoint == Endpoint.EMBEDDINGS || endpoint == Endpoint.COUNT_TOKENS
                || endpoint == Endpoint.RESPONSES_INPUT_TOKENS) {
            return 0;
        }
        long cap = peek.maxTokens() > 0 ? peek.maxTokens()
                : model.maxOutputTokens() > 0 ? Math.min(4096, model.maxOutputTokens()) : 4096;
        return Saturating.multiply(cap, Math.max(1, peek.n()));
    }
}
