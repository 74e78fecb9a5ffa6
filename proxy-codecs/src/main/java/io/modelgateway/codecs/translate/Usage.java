package io.modelgateway.codecs.translate;

/**
 * Token counts of one exchange in Anthropic's terms, with the API-CONTRACT 8.8 conversions to and from
 * OpenAI's. {@code input} is uncached input only; OpenAI's {@code prompt_tokens} includes cache reads and writes.
 */
public record Usage(long input, long output, long cacheCreation, long cacheRead, long reasoning) {
    public static final Usage ZERO = new Usage(0, 0, 0, 0, 0);

    public long promptTokens() {
        return input + cacheCreation + cacheRead;
    }

    public long completionTokens() {
        return output;
    }

    public long totalTokens() {
        return promptTokens() + completionTokens();
    }

    /** From OpenAI counts: {@code cached} = prompt_tokens_details.cached_tokens, {@code cacheWrite} = …cache_write_tokens. */
    public static Usage fromOpenAi(long promptTokens, long completionTokens, long cached, long cacheWrite,
            long reasoning) {
        return new Usage(Math.max(promptTokens - cached - cacheWrite, 0), completionTokens, cacheWrite, cached,
                reasoning);
    }
}
