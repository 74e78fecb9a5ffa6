package io.modelgateway.codecs.translate;

/**
 * What the chat → Anthropic translation needs to know about the deployment (immutable, from configuration).
 *
 * @param upstreamModel   the model name the Anthropic upstream knows (written as {@code model})
 * @param maxOutputTokens the model's output limit, 0 when unknown (GD-12 default: {@code min(4096, this)})
 * @param noTemperature   GD-19: the model takes no {@code temperature}; the chat endpoint drops it silently
 */
public record ChatRequestToMessagesOptions(String upstreamModel, int maxOutputTokens, boolean noTemperature) {
}
