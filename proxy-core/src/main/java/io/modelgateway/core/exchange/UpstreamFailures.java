package io.modelgateway.core.exchange;

import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;

/** What the caller is told when its provider goes away, whichever kind of provider it was. */
public final class UpstreamFailures {
    /** Before the first byte of the answer: a normal error response (GD-24). */
    public static final GatewayError LOST_BEFORE_ANSWER = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider closed the connection before the response was complete.", null, null);
    /** After the stream started: the style's error event (GD-10). */
    public static final GatewayError LOST_MID_STREAM =
            new GatewayError(ErrorKind.UPSTREAM_ERROR, "Upstream connection lost", null, null);

    /** The upstream did not answer within its provider's timeouts (GD-9): 504, {@code timeout_error}. */
    public static final GatewayError TIMED_OUT_BEFORE_ANSWER = new GatewayError(ErrorKind.UPSTREAM_TIMEOUT,
            "The upstream provider did not answer in time.", null, null);
    /** The upstream went silent mid-stream for longer than its provider's idle timeout (GD-10). */
    public static final GatewayError TIMED_OUT_MID_STREAM = new GatewayError(ErrorKind.UPSTREAM_TIMEOUT,
            "The upstream provider stopped sending in time.", null, null);

    /** A 2xx answer whose JSON body is broken (contract 7.3: 502 "upstream returned garbage"). */
    public static final GatewayError MALFORMED_ANSWER = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider returned a malformed answer.", null, null);
    /** A stream event whose data is not JSON: the style's error event ends the stream (GD-10). */
    public static final GatewayError MALFORMED_EVENT = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider sent a malformed event.", null, null);

    /**
     * The upstream broke HTTP: a head or body framing the decoder refused, a head with two framings (a 502 before the
     * answer, the style's error event after it).
     */
    public static final GatewayError MALFORMED_RESPONSE = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider sent a malformed HTTP response.", null, null);
    /** The upstream answered {@code 101 Switching Protocols}, which no API exchange asks for. */
    public static final GatewayError SWITCHED_PROTOCOLS = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider switched protocols (HTTP 101) instead of answering.", null, null);

    /**
     * The gateway could not allocate a buffer for this answer: overloaded (503, 529 on messages, with Retry-After), the
     * gateway's own state rather than the upstream's.
     */
    public static final GatewayError OUT_OF_MEMORY = new GatewayError(ErrorKind.OVERLOADED,
            "The gateway is short of memory for this answer; retry shortly.", null, null);
    /** Collected answers of all exchanges already hold {@code upstream_limits.collected_budget_bytes}. */
    public static final GatewayError COLLECTED_BUDGET_EXHAUSTED = new GatewayError(ErrorKind.OVERLOADED,
            "The gateway is holding too many large upstream answers at once; retry shortly.", null, null);

    private UpstreamFailures() {
    }
}
