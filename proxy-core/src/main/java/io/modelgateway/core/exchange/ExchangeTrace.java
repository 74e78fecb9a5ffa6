package io.modelgateway.core.exchange;

import io.modelgateway.core.config.DeploymentConfig;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * The trace of one request, when tracing is on ({@code telemetry} in the config): a span for the exchange and a child
 * span per upstream attempt. Made when the request is routed ({@link ExchangeTracer#start}) and kept on it
 * ({@link GatewayRequest#trace()}); a request without one (tracing off) costs a null check at each of these points and
 * nothing else. Called on the request's event loop only.
 */
public interface ExchangeTrace {

    /** An attempt at {@code deployment} begins (the first, a retry or a fallback): its span starts. */
    void attemptStarted(DeploymentConfig deployment);

    /**
     * The current attempt failed before its answer began and another one follows: its span ends with
     * {@code errorType} ({@code connect}, {@code first_byte_timeout}, the upstream's status, …).
     */
    void attemptFailed(String errorType);

    /** Adds the W3C {@code traceparent} (and {@code tracestate}) of the current attempt to an upstream request. */
    void inject(HttpHeaders upstreamHeaders);

    /** The exchange ended, as {@code record} says (its tokens, status, outcome): the open spans end. */
    void ended(ExchangeRecord record);
}
