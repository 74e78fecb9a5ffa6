package io.modelgateway.core.config;

/**
 * How the API listener treats connections: caps, client timeouts and the shutdown drain. A reload applies them
 * to connections opened after it (and the request cap to the next request).
 *
 * @param maxConnections          client connections open at once; one more is answered 503 and closed; 0 = no cap;
 *                                {@link #DERIVED} (the field left out) = a cap the server derives from the process's
 *                                file-descriptor limit at start ({@code ConnectionCaps})
 * @param maxConcurrentExchanges  API requests in progress at once across all connections; past it a request is
 *                                answered 503 (529 on messages) with Retry-After; 0 = no cap
 * @param requestTimeoutMs        from a request's first byte to its last: a client slower than this gets 408 and
 *                                the connection is closed (slow headers or a trickled body)
 * @param idleTimeoutMs           a keep-alive connection with no request for this long is closed
 * @param drainTimeoutMs          at shutdown, how long requests in progress may take to finish before streams are
 *                                ended with the style's error event and connections closed
 * @param maxConnectionsPerClient client connections open at once from one IP address; one more is answered 503 and
 *                                closed; 0 = no cap (the default: callers behind one proxy or NAT share an address)
 */
public record ServerConfig(int maxConnections, int maxConcurrentExchanges, long requestTimeoutMs, long idleTimeoutMs,
        long drainTimeoutMs, int maxConnectionsPerClient) {

    /** {@code max_connections} not set: derive the cap from the file-descriptor limit. */
    public static final int DERIVED = -1;
    /** Like nginx's {@code keepalive_timeout}: long enough for a client's next request, short enough to free idle sockets. */
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 75_000;

    public static final ServerConfig DEFAULT = new ServerConfig(DERIVED, 0, 30_000, DEFAULT_IDLE_TIMEOUT_MS, 30_000, 0);

    /** Without a per-client cap. */
    public ServerConfig(int maxConnections, int maxConcurrentExchanges, long requestTimeoutMs, long idleTimeoutMs,
            long drainTimeoutMs) {
        this(maxConnections, maxConcurrentExchanges, requestTimeoutMs, idleTimeoutMs, drainTimeoutMs, 0);
    }

    public ServerConfig {
        if (maxConnections < DERIVED || maxConcurrentExchanges < 0 || requestTimeoutMs < 1 || idleTimeoutMs < 1
                || drainTimeoutMs < 0 || maxConnectionsPerClient < 0) {
            throw new IllegalArgumentException("invalid server settings");
        }
    }
}
