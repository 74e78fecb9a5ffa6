package io.modelgateway.codecs.translate;

/**
 * What a request translator to Gemini needs to know of the deployment (immutable, from configuration).
 *
 * @param upstreamModel the Gemini model (it goes in the URL, not the body; answers that name no model use it)
 * @param noTemperature GD-19: the model takes no {@code temperature}; the chat endpoint drops it silently
 */
public record GeminiRequestOptions(String upstreamModel, boolean noTemperature) {
}
