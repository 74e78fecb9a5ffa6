package io.modelgateway.core.exchange;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.ReferenceCounted;

/**
 * One API request on its way down the server pipeline, after routing. It owns the aggregated
 * {@link FullHttpRequest} (its reference count is the request's); whichever handler answers the request
 * releases it. Each step of the pipeline adds what it learned, in pipeline order: the router the config the whole
 * request is served under ({@link #config}), the authenticator the {@link #key}, the request validator the
 * {@link #anthropicVersion} and the body's {@link #peek}, the model resolver the {@link #model}, the limit check
 * the {@link #admission}; the rest is fixed at routing. {@link #record} follows the request to its end, where
 * {@link Exchanges#end} hands it to the observers.
 */
public final class GatewayRequest implements ReferenceCounted {
    private final FullHttpRequest http;
    private final Endpoint endpoint;
    private final ApiStyle style;
    private final String requestId;
    private final boolean keepAlive;
    private final long startNanos;
    private final ExchangeRecord record;
    /** The config this request is served under from start to end, whatever a reload swaps in meanwhile. */
    private GatewayConfig config;
    private KeyConfig key;
    private RequestPeek peek;
    private ModelConfig model;
    private Admission admission;
    /** Tokens reserved at admission: the fallback count when the upstream never reports its usage. */
    private long estimatedInputTokens;
    /** Messages requests: the version header's value as sent, once checked (GD-2); null otherwise. */
    private String anthropicVersion;
    /** The request's trace; null when tracing is off. */
    private ExchangeTrace trace;

    /** @param endpoint null for {@code GET /api/v1/models} */
    public GatewayRequest(FullHttpRequest http, Endpoint endpoint, ApiStyle style, String requestId,
            boolean keepAlive, long startNanos) {
        this(http, endpoint, style, requestId, keepAlive, startNanos,
                new ExchangeRecord(requestId, endpoint, startNanos, System.currentTimeMillis(),
                        http.content().readableBytes()));
    }

    public GatewayRequest(FullHttpRequest http, Endpoint endpoint, ApiStyle style, String requestId,
            boolean keepAlive, long startNanos, ExchangeRecord record) {
        this.record = record;
        this.http = http;
        this.endpoint = endpoint;
        this.style = style;
        this.requestId = requestId;
        this.keepAlive = keepAlive;
        this.startNanos = startNanos;
    }

    public FullHttpRequest http() {
        return http;
    }

    public HttpHeaders headers() {
        return http.headers();
    }

    public ByteBuf body() {
        return http.content();
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    public boolean isModelList() {
        return endpoint == null;
    }

    public ApiStyle style() {
        return style;
    }

    public String requestId() {
        return requestId;
    }

    public boolean keepAlive() {
        return keepAlive;
    }

    public long startNanos() {
        return startNanos;
    }

    /** The config snapshot taken when the request was routed. */
    public GatewayConfig config() {
        return config;
    }

    public void config(GatewayConfig config) {
        this.config = config;
    }

    /** What the request validator read from the body (the model, stream, limits' inputs, splice offsets). */
    public RequestPeek peek() {
        return peek;
    }

    public void peek(RequestPeek peek) {
        this.peek = peek;
    }

    /** The requested model, once the model resolver found it and the key may use it. */
    public ModelConfig model() {
        return model;
    }

    public void model(ModelConfig model) {
        this.model = model;
    }

    public KeyConfig key() {
        return key;
    }

    public void key(KeyConfig key) {
        this.key = key;
        record.keyName(key.name());
    }

    public ExchangeRecord record() {
        return record;
    }

    /** The limits' reservation for this request; null until admitted (and for requests that never are). */
    public Admission admission() {
        return admission;
    }

    public void admission(Admission admission, long estimatedInputTokens) {
        this.admission = admission;
        this.estimatedInputTokens = estimatedInputTokens;
    }

    public long estimatedInputTokens() {
        return estimatedInputTokens;
    }

    /**
     * The caller's Anthropic API version, as sent in {@code anthropic-version} or its alias {@code vendor-version},
     * set once the request validator has checked it; null for requests other than messages. What an Anthropic-type
     * upstream is sent.
     */
    public String anthropicVersion() {
        return anthropicVersion;
    }

    public void anthropicVersion(String version) {
        this.anthropicVersion = version;
    }

    /** The request's trace (an exchange span, a span per attempt); null when tracing is off. */
    public ExchangeTrace trace() {
        return trace;
    }

    public void trace(ExchangeTrace trace) {
        this.trace = trace;
    }

    /**
     * At most how many headers {@link #decorate} adds, and one for {@code Connection}: a head that will be decorated
     * is made with room for its own headers and these, so that it is one array of the right size.
     */
    public int decorations() {
        return 4 + (admission != null ? admission.headerCount() : 0);
    }

    /**
     * The headers every response to this request carries: the request id pair (GD-5), {@code Server-Timing} (the
     * gateway's and the upstream's time to the head, {@link ServerTiming}) and, once admitted or refused by a limit,
     * the rate-limit family of the caller's style (contract 2.3). Called as the head is made.
     */
    public void decorate(HttpHeaders headers) {
        // decorations() counts what this adds
        HttpResponses.requestId(headers, requestId);
        headers.set(ServerTiming.SERVER_TIMING, ServerTiming.value(record, System.nanoTime()));
        if (admission != null) {
            admission.addHeaders(headers, style);
        }
    }

    @Override
    public int refCnt() {
        return http.refCnt();
    }

    @Override
    public GatewayRequest retain() {
        http.retain();
        return this;
    }

    @Override
    public GatewayRequest retain(int increment) {
        http.retain(increment);
        return this;
    }

    @Override
    public GatewayRequest touch() {
        http.touch();
        return this;
    }

    @Override
    public GatewayRequest touch(Object hint) {
        http.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return http.release();
    }

    @Override
    public boolean release(int decrement) {
        return http.release(decrement);
    }

    @Override
    public String toString() {
        return "GatewayRequest(" + requestId + " " + http.method() + " " + http.uri() + ")";
    }
}
