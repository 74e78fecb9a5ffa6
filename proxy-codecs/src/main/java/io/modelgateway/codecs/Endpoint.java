package io.modelgateway.codecs;

/**
 * The proxied endpoints. {@link #gatewayPath} is what callers use; {@link #upstreamSuffix} is appended to a
 * provider's {@code base_url} (OpenAI-style base URLs end in {@code /v1}, Anthropic's do not, as in the official
 * SDKs). The Responses API ({@link #RESPONSES}) is OpenAI style in its errors but has its own request, answer and
 * typed event stream (contract 12).
 */
public enum Endpoint {
    CHAT_COMPLETIONS(ApiStyle.OPENAI, "/api/v1/chat/completions", "/chat/completions"),
    EMBEDDINGS(ApiStyle.OPENAI, "/api/v1/embeddings", "/embeddings"),
    MESSAGES(ApiStyle.ANTHROPIC, "/api/v1/messages", "/v1/messages"),
    /** Anthropic's token count of a messages request: no generation, {@code {"input_tokens": N}}. */
    COUNT_TOKENS(ApiStyle.ANTHROPIC, "/api/v1/messages/count_tokens", "/v1/messages/count_tokens"),

    RESPONSES(ApiStyle.OPENAI, "/api/v1/responses", "/responses"),
    /** The Responses API's input token count: passed to providers that have the Responses API (contract 12.9). */
    RESPONSES_INPUT_TOKENS(ApiStyle.OPENAI, "/api/v1/responses/input_tokens", "/responses/input_tokens");

    private final ApiStyle style;
    private final String gatewayPath;
    private final String upstreamSuffix;

    Endpoint(ApiStyle style, String gatewayPath, String upstreamSuffix) {
        this.style = style;
        this.gatewayPath = gatewayPath;
        this.upstreamSuffix = upstreamSuffix;
    }

    public ApiStyle style() {
        return style;
    }

    public String gatewayPath() {
        return gatewayPath;
    }

    public String upstreamSuffix() {
        return upstreamSuffix;
    }

    /** {@link #values()} once: each call of it copies the array, and {@link #forPath} runs per request. */
    private static final Endpoint[] ALL = values();

    /** Matches a request path with its query string already removed; null when it is not an endpoint. */
    public static Endpoint forPath(String path) {
        for (Endpoint e : ALL) {
            if (e.gatewayPath.equals(path)) {
                return e;
            }
        }
        return null;
    }
}
