package io.modelgateway.core.exchange;

/**
 * The token counts an exchange is billed for, by kind: what a price ({@code PriceConfig#cost}) is applied to. The
 * exchange record implements it; counts of a kind the accounting does not know yet are 0 (the defaults), so the
 * cost uses each kind as soon as the record reports it.
 *
 * <p>{@link #inputTokens()} is every input token (OpenAI's {@code prompt_tokens}: cache reads and writes included);
 * {@link #cacheReadTokens()} and {@link #cacheWriteTokens()} say how many of them read or wrote the provider's prompt
 * cache. {@link #outputTokens()} is every output token, reasoning (thinking) included, as both public APIs count and
 * bill it.
 */
public interface BilledTokens {
    long inputTokens();

    long outputTokens();

    /** Of the input, tokens read from the provider's prompt cache. */
    default long cacheReadTokens() {
        return 0;
    }

    /** Of the input, tokens written to the provider's prompt cache. */
    default long cacheWriteTokens() {
        return 0;
    }
}
