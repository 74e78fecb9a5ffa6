package io.modelgateway.core.exchange;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.channel.ChannelHandlerContext;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The beginning and the end of every API request, whoever answers it: counts the requests in progress (the cap of
 * {@code server.max_concurrent_requests}) and, at each request's end, settles its limit reservation with the
 * tokens its record holds and hands the record to the observers. One per server, shared by every connection and
 * step; thread-safe (an atomic counter; the observers are thread-safe).
 */
public final class Exchanges {
    private final AtomicInteger inProgress = new AtomicInteger();
    private final ExchangeObserver observer;
    /** Null when tracing is off: then no request has a trace, and nothing about tracing runs per request. */
    private final ExchangeTracer tracer;

    public Exchanges(ExchangeObserver observer) {
        this(observer, null);
    }

    /** @param tracer starts each request's trace; null when tracing is off */
    public Exchanges(ExchangeObserver observer, ExchangeTracer tracer) {
        this.observer = observer;
        this.tracer = tracer;
    }

    /**
     * A request was routed (and counted by {@link #tryStart}): the observers hear of it and, when tracing is on, its
     * trace starts.
     */
    public void begin(GatewayRequest request) {
        if (tracer != null) {
            request.trace(tracer.start(request));
        }
        observer.started(request.record());
    }

    public ExchangeObserver observer() {
        return observer;
    }

    /**
     * Counts one more request in progress unless {@code max} (0 = no cap) are already; every request counted here
     * is uncounted by {@link #end}.
     */
    public boolean tryStart(int max) {
        if (max <= 0) {
            inProgress.incrementAndGet();
            return true;
        }
        while (true) {
            int n = inProgress.get();
            if (n >= max) {
                return false;
            }
            if (inProgress.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Requests in progress now. */
    public int inProgress() {
        return inProgress.get();
    }

    /**
     * The end of a request: its cost is computed from the tokens the record holds, its limit reservation settled with
     * them (and with the cost, for spend budgets), its trace ended, and the record goes to the observers. Only the
     * first call for a request counts.
     */
    public void end(GatewayRequest request, Outcome outcome) {
        ExchangeRecord record = request.record();
        if (!record.end(outcome, System.nanoTime())) {
            return;
        }
        inProgress.decrementAndGet();
        record.priceIt();
        if (request.admission() != null) {
            request.admission().settle(record);
        }
        ExchangeTrace trace = request.trace();
        if (trace != null) {
            trace.ended(record);
        }
        observer.ended(record);
    }

    /**
     * A step of the pipeline answers the request itself (the stop of the continue / stop contract): {@code error}
     * in the caller's style with the request's headers, the request ended with {@code outcome} and released.
     */
    public void reject(ChannelHandlerContext ctx, GatewayRequest request, GatewayError error, Outcome outcome) {
        try {
            HttpResponses.sendError(ctx, request, error, null);
        } finally {
            end(request, outcome);
            request.release();
        }
    }
}
