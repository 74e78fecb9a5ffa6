package io.modelgateway.core.exchange;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.PriceConfig;

/**
 * What the access log and the metrics learn of one API exchange. Made when the request is routed, filled in by
 * the handlers it passes (key name, model, deployment, tokens) and by the response observer (status, bytes,
 * timings), and handed to the {@link ExchangeObserver} once, when the exchange ends. Confined to the client
 * channel's event loop until {@link #end} hands it over; never holds a key or any request content.
 */
public final class ExchangeRecord implements BilledTokens {
    /** Where the token counts came from. */
    public enum UsageSource {
        /** No tokens were used (refused before any upstream was asked). */
        NONE("none"),
        /** The upstream's own usage. */
        UPSTREAM("upstream"),
        /** The gateway's estimate: the upstream never said (cancelled early, lost, or it sends no usage). */
        ESTIMATED("estimated");

        private final String label;

        UsageSource(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    private final String requestId;
    /** Null for {@code GET /api/v1/models}. */
    private final Endpoint endpoint;
    private final long startNanos;
    private final long startEpochMillis;
    private final long bytesIn;

    private String keyName;
    private String model;
    private String provider;
    private String deployment;
    private boolean stream;
    private int status;
    private long bytesOut;
    private long headNanos;
    private long firstByteNanos;
    private long upstreamSentNanos;
    private long upstreamHeadNanos;
    private long endNanos;
    private long inputTokens;
    private long outputTokens;
    /** Parts of {@link #inputTokens}: read from the prompt cache, written to it. */
    private long cachedInputTokens;
    private long cacheWriteTokens;
    /** Part of {@link #outputTokens}: spent on reasoning (thinking). */
    private long reasoningTokens;
    private double costUsd;
    /** The price of the deployment that served (or was tried last); null when it has none. */
    private PriceConfig price;
    private UsageSource usageSource = UsageSource.NONE;
    private Outcome outcome;
    private String limit;
    private boolean responseComplete;
    private int attempts;
    private java.util.List<String[]> retriedFailures;
    private java.util.List<String[]> protocolErrors;
    private java.util.List<String[]> memoryRefusals;

    public ExchangeRecord(String requestId, Endpoint endpoint, long startNanos, long startEpochMillis, long bytesIn) {
        this.requestId = requestId;
        this.endpoint = endpoint;
        this.startNanos = startNanos;
        this.startEpochMillis = startEpochMillis;
        this.bytesIn = bytesIn;
    }

    /** Marks the end and fixes the outcome; true the first time only (the caller then hands the record on). */
    public boolean end(Outcome outcome, long nowNanos) {
        if (this.outcome != null) {
            return false;
        }
        this.outcome = outcome;
        this.endNanos = nowNanos;
        return true;
    }

    public boolean ended() {
        return outcome != null;
    }

    // ---- set by the handlers

    public void keyName(String keyName) {
        this.keyName = keyName;
    }

    public void model(String model) {
        this.model = model;
    }

    public void deployment(String provider, String upstreamModel) {
        this.provider = provider;
        this.deployment = upstreamModel;
    }

    /** The deployment an attempt goes to: its provider, upstream model and price. */
    public void deployment(DeploymentConfig d) {
        this.provider = d.provider().name();
        this.deployment = d.upstreamModel();
        this.price = d.price();
    }

    public void stream(boolean stream) {
        this.stream = stream;
    }

    /** Tokens without a breakdown by type: all the input is uncached, none of the output is reasoning. */
    public void usage(long inputTokens, long outputTokens, UsageSource source) {
        usage(new Usage(inputTokens, outputTokens, 0, 0, 0), source);
    }

    /**
     * Tokens by type (contract 8.8): {@link #inputTokens} is every input token (uncached, cache reads and cache
     * writes, OpenAI's {@code prompt_tokens}), {@link #outputTokens} every output token (reasoning included).
     */
    public void usage(Usage usage, UsageSource source) {
        this.inputTokens = usage.promptTokens();
        this.outputTokens = usage.completionTokens();
        this.cachedInputTokens = usage.cacheRead();
        this.cacheWriteTokens = usage.cacheCreation();
        this.reasoningTokens = Math.min(usage.reasoning(), outputTokens);
        this.usageSource = source;
    }

    /** What the exchange cost in US dollars: set by {@link #priceIt} at its end, once its tokens are known. */
    public void cost(double usd) {
        this.costUsd = usd;
    }

    /**
     * Prices the exchange's tokens (every kind {@link BilledTokens} reports) at its deployment's price; nothing when
     * the deployment has none. A cancelled or cut exchange is accounted with what was delivered, so it costs that.
     */
    public void priceIt() {
        if (price != null) {
            costUsd = price.cost(inputTokens(), cacheReadTokens(), cacheWriteTokens(), outputTokens());
        }
    }

    /** The price the exchange's cost is computed with; null when unpriced. */
    public PriceConfig price() {
        return price;
    }

    /** Whether the exchange's deployment has a price (then {@link #costUsd()} is its cost, 0 included). */
    public boolean priced() {
        return price != null;
    }

    public void limit(String limit) {
        this.limit = limit;
    }

    /**
     * An attempt failed before its answer began and the gateway went on to another (a retry or a fallback), so
     * the caller never saw this failure: which provider, and why ({@code connect}, {@code connect_timeout},
     * {@code lost}, {@code first_byte_timeout}, {@code protocol_error} or the upstream's status). Kept for the
     * metrics; allocated only when it happens.
     */
    public void retriedFailure(String provider, String reason) {
        if (retriedFailures == null) {
            retriedFailures = new java.util.ArrayList<>(2);
        }
        retriedFailures.add(new String[] {provider, reason});
    }

    /** The failures retried past, as {provider, reason} pairs in order; empty when there were none. */
    public java.util.List<String[]> retriedFailures() {
        return retriedFailures == null ? java.util.List.of() : retriedFailures;
    }

    /**
     * An attempt was ended because its upstream broke the protocol or a limit of what the gateway holds for it
     * ({@code sse_event_too_large}, {@code error_body_too_large}, {@code answer_too_large}, {@code malformed_head},
     * {@code malformed_body}, {@code switching_protocols}), whether or not another attempt followed. Kept for the
     * metrics; allocated only when it happens.
     */
    public void protocolError(String provider, String reason) {
        if (protocolErrors == null) {
            protocolErrors = new java.util.ArrayList<>(2);
        }
        protocolErrors.add(new String[] {provider, reason});
    }

    /** The protocol errors of this request's attempts, as {provider, reason} pairs; empty when there were none. */
    public java.util.List<String[]> protocolErrors() {
        return protocolErrors == null ? java.util.List.of() : protocolErrors;
    }

    /**
     * An attempt was ended for want of memory: a buffer could not be allocated ({@code allocation_failed}), or the
     * process-wide budget for collected answers was used up ({@code collected_budget}).
     */
    public void memoryRefusal(String provider, String reason) {
        if (memoryRefusals == null) {
            memoryRefusals = new java.util.ArrayList<>(1);
        }
        memoryRefusals.add(new String[] {provider, reason});
    }

    /** The memory refusals of this request's attempts, as {provider, reason} pairs; empty when there were none. */
    public java.util.List<String[]> memoryRefusals() {
        return memoryRefusals == null ? java.util.List.of() : memoryRefusals;
    }

    /**
     * An upstream attempt begins (the first, or a retry or fallback after a failure before the answer began):
     * counts it and forgets the upstream timings of the one before, so they always describe a single attempt.
     */
    public void newAttempt() {
        attempts++;
        upstreamSentNanos = 0;
        upstreamHeadNanos = 0;
    }

    public void upstreamSent(long nanos) {
        this.upstreamSentNanos = nanos;
    }

    public void upstreamHead(long nanos) {
        if (upstreamHeadNanos == 0) {
            this.upstreamHeadNanos = nanos;
        }
    }

    // ---- set by the response observer (and by a stream's writer for the chunks that bypass it, ChunkOut)

    /** The response head went out with {@code status}. */
    public void head(int status, long nanos) {
        this.status = status;
        this.headNanos = nanos;
    }

    /** {@code n} body bytes went out; the first non-empty write marks the first byte. */
    public void bodyBytes(int n, long nanos) {
        if (n > 0 && firstByteNanos == 0) {
            firstByteNanos = nanos;
        }
        bytesOut += n;
    }

    /** As {@link #bodyBytes(int, long)}, reading the clock only for the first byte. */
    public void bodyBytes(int n) {
        bodyBytes(n, n > 0 && firstByteNanos == 0 ? System.nanoTime() : 0L);
    }

    /** The last part of the response was written. */
    public void markResponseComplete() {
        this.responseComplete = true;
    }

    // ---- read by observers

    public String requestId() {
        return requestId;
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    /** {@code chat_completions}, {@code embeddings}, {@code messages} or {@code models}. */
    public String endpointLabel() {
        if (endpoint == null) {
            return "models";
        }
        return switch (endpoint) {
            case CHAT_COMPLETIONS -> "chat_completions";
            case EMBEDDINGS -> "embeddings";
            case MESSAGES -> "messages";
            case COUNT_TOKENS -> "count_tokens";
            case RESPONSES -> "responses";
            case RESPONSES_INPUT_TOKENS -> "responses_input_tokens";
        };
    }

    public String keyName() {
        return keyName;
    }

    /** The configured model the caller asked for; null when unknown or not (yet) resolved. */
    public String model() {
        return model;
    }

    public String provider() {
        return provider;
    }

    public String deployment() {
        return deployment;
    }

    public boolean stream() {
        return stream;
    }

    /** The status sent to the client; 0 when no response head went out (client left first). */
    public int status() {
        return status;
    }

    public long bytesIn() {
        return bytesIn;
    }

    public long bytesOut() {
        return bytesOut;
    }

    public long startNanos() {
        return startNanos;
    }

    public long startEpochMillis() {
        return startEpochMillis;
    }

    /** Nanoseconds from the request to the first body byte sent; -1 when none was. */
    public long firstByteLatencyNanos() {
        return firstByteNanos == 0 ? -1 : firstByteNanos - startNanos;
    }

    /**
     * The gateway's own time to the response head: from the request to the head, less the upstream's time to its head
     * ({@link #upstreamLatencyNanos()}, when known); -1 when no head went out.
     */
    public long gatewayLatencyNanos() {
        if (headNanos == 0) {
            return -1;
        }
        long upstream = upstreamLatencyNanos();
        return Math.max(0, headNanos - startNanos - Math.max(0, upstream));
    }

    /** Nanoseconds from sending the upstream request to the upstream's response head; -1 when unknown. */
    public long upstreamLatencyNanos() {
        return upstreamSentNanos == 0 || upstreamHeadNanos == 0 ? -1 : upstreamHeadNanos - upstreamSentNanos;
    }

    /** Nanoseconds from the request to the end of the exchange. */
    public long durationNanos() {
        return endNanos - startNanos;
    }

    public long inputTokens() {
        return inputTokens;
    }

    public long outputTokens() {
        return outputTokens;
    }

    /** The input neither read from nor written to the prompt cache (Anthropic's {@code input_tokens}). */
    public long uncachedInputTokens() {
        return Math.max(0, Saturating.subtract(Saturating.subtract(inputTokens, cachedInputTokens), cacheWriteTokens));
    }

    /** The input read from the prompt cache (part of {@link #inputTokens}). */
    public long cachedInputTokens() {
        return cachedInputTokens;
    }

    /** The same, as the price reads it ({@link BilledTokens}). */
    @Override
    public long cacheReadTokens() {
        return cachedInputTokens;
    }

    /** The input written to the prompt cache (part of {@link #inputTokens}). */
    @Override
    public long cacheWriteTokens() {
        return cacheWriteTokens;
    }

    /** The output spent on reasoning (part of {@link #outputTokens}). */
    public long reasoningTokens() {
        return reasoningTokens;
    }

    /** The output that is not reasoning. */
    public long nonReasoningOutputTokens() {
        return outputTokens - reasoningTokens;
    }

    /**
     * Input plus output, every type counted once (cache reads, cache writes and reasoning are parts of them): what
     * the token limits are settled with. Saturates, so two huge counts never sum to nothing.
     */
    public long totalTokens() {
        return Saturating.add(inputTokens, outputTokens);
    }

    /** The exchange's cost in US dollars; 0 when nothing priced it ({@link #priced()} false). */
    public double costUsd() {
        return costUsd;
    }

    public UsageSource usageSource() {
        return usageSource;
    }

    /** Null until {@link #end}. */
    public Outcome outcome() {
        return outcome;
    }

    /** The limit that refused the request; null when none did. */
    public String limit() {
        return limit;
    }

    public boolean responseComplete() {
        return responseComplete;
    }

    /** Upstream attempts made for this request (retries and fallbacks included); 0 when none was. */
    public int attempts() {
        return attempts;
    }
}
