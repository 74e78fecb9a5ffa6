package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Saturating;

/**
 * The token counts of one exchange, by type, in Anthropic's terms: {@code input} is uncached input only,
 * {@code cacheRead} the input read from the prompt cache, {@code cacheCreation} the input written to it,
 * {@code output} every output token (reasoning included) and {@code reasoning} the part of {@code output} spent on
 * reasoning (thinking). The five types are what the gateway accounts (contract 8.8): the record, the access log, the
 * metrics' {@code type} label and the token limits.
 *
 * <p>The styles count differently, and this is the one place that says how (the factories below, and
 * {@link UsageJson} for the usage objects themselves): OpenAI's {@code prompt_tokens} (chat) and
 * {@code input_tokens} (Responses API) include cache reads and writes, Anthropic's {@code input_tokens} excludes
 * them; all styles count reasoning inside the output. The sums saturate: a count an upstream made up can never wrap
 * a total negative.
 */
public record Usage(long input, long output, long cacheCreation, long cacheRead, long reasoning) {
    public static final Usage ZERO = new Usage(0, 0, 0, 0, 0);

    /** Every input token: uncached, read from the cache and written to it (OpenAI's {@code prompt_tokens}). */
    public long promptTokens() {
        return Saturating.add(Saturating.add(input, cacheCreation), cacheRead);
    }

    /** Every output token, reasoning included (OpenAI's {@code completion_tokens}, Anthropic's {@code output_tokens}). */
    public long completionTokens() {
        return output;
    }

    /** The output that is not reasoning: with {@link #reasoning} it makes up {@link #output} (never negative). */
    public long outputWithoutReasoning() {
        return Math.max(0, output - Math.min(output, reasoning));
    }

    /** Every token of every type, each counted once: what a token limit is charged. */
    public long totalTokens() {
        return Saturating.add(promptTokens(), completionTokens());
    }

    /** The same usage with {@code output} replaced (an estimate of what a stream cut short delivered). */
    public Usage withOutput(long output) {
        return new Usage(input, output, cacheCreation, cacheRead, Math.min(reasoning, output));
    }

    /** The same usage with its uncached {@code input} replaced. */
    public Usage withInput(long input) {
        return new Usage(input, output, cacheCreation, cacheRead, reasoning);
    }

    /**
     * From an OpenAI chat-completions usage: {@code promptTokens} = {@code prompt_tokens} (all input),
     * {@code cached} = {@code prompt_tokens_details.cached_tokens}, {@code cacheWrite} =
     * {@code prompt_tokens_details.cache_write_tokens}, {@code reasoning} =
     * {@code completion_tokens_details.reasoning_tokens}.
     */
    public static Usage fromOpenAi(long promptTokens, long completionTokens, long cached, long cacheWrite,
            long reasoning) {
        return new Usage(Math.max(Saturating.subtract(Saturating.subtract(promptTokens, cached), cacheWrite), 0),
                completionTokens, cacheWrite, cached, reasoning);
    }

    /**
     * From an OpenAI Responses API usage: {@code inputTokens} = {@code input_tokens} (all input, cache reads
     * included), {@code cached} = {@code input_tokens_details.cached_tokens}, {@code reasoning} =
     * {@code output_tokens_details.reasoning_tokens}. The Responses API reports no cache writes.
     */
    public static Usage fromResponses(long inputTokens, long outputTokens, long cached, long reasoning) {
        return fromOpenAi(inputTokens, outputTokens, cached, 0, reasoning);
    }

    /**
     * From an Anthropic usage: {@code input_tokens} (uncached), {@code output_tokens},
     * {@code cache_creation_input_tokens}, {@code cache_read_input_tokens} and
     * {@code output_tokens_details.thinking_tokens}.
     */
    public static Usage fromAnthropic(long inputTokens, long outputTokens, long cacheCreation, long cacheRead,
            long thinking) {
        return new Usage(inputTokens, outputTokens, cacheCreation, cacheRead, thinking);
    }
}
