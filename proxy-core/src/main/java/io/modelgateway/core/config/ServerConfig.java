package io.modelgateway.core.config;

/**
 * How the API listener treats connections: caps, client timeouts and the shutdown drain. A reload applies them
 * to connections opened after it (and the request cap to the next request).
 *
 * @param maxConnections         client connections open at once; one more is answered 503 and closed; 0 = no cap
 * @param maxConcurrentExchanges API requests in progress at once across all connections; past it a request is
 *                               answered 503 (529 on messages) with Retry-After; 0 = no cap
 * @param requestTimeoutMs       from a request's first byte to its last: a client slower than this gets 408 and
 *                               the connection is closed (slow headers or a trickled body)
 * @param idleTimeoutMs          a keep-alive connection with no request for this long is closed
 * @param drainTimeoutMs         at shutdown, how long requests in progress may take to finish before streams are
 *                               ended with the style's error event and connections closed
 */
public record ServerConfig(int maxConnections, int maxConcurrentExchanges, long requestTimeoutMs, long idleTimeoutMs,
        long drainTimeoutMs) {

    public static final ServerConfig DEFAULT = new ServerConfig(0, 0, 30_000, 300_000, 30_000);

    public ServerConfig {
        if (maxConnections < 0 || maxConcurrentExchanges < 0 || requestTimeoutMs < 1 || idleTimeoutMs < 1
                || drainTimeoutMs < 0) {
            throw new IllegalArgumentException("invalid server settings");
        }
    }
}
