package io.modelgateway.core.limit;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.json.RequestPeek;
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
 * {@link Admission}, which the request's end settles against the real usage ({@link Exchanges#end}). Event-loop
 * confined; the limiter is shared and lock-free.
 */
public final class LimitCheck extends RequestStep {
    private final RateLimiter limiter;

    public LimitCheck(RateLimiter limiter, Exchanges exchanges) {
        super(exchanges);
        this.limiter = limiter;
    }

    @Override
    protected GatewayError check(GatewayRequest request) {
        ModelConfig model = request.model();
        // count_tokens generates nothing: its limit is the light one, a request counted, no tokens reserved.
        long inputEstimate = request.endpoint() == Endpoint.COUNT_TOKENS ? 0
                : Math.max(1, request.body().readableBytes() / 4);
        Admission admission = limiter.admit(request.key(), model,
                Saturating.add(inputEstimate, outputEstimate(request.endpoint(), request.peek(), model)));
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
        if (endpoint == Endpoint.EMBEDDINGS || endpoint == Endpoint.COUNT_TOKENS) {
            return 0;
        }
        long cap = peek.maxTokens() > 0 ? peek.maxTokens()
                : model.maxOutputTokens() > 0 ? Math.min(4096, model.maxOutputTokens()) : 4096;
        return Saturating.multiply(cap, Math.max(1, peek.n()));
    }
}
