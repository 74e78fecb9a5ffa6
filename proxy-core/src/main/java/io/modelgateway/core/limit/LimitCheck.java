package io.modelgateway.core.limit;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.RequestStep;
import io.modelgateway.codecs.error.GatewayError;

/**
 * Request step: do the key's and the model's limits admit this request now? Reserves an estimate of its tokens
 * (input: a quarter of the body's bytes; output: see {@link #outputEstimate}) against every limit that applies
 * ({@link RateLimiter#admit}); refused, the request is answered 429 in its style with {@code Retry-After} and the
 * rate-limit headers, its record naming the limit, and released here; admitted, it goes on carrying its
 * {@link Admission}, which the request's end settles against the real usage ({@link Exchanges#end}). Before the rate
 * limits, the key's spend budgets ({@link SpendBudgets}) reserve the request's estimated cost at the dearest of the
 * model's prices (and refuse when a budget is used up). Event-loop confined; the limiter is shared and lock-free.
 */
public final class LimitCheck extends RequestStep {
    private final RateLimiter limiter;
    private final SpendBudgets spend;

    public LimitCheck(RateLimiter limiter, Exchanges exchanges) {
        this(limiter, new SpendBudgets(), exchanges);
    }

    /** @param spend the keys' spend and its budgets (checked first, for a key with a budget or a priced model) */
    public LimitCheck(RateLimiter limiter, SpendBudgets spend, Exchanges exchanges) {
        super(exchanges);
        this.limiter = limiter;
        this.spend = spend;
    }

    @Override
    protected GatewayError check(GatewayRequest request) {
        ModelConfig model = request.model();
        KeyConfig key = request.key();
        long inputEstimate = Math.max(1, request.body().readableBytes() / 4);
        long outputEstimate = outputEstimate(request.endpoint(), request.peek(), model);
        // Spend first, and only where there is any: a key with a budget, or a model with a price (whose cost the key's
        // spend counts). Nothing here runs for a config without prices.
        SpendAdmission held = null;
        boolean budgeted = !key.budget().isEmpty();
        if (budgeted || model.priced()) {
            held = spend.admit(key, budgeted ? model.costEstimate(inputEstimate, outputEstimate) : 0);
            if (!held.admitted()) {
                request.admission(held, inputEstimate);
                request.record().limit(held.refusedLimit());
                return held.error();
            }
        }
        Admission admission = limiter.admit(key, model, Saturating.add(inputEstimate, outputEstimate));
        if (held != null) {
            if (admission.admitted()) {
                admission = held.wrap(admission);
            } else {
                held.release();
            }
        }
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

    /**
     * Output tokens to reserve before the answer is known: the caller's cap, else the default cap used when
     * translating (GD-12), for each of {@code n} choices; nothing for embeddings.
     */
    static long outputEstimate(Endpoint endpoint, RequestPeek peek, ModelConfig model) {
        if (endpoint == Endpoint.EMBEDDINGS) {
            return 0;
        }
        long cap = peek.maxTokens() > 0 ? peek.maxTokens()
                : model.maxOutputTokens() > 0 ? Math.min(4096, model.maxOutputTokens()) : 4096;
        return Saturating.multiply(cap, Math.max(1, peek.n()));
    }
}
