package io.modelgateway.core.server;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.limit.Admission;
import io.modelgateway.core.observe.ExchangeRecord;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.ReferenceCounted;

/**
 * One API request on its way down the server pipeline, after routing. It owns the aggregated
 * {@link FullHttpRequest} (its reference count is the request's); whichever handler answers the request
 * releases it. {@link #key} is set by the authenticator, {@link #admission} by the exchange handler once the
 * key's limits admitted the request; the rest is fixed at routing. {@link #record} follows the request to its
 * end, where {@link GatewayContext#end} hands it to the observers.
 */
public final class GatewayRequest implements ReferenceCounted {
    private final FullHttpRequest http;
    private final Endpoint endpoint;
    private final ApiStyle style;
    private final String requestId;
    private final boolean keepAlive;
    private final long startNanos;
    private final ExchangeRecord record;
    private KeyConfig key;
    private Admission admission;
    /** Tokens reserved at admission: the fallback count when the upstream never reports its usage. */
    private long estimatedInputTokens;
    /** Messages requests: the version header's value as sent, once checked (GD-2); null otherwise. */
    private String anthropicVersion;

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
     * set once the exchange handler has checked it; null for requests other than messages. What an Anthropic-type
     * upstream is sent.
     */
    public String anthropicVersion() {
        return anthropicVersion;
    }

    public void anthropicVersion(String version) {
        this.anthropicVersion = version;
    }

    /**
     * The headers every response to this request carries: the request id pair (GD-5) and, once admitted or
     * refused by a limit, the rate-limit family of the caller's style (contract 2.3).
     */
    public void decorate(HttpHeaders headers) {
        HttpResponses.requestId(headers, requestId);
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
