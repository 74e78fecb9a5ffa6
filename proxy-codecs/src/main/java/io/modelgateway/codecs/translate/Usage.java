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

    /**
     * The Responses API's {@code usage.input_tokens} (contract 12.8): all input, cache reads and writes included,
     * as OpenAI's {@code prompt_tokens}.
     */
    public long responsesInputTokens() {
        return promptTokens();
    }

    /**
     * From the Responses API's counts (contract 12.8): {@code inputTokens} = {@code usage.input_tokens} (cache reads
     * and writes included), {@code cached} = {@code input_tokens_details.cached_tokens}, {@code cacheWrite} =
     * {@code input_tokens_details.cache_write_tokens}, {@code reasoning} =
     * {@code output_tokens_details.reasoning_tokens} (part of {@code outputTokens}). The same convention as chat's.
     */
    public static Usage fromResponses(long inputTokens, long outputTokens, long cached, long cacheWrite,
            long reasoning) {
        return fromOpenAi(inputTokens, outputTokens, cached, cacheWrite, reasoning);
    }

    /** From OpenAI counts: {@code cached} = prompt_tokens_details.cached_tokens, {@code cacheWrite} = …cache_write_tokens. */
    public static Usage fromOpenAi(long promptTokens, long completionTokens, long cached, long cacheWrite,
            long reasoning) {
        return new Usage(Math.max(Saturating.subtract(Saturating.subtract(promptTokens, cached), cacheWrite), 0),
                completionTokens, cacheWrite, cached, reasoning);
    }
}
