package io.modelgateway.codecs;

/** The two wire styles the gateway speaks, to callers and to upstreams. */
public enum ApiStyle {
    /** OpenAI chat completions and embeddings: {@code data:}-only SSE ending in {@code [DONE]}. */
    OPENAI,
    /** Anthropic messages: typed SSE events ({@code event:} + {@code data:}). */
    ANTHROPIC
}
