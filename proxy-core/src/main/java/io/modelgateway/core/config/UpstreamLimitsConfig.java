package io.modelgateway.core.config;

/**
 * Bounds on what an upstream's answer may make the gateway hold (every size a peer decides has a limit), the same
 * for every provider. A reload applies them to the next request; the bytes already held count against the new
 * budget.
 *
 * @param maxErrorBodyBytes    an upstream error body (any non-2xx) is collected whole, up to this, before it is
 *                             redacted and relayed; a larger one is not relayed: the caller gets the gateway's own
 *                             error for that status and the upstream connection is closed
 * @param maxSseEventBytes     the longest stream event (or line) accepted from an upstream; past it the stream ends
 *                             with the style's error event (a 502 when nothing was sent yet)
 * @param maxCollectedBytes    a 2xx answer translated as a whole (across styles, or embeddings encoded to base64) is
 *                             collected up to this; past it the caller gets a 502
 * @param collectedBudgetBytes what all exchanges of the process together may hold of collected answers and error
 *                             bodies; past it the answer is refused with 503 (529 on messages) and Retry-After
 */
public record UpstreamLimitsConfig(int maxErrorBodyBytes, int maxSseEventBytes, int maxCollectedBytes,
        long collectedBudgetBytes) {

    public static final int MIN_ERROR_BODY_BYTES = 1024;
    public static final int MAX_ERROR_BODY_BYTES = 16 * 1024 * 1024;
    public static final int MIN_SSE_EVENT_BYTES = 16 * 1024;
    public static final int MAX_SSE_EVENT_BYTES = 256 * 1024 * 1024;
    public static final int MIN_COLLECTED_BYTES = 64 * 1024;
    public static final int MAX_COLLECTED_BYTES = 1024 * 1024 * 1024;
    public static final long MAX_COLLECTED_BUDGET_BYTES = 1L << 40;

    /**
     * 64 KiB of error body (providers' errors are a few hundred bytes); 4 MiB per event; 16 MiB per collected
     * answer, which holds a translated chat answer many times over and an embeddings batch of about 500
     * 1536-dimension vectors as float JSON (the largest thing collected: embeddings encoded to base64 by the
     * gateway); 256 MiB for all of them at once.
     */
    public static final UpstreamLimitsConfig DEFAULT =
            new UpstreamLimitsConfig(64 * 1024, 4 * 1024 * 1024, 16 * 1024 * 1024, 256L * 1024 * 1024);

    public UpstreamLimitsConfig {
        if (maxErrorBodyBytes < MIN_ERROR_BODY_BYTES || maxErrorBodyBytes > MAX_ERROR_BODY_BYTES
                || maxSseEventBytes < MIN_SSE_EVENT_BYTES || maxSseEventBytes > MAX_SSE_EVENT_BYTES
                || maxCollectedBytes < MIN_COLLECTED_BYTES || maxCollectedBytes > MAX_COLLECTED_BYTES
                || collectedBudgetBytes < maxCollectedBytes || collectedBudgetBytes > MAX_COLLECTED_BUDGET_BYTES) {
            throw new IllegalArgumentException("invalid upstream limits");
        }
    }
}
