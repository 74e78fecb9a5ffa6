package io.modelgateway.core.config;

/**
 * What one deployment charges, in US dollars: per million tokens of each kind, and per request. Written in the config
 * ({@code models.NAME.deployments[i].price}) or taken by name from the shipped price file ({@link PriceFile}). Numbers
 * only, checked at load; immutable.
 *
 * <p>How a count is priced (the providers' own billing rules): input read from the provider's prompt cache at
 * {@code cached_input}, input written to it at {@code cache_write}, the rest of the input at {@code input}, and every
 * output token — reasoning or thinking tokens included, which both OpenAI and Anthropic bill as output — at
 * {@code output}.
 *
 * @param input       USD per million input tokens that neither read nor wrote the cache
 * @param cachedInput USD per million input tokens read from the cache (cache hits)
 * @param cacheWrite  USD per million input tokens written to the cache (Anthropic's 5-minute writes)
 * @param output      USD per million output tokens, reasoning included
 * @param perRequest  USD per request, whatever its tokens (0 for the public token-priced APIs)
 * @param name        the price file's entry this came from, or null for a price written in the config
 */
public record PriceConfig(double input, double cachedInput, double cacheWrite, double output, double perRequest,
        String name) {

    /** The largest price per million tokens (or per request) the config takes: far above any public price. */
    public static final double MAX_PER_MILLION = 100_000;
    public static final double MAX_PER_REQUEST = 1_000;

    private static final double PER_TOKEN = 1e-6;

    public PriceConfig {
        check(input, MAX_PER_MILLION);
        check(cachedInput, MAX_PER_MILLION);
        check(cacheWrite, MAX_PER_MILLION);
        check(output, MAX_PER_MILLION);
        check(perRequest, MAX_PER_REQUEST);
    }

    private static void check(double v, double max) {
        if (!(v >= 0 && v <= max)) { // also refuses NaN
            throw new IllegalArgumentException("a price is between 0 and " + max);
        }
    }

    /**
     * The cost of one exchange in US dollars.
     *
     * @param inputTokens      all input tokens, cache reads and writes included (OpenAI's {@code prompt_tokens})
     * @param cacheReadTokens  of those, read from the cache
     * @param cacheWriteTokens of those, written to the cache
     * @param outputTokens     all output tokens, reasoning included
     */
    public double cost(long inputTokens, long cacheReadTokens, long cacheWriteTokens, long outputTokens) {
        long read = Math.max(0, cacheReadTokens);
        long write = Math.max(0, cacheWriteTokens);
        // Counts are believed only up to TokenCount.MAX each, so these products stay far from any overflow; doubles
        // keep them exact to well under a micro-dollar.
        long uncached = Math.max(0, Math.max(0, inputTokens) - read - write);
        return perRequest + (uncached * input + read * cachedInput + write * cacheWrite
                + Math.max(0, outputTokens) * output) * PER_TOKEN;
    }

    /** The cost of {@code inputTokens} (none cached) and {@code outputTokens}: what a spend budget reserves. */
    public double estimate(long inputTokens, long outputTokens) {
        return cost(inputTokens, 0, 0, outputTokens);
    }
}
