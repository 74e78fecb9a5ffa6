package io.modelgateway.core.route;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ChatRequestToGemini;
import io.modelgateway.codecs.translate.ChatRequestToMessages;
import io.modelgateway.codecs.translate.ChatRequestToMessagesOptions;
import io.modelgateway.codecs.translate.GeminiRequestOptions;
import io.modelgateway.codecs.translate.GoogleEmbeddings;
import io.modelgateway.codecs.translate.MessagesRequestToChat;
import io.modelgateway.codecs.translate.MessagesRequestToChatOptions;
import io.modelgateway.codecs.translate.ResponsesRequestToChat;
import io.modelgateway.codecs.translate.ResponsesRequestToChatOptions;
import io.modelgateway.codecs.translate.ResponsesRequestToMessages;
import io.modelgateway.codecs.translate.ResponsesRequestToMessagesOptions;
import io.modelgateway.codecs.translate.MessagesRequestToGemini;
import io.modelgateway.codecs.translate.TranslatedRequest;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.GatewayRequest;
import io.netty.buffer.ByteBufAllocator;

/**
 * Builds the upstream request when the provider speaks the other style (contract 8), or, for the Responses API, has
 * no Responses API of its own (contract 12.2).
 */
final class Translations {
    private Translations() {
    }

    static TranslatedRequest request(ByteBufAllocator alloc, GatewayRequest request, ModelConfig model, DeploymentConfig deployment) throws TranslationException {
        Endpoint endpoint = request.endpoint();
        if (deployment.provider().styleFor(deployment.upstreamModel()) == ApiStyle.GEMINI) {
            TranslatedRequest gemini = toGemini(alloc, request, model, deployment);
            if (gemini != null) {
                return gemini;
            }
        }
        if (endpoint == Endpoint.CHAT_COMPLETIONS) {
            return ChatRequestToMessages.translate(alloc, request.body(), new ChatRequestToMessagesOptions(
                    deployment.upstreamModel(), model.maxOutputTokens(), model.noTemperature()));
        }
        if (endpoint == Endpoint.MESSAGES) {
            return MessagesRequestToChat.translate(alloc, request.body(), new MessagesRequestToChatOptions(
                    deployment.upstreamModel(), "max_completion_tokens".equals(deployment.provider().maxTokensField()),
                    deployment.provider().reasoningDetails()));
        }
        if (endpoint == Endpoint.RESPONSES) {
            // Contract 12.2: a provider without the Responses API gets the chat or messages request it means.
            long maxAnswerChars = request.config().upstreamLimits().maxCollectedBytes();
            ApiStyle upstream = deployment.provider().styleFor(deployment.upstreamModel());
            if (upstream == ApiStyle.GEMINI) {
                throw new TranslationException(GatewayError.invalid("The model `" + model.name() + "` is served by "
                        + "a Gemini-style provider, for which the gateway does not translate the Responses API; use "
                        + "/api/v1/chat/completions.", "model", "unsupported_model"));
            }
            if (upstream == ApiStyle.ANTHROPIC) {
                return ResponsesRequestToMessages.translate(alloc, request.body(), new ResponsesRequestToMessagesOptions(
                        deployment.upstreamModel(), model.maxOutputTokens(), model.noTemperature(), maxAnswerChars));
            }
            return ResponsesRequestToChat.translate(alloc, request.body(), new ResponsesRequestToChatOptions(
                    deployment.upstreamModel(), "max_completion_tokens".equals(deployment.provider().maxTokensField()),
                    deployment.provider().reasoningDetails(), model.noTemperature(), maxAnswerChars));
        }
        if (endpoint == Endpoint.RESPONSES_INPUT_TOKENS) {
            // Contract 12.9: only a provider with the Responses API counts its input; no estimate stands in.
            throw new TranslationException(GatewayError.invalid("The model `" + model.name() + "` is served by a "
                    + "provider without the Responses API, which cannot count input tokens.", "model",
                    "unsupported_model"));
        }
        if (endpoint == Endpoint.COUNT_TOKENS) {
            // The gateway counts for OpenAI-style deployments itself (ExchangeStarter); a fallback to one lands here.
            throw new TranslationException(GatewayError.invalid("The model `" + model.name() + "` is served by a "
                    + "provider that cannot count tokens.", "model", "unsupported_model"));
        }
        // GD-20: embeddings go to OpenAI-style providers as they are, and to vertex and gemini (above) translated.
        throw new TranslationException(GatewayError.invalid("The model `" + model.name() + "` is served by a "
                + "provider without embeddings.", "model", "unsupported_model"));
    }

    /**
     * vertex and gemini: both caller styles' generation requests become generateContent, embeddings Vertex's predict or
     * the Gemini API's batchEmbedContents (GD-31); null for other endpoints.
     */
    private static TranslatedRequest toGemini(ByteBufAllocator alloc, GatewayRequest request, ModelConfig model,
            DeploymentConfig deployment) throws TranslationException {
        GeminiRequestOptions options = new GeminiRequestOptions(deployment.upstreamModel(), model.noTemperature());
        return switch (request.endpoint()) {
            case CHAT_COMPLETIONS -> ChatRequestToGemini.translate(alloc, request.body(), options);
            case MESSAGES -> MessagesRequestToGemini.translate(alloc, request.body(), options);
            case EMBEDDINGS -> GoogleEmbeddings.translate(alloc, request.body(),
                    deployment.provider().type() == ProviderType.GEMINI ? GoogleEmbeddings.Api.GEMINI_BATCH
                            : GoogleEmbeddings.Api.VERTEX_PREDICT, deployment.upstreamModel());
            default -> null;
        };
    }
}
