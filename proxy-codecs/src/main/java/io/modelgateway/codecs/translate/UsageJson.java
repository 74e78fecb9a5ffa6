package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.usage.TokenCount;
import java.io.IOException;

/**
 * Each style's {@code usage} object, read into a {@link Usage} and written from one (contract 8.8): chat
 * completions, Anthropic messages and the OpenAI Responses API. The conversions themselves are {@link Usage}'s
 * factories; this class knows where each style keeps each count. Every count read goes through {@link TokenCount}:
 * absent or not believed reads as 0. The accounting reads the same fields from raw bytes
 * ({@code io.modelgateway.codecs.usage.UsageCounts}).
 */
public final class UsageJson {
    private UsageJson() {
    }

    /** A chat-completions usage object ({@code prompt_tokens}, …); {@link Usage#ZERO} when there is none. */
    public static Usage chat(JsonNode u) {
        if (u == null || !u.isObject()) {
            return Usage.ZERO;
        }
        return Usage.fromOpenAi(count(u.path("prompt_tokens")), count(u.path("completion_tokens")),
                count(u.path("prompt_tokens_details").path("cached_tokens")),
                count(u.path("prompt_tokens_details").path("cache_write_tokens")),
                count(u.path("completion_tokens_details").path("reasoning_tokens")));
    }

    /** An Anthropic usage object ({@code input_tokens}, …); {@link Usage#ZERO} when there is none. */
    public static Usage messages(JsonNode u) {
        if (u == null || !u.isObject()) {
            return Usage.ZERO;
        }
        return Usage.fromAnthropic(count(u.get("input_tokens")), count(u.get("output_tokens")),
                count(u.get("cache_creation_input_tokens")), count(u.get("cache_read_input_tokens")),
                count(u.path("output_tokens_details").get("thinking_tokens")));
    }

    /** A Responses API usage object ({@code input_tokens} with cache reads, …); {@link Usage#ZERO} when none. */
    public static Usage responses(JsonNode u) {
        if (u == null || !u.isObject()) {
            return Usage.ZERO;
        }
        return Usage.fromResponses(count(u.get("input_tokens")), count(u.get("output_tokens")),
                count(u.path("input_tokens_details").get("cached_tokens")),
                count(u.path("output_tokens_details").get("reasoning_tokens")));
    }

    /** Whether a chat usage object says how many reasoning tokens there were (a believable count). */
    public static boolean chatReportsReasoning(JsonNode u) {
        return u != null && TokenCount.of(u.path("completion_tokens_details").get("reasoning_tokens")) >= 0;
    }

    /** Whether an Anthropic usage object says how many thinking tokens there were (a believable count). */
    public static boolean messagesReportsReasoning(JsonNode u) {
        return u != null && TokenCount.of(u.path("output_tokens_details").get("thinking_tokens")) >= 0;
    }

    /**
     * The chat usage object (the generator is where its value goes): {@code prompt_tokens} = every input token,
     * {@code prompt_tokens_details.cached_tokens} = cache reads, {@code cache_write_tokens} = cache writes;
     * {@code completion_tokens_details.reasoning_tokens} only when {@code reasoningReported}.
     */
    public static void writeChat(JsonGenerator g, Usage u, boolean reasoningReported) throws IOException {
        g.writeStartObject();
        g.writeNumberField("prompt_tokens", u.promptTokens());
        g.writeNumberField("completion_tokens", u.completionTokens());
        g.writeNumberField("total_tokens", u.totalTokens());
        g.writeObjectFieldStart("prompt_tokens_details");
        g.writeNumberField("cached_tokens", u.cacheRead());
        g.writeNumberField("cache_write_tokens", u.cacheCreation());
        g.writeEndObject();
        if (reasoningReported) {
            g.writeObjectFieldStart("completion_tokens_details");
            g.writeNumberField("reasoning_tokens", u.reasoning());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    /**
     * The Anthropic usage object (the generator is where its value goes): {@code input_tokens} = uncached input
     * only, the two cache counters, {@code output_tokens}; {@code output_tokens_details.thinking_tokens} only when
     * {@code reasoningReported}.
     */
    public static void writeMessages(JsonGenerator g, Usage u, boolean reasoningReported) throws IOException {
        g.writeStartObject();
        g.writeNumberField("input_tokens", u.input());
        g.writeNumberField("output_tokens", u.output());
        g.writeNumberField("cache_creation_input_tokens", u.cacheCreation());
        g.writeNumberField("cache_read_input_tokens", u.cacheRead());
        if (reasoningReported) {
            g.writeObjectFieldStart("output_tokens_details");
            g.writeNumberField("thinking_tokens", u.reasoning());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    /**
     * The Responses API usage object (the generator is where its value goes): {@code input_tokens} = every input
     * token, {@code input_tokens_details.cached_tokens} = cache reads, {@code output_tokens},
     * {@code output_tokens_details.reasoning_tokens}, {@code total_tokens}.
     */
    public static void writeResponses(JsonGenerator g, Usage u) throws IOException {
        g.writeStartObject();
        g.writeNumberField("input_tokens", u.promptTokens());
        g.writeObjectFieldStart("input_tokens_details");
        g.writeNumberField("cached_tokens", u.cacheRead());
        g.writeEndObject();
        g.writeNumberField("output_tokens", u.output());
        g.writeObjectFieldStart("output_tokens_details");
        g.writeNumberField("reasoning_tokens", u.reasoning());
        g.writeEndObject();
        g.writeNumberField("total_tokens", u.totalTokens());
        g.writeEndObject();
    }

    /** A count the gateway believes ({@link TokenCount}); absent or not believed reads as 0. */
    private static long count(JsonNode n) {
        return Math.max(0, TokenCount.of(n));
    }
}
