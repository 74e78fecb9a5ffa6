package io.modelgateway.core.exchange;

/**
 * The two moments of a request's life on its connection that several handlers act on, told once to the whole
 * pipeline (fired from its head as user events) by the one handler that sees both on the wire, the server's
 * {@code AnswerBoundary} next to the HTTP codec. Everyone else follows these signals rather than working out the
 * moments for themselves: the client timeouts, the pipelining gate, the stream guard and the response observer.
 */
public enum ConnectionEvent {
    /** A request was read whole (its last part decoded). */
    REQUEST_RECEIVED,
    /** The answer to the request in progress was written whole (its last part; interim 1xx answers do not count). */
    ANSWER_COMPLETE
}
