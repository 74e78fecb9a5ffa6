package io.modelgateway.codecs.translate;

/**
 * What {@link ResponsesRequestToMessages} needs to know about the Anthropic upstream it translates for (contract
 * 12.3). Immutable; built from the deployment's configuration.
 *
 * @param upstreamModel   the model name the Anthropic upstream knows
 * @param maxOutputTokens the model's output limit, 0 when unknown (GD-12 default: {@code min(4096, this)})
 * @param noTemperature   GD-19: the model takes no {@code temperature}; it is dropped silently
 * @param maxAnswerChars  the most characters of output a translated stream keeps before it fails
 */
public record ResponsesRequestToMessagesOptions(String upstreamModel, int maxOutputTokens, boolean noTemperature,
        long maxAnswerChars) {
}
