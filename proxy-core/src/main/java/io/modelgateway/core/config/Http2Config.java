package io.modelgateway.core.config;

/**
 * HTTP/2 to clients ({@code http2}, beside {@code listen}): offered by ALPN on a TLS listener, and with prior
 * knowledge (h2c) on a plain one when asked for. The caps bound what one connection's peer may make the gateway
 * hold (design rule 8).
 *
 * @param enabled              offer {@code h2} by ALPN on a TLS listener (clients that do not ask keep HTTP/1.1)
 * @param cleartext            on a plain listener, also serve HTTP/2 to clients that start with its preface
 *                             (prior knowledge, {@code curl --http2-prior-knowledge}); HTTP/1.1 stays served
 * @param maxConcurrentStreams streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS);
 *                             one more is refused with RST_STREAM (REFUSED_STREAM)
 * @param maxHeaderListSize    the largest header list a request may carry (SETTINGS_MAX_HEADER_LIST_SIZE): past
 *                             it the stream is answered 431, far past it the connection is closed
 */
public record Http2Config(boolean enabled, boolean cleartext, int maxConcurrentStreams, int maxHeaderListSize) {
    public static final int MIN_HEADER_LIST_SIZE = 1024;
    public static final int MAX_HEADER_LIST_SIZE = 1024 * 1024;
    public static final int MAX_CONCURRENT_STREAMS = 10_000;

    /** h2 by ALPN, no h2c; 100 streams (RFC 9113's smallest recommended value); 16 KiB of headers, as HTTP/1.1. */
    public static final Http2Config DEFAULT = new Http2Config(true, false, 100, 16384);

    public Http2Config {
        if (maxConcurrentStreams < 1 || maxConcurrentStreams > MAX_CONCURRENT_STREAMS
                || maxHeaderListSize < MIN_HEADER_LIST_SIZE || maxHeaderListSize > MAX_HEADER_LIST_SIZE) {
            throw new IllegalArgumentException("invalid http2 settings");
        }
    }
}
