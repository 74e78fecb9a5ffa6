package io.modelgateway.codecs.translate;

/**
 * What {@link ResponsesRequestToChat} needs to know about the chat-completions upstream it translates for (contract
 * 12.3). Immutable; built from the deployment's configuration.
 *
 * @param upstreamModel            the model name the upstream expects (replaces the caller's {@code model})
 * @param maxCompletionTokensField send {@code max_completion_tokens} (OpenAI proper) instead of {@code max_tokens}
 * @param reasoningDetailsAccepted the upstream takes {@code reasoning_details} on assistant messages (OpenRouter-like),
 *                                 so reasoning items are sent back to it; otherwise they are dropped
 * @param noTemperature            GD-19: the model takes no {@code temperature}; it is dropped silently
 * @param maxAnswerChars           the most characters of output a translated stream keeps (its final events repeat
 *                                 the whole output) before it fails
 */
public record ResponsesRequestToChatOptions(String upstreamModel, boolean maxCompletionTokensField,
        boolean reasoningDetailsAccepted, boolean noTemperature, long maxAnswerChars) {
}
