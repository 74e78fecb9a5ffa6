package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Saturating;

/**
 * Token counts of one exchange in Anthropic's terms, with the contract 8.8 conversions to and from
 * OpenAI's. {@code input} is uncached input only; OpenAI's {@code prompt_tokens} includes cache reads and writes.
 * The sums saturate: a count an upstream made up can never wrap a total negative.
 */
public record Usage(long input, long output, long cacheCreation, long cacheRead, long reasoning) {
    public static final Usage ZERO = new Usage(0, 0, 0, 0, 0);

    public long promptTokens() {
        return Saturating.add(Saturating.add(input, cacheCreation), cacheRead);
    }

    public long completionTokens() {
        return output;
    }

    public long totalTokens() {
        return Saturating.add(promptTokens(), completionTokens());
    }

    /** From OpenAI counts: {@code cached} = prompt_tokens_details.cached_tokens, {@code cacheWrite} = …cache_write_tokens. */
    public static Usage fromOpenAi(long promptTokens, long completionTokens, long cached, long cacheWrite,
            long reasoning) {
        return new Usage(Math.max(Saturating.subtract(Saturating.subtract(promptTokens, cached), cacheWrite), 0),
                completionTokens, cacheWrite, cached, reasoning);
    }
}
