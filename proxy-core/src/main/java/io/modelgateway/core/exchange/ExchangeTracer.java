package io.modelgateway.core.exchange;

/**
 * Starts the trace of each request when tracing is on; the server has none at all when it is off (so nothing is
 * looked up or made per request). Thread-safe: called on every event loop.
 */
public interface ExchangeTracer {

    /**
     * The trace of {@code request}, just routed: its exchange span starts now, as a child of the caller's
     * {@code traceparent} when it sent a valid one.
     */
    ExchangeTrace start(GatewayRequest request);
}
