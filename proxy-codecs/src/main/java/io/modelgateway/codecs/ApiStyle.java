package io.modelgateway.codecs;

/**
 * The wire styles the gateway speaks: callers use the first two; upstreams any of them.
 */
public enum ApiStyle {
    /** OpenAI chat completions and embeddings: {@code data:}-only SSE ending in {@code [DONE]}. */
    OPENAI,
    /** Anthropic messages: typed SSE events ({@code event:} + {@code data:}). */
    ANTHROPIC,
    /**
     * Google's Gemini {@code generateContent} (Vertex AI and the Gemini API): {@code data:}-only SSE with
     * {@code alt=sse}, each event a whole {@code GenerateContentResponse}. Upstreams only; always translated.
     */
    GEMINI
}
