package io.modelgateway.core.server;

/** Every handler's name in the server pipeline, in pipeline order. */
public final class PipelineNames {
    /** TLS listener: the TLS handler, then the ALPN step that builds the protocol's pipeline. */
    public static final String TLS = "tls";
    public static final String ALPN = "alpn";
    /** Plain listener with h2c: picks HTTP/2 or HTTP/1.1 by the first bytes. */
    public static final String H2C_DETECTOR = "h2c-detector";
    /** HTTP/2 connection. */
    public static final String H2_CODEC = "h2-codec";
    /** In front of the h2 codec of a connection closed after a GOAWAY: drops what is still read. */
    public static final String DISCARD = "discard";
    /** Holds back the flushes of a connection's streams written outside its own reads until the loop's turn ends. */
    public static final String H2_FLUSH = "h2-flush";
    public static final String H2_CONNECTION = "h2-connection";
    public static final String H2_MULTIPLEX = "h2-multiplex";
    /** HTTP/2 stream, before the answer boundary. */
    public static final String H2_STREAM_CODEC = "h2-stream-codec";
    public static final String STREAM_TIMEOUT = "stream-timeout";
    /** HTTP/1.1 connection. */
    public static final String REQUEST_TIMEOUTS = "request-timeouts";
    /** Where the stream chunks the gateway frames itself ({@code ChunkFrame}) enter, below the codec ({@code ChunkOut}). */
    public static final String CHUNK_FRAMES = "chunk-frames";
    public static final String HTTP_CODEC = "http-codec";
    public static final String ANSWER_BOUNDARY = "answer-boundary";
    public static final String HEAD_VALIDATOR = "head-validator";
    public static final String STREAM_GUARD = "stream-guard";
    public static final String RESPONSE_OBSERVER = "response-observer";
    public static final String BODY_AGGREGATOR = "body-aggregator";
    public static final String PIPELINING_GATE = "pipelining-gate";
    public static final String METRICS = "metrics";
    public static final String ROUTER = "request-router";
    public static final String AUTHENTICATOR = "key-authenticator";
    public static final String MODEL_LIST = "model-list";
    public static final String REQUEST_VALIDATOR = "request-validator";
    public static final String MODEL_RESOLVER = "model-resolver";
    public static final String LIMIT_CHECK = "limit-check";
    public static final String EXCHANGE = "exchange";

    private PipelineNames() {
    }
}
