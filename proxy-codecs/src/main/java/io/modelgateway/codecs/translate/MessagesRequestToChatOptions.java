package io.modelgateway.codecs.translate;

/**
 * What {@link MessagesRequestToChat} needs to know about the OpenAI-style upstream it translates for
 * (contract 8.5). Immutable; built from the deployment's provider configuration.
 *
 * @param upstreamModel            the model name the upstream expects (replaces the caller's {@code model})
 * @param maxCompletionTokensField send {@code max_completion_tokens} (OpenAI proper) instead of {@code max_tokens}
 *                                 (generic compatible upstreams)
 * @param reasoningDetailsAccepted the upstream takes {@code reasoning_details} on assistant messages
 *                                 (OpenRouter-like); otherwise thinking blocks are dropped
 */
public record MessagesRequestToChatOptions(String upstreamModel, boolean maxCompletionTokensField,
        boolean reasoningDetailsAccepted) {
}
