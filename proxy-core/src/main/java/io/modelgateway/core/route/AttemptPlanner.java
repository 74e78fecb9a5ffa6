package io.modelgateway.core.route;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.codecs.translate.EmbeddingsBase64;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.TranslatedRequest;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorEngines;
import io.modelgateway.core.simulator.SimulatorExchange;
import io.modelgateway.core.answer.CollectedBudget;
import io.modelgateway.core.upstream.ProxyExchange;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Plans one attempt of a request at one deployment: the in-process simulator, a translated exchange (the provider
 * speaks the other style), or a pass-through exchange whose upstream body is the caller's bytes, spliced only where
 * the deployment's settings differ from what the caller sent (the upstream's model name; {@code float} asked for a
 * model that encodes base64 itself; GD-19 {@code temperature} dropped on chat; GD-21 {@code include_usage} asked
 * for so every chat stream can be accounted). One per server; stateless apart from the shared pools, simulators and
 * budget it hands to the exchanges.
 */
public final class AttemptPlanner implements AttemptFactory {
    private final UpstreamPools pools;
    private final SimulatorEngines simulators;
    private final CollectedBudget collectedBudget;

    public AttemptPlanner(UpstreamPools pools, SimulatorEngines simulators, CollectedBudget collectedBudget) {
        this.pools = pools;
        this.simulators = simulators;
        this.collectedBudget = collectedBudget;
    }

    @Override
    public boolean accepts(GatewayRequest request, ModelConfig model) {
        return ModelResolver.servable(request.endpoint(), request.peek(), model);
    }

    /**
     * A new, not yet started exchange of {@code request} with {@code deployment} of {@code model} (the requested
     * model or a fallback, whose own settings shape the upstream request), on the client channel {@code ctx}. It
     * owns what it allocated until it ends.
     *
     * @throws TranslationException the request cannot be expressed in that deployment's style
     */
    @Override
    public Exchange attempt(ChannelHandlerContext ctx, GatewayRequest request, ModelConfig model,
            DeploymentConfig deployment, AttemptHook hook, Consumer<Outcome> onDone) throws TranslationException {
        RequestPeek peek = request.peek();
        Endpoint endpoint = request.endpoint();
        ProviderConfig provider = deployment.provider();
        boolean responses = endpoint == Endpoint.RESPONSES || endpoint == Endpoint.RESPONSES_INPUT_TOKENS;
        if (responses && !provider.responsesApi()) {
            refuseStateful(peek, model);
        }
        if (provider.type() == ProviderType.SIMULATOR) {
            return new SimulatorExchange(ctx, request, provider, simulators.of(provider), deployment.upstreamModel(),
                    request.config().upstreamLimits(), collectedBudget, hook, onDone);
        }
        if (responses ? !provider.responsesApi()
                : provider.styleFor(deployment.upstreamModel()) != endpoint.style()) {
            TranslatedRequest translated = Translations.request(ctx.alloc(), request, model, deployment);
            if (provider.claudeOnVertex(deployment.upstreamModel())) {
                translated = new TranslatedRequest(VertexClaude.fromTranslated(ctx.alloc(), translated.body()),
                        translated.stream(), translated.response());
            }
            return new ProxyExchange(ctx, request, provider, deployment.upstreamModel(), pools,
                    request.config().upstreamLimits(), collectedBudget, translated.body(), translated.response(),
                    false, hook, onDone);
        }
        ResponseTranslator translator = null;
        BodySplicer.Edit[] edits = NO_EDITS; // most requests go as they came: no array is made for them
        if (provider.claudeOnVertex(deployment.upstreamModel())) {
            // The model is in the path.
            edits = plus(edits, VertexClaude.edit(request.body(), peek.modelStart(), peek.modelEnd()));
        } else if (!deployment.upstreamModel().equals(peek.model())) {
            edits = plus(edits, BodySplicer.string(peek.modelStart(), peek.modelEnd(), deployment.upstreamModel()));
        }
        if (endpoint == Endpoint.EMBEDDINGS && model.encodeBase64() && "base64".equals(peek.encodingFormat())) {
            // The provider only returns floats: ask for floats, encode base64 on the way back.
            edits = plus(edits, BodySplicer.string(peek.encodingFormatStart(), peek.encodingFormatEnd(), "float"));
            translator = new EmbeddingsBase64();
        }
        if ((endpoint == Endpoint.CHAT_COMPLETIONS || endpoint == Endpoint.RESPONSES) && model.noTemperature()
                && peek.hasTemperature()) {
            edits = plus(edits, BodySplicer.removeMember(request.body(), peek.temperatureMemberStart(),
                    peek.temperatureMemberEnd())); // GD-19: dropped silently on chat and the Responses API
        }
        // Every chat stream is accounted from the upstream's own usage chunk: ask for it when the caller did not,
        // and withhold it from that caller (GD-21).
        BodySplicer.Edit includeUsage = endpoint == Endpoint.CHAT_COMPLETIONS ? peek.includeUsageEdit() : null;
        if (includeUsage != null) {
            edits = plus(edits, includeUsage);
        }
        // Unedited, the exchange holds the request's own buffer, retained: what reads it (the upstream request's
        // duplicate, Bedrock's call builder) reads by index or through duplicates, so its indexes stay as they are.
        ByteBuf body = edits.length != 0 ? BodySplicer.splice(ctx.alloc(), request.body(), edits)
                : request.body().retain();
        return new ProxyExchange(ctx, request, provider, deployment.upstreamModel(), pools,
                request.config().upstreamLimits(), collectedBudget, body, translator, includeUsage != null, hook,
                onDone);
    }

    private static final BodySplicer.Edit[] NO_EDITS = {};

    /**
     * {@code edits} and then {@code e}, in a new array one longer: a request has one edit or two (a stream's
     * {@code include_usage}, a deployment's model name), so the array is the exact size {@code splice} takes.
     */
    private static BodySplicer.Edit[] plus(BodySplicer.Edit[] edits, BodySplicer.Edit e) {
        BodySplicer.Edit[] more = Arrays.copyOf(edits, edits.length + 1);
        more[edits.length] = e;
        return more;
    }

    /**
     * GD-30: a Responses request that continues a stored response ({@code previous_response_id}) can only go to a
     * provider that keeps responses (an openai provider with {@code responses_api}); anywhere else it is a 400 before
     * anything is sent, whatever the rest of the request holds.
     */
    private static void refuseStateful(RequestPeek peek, ModelConfig model) throws TranslationException {
        if (peek.previousResponseId() != null) {
            throw new TranslationException(GatewayError.invalid("previous_response_id: the model `" + model.name()
                    + "` is served by a provider that keeps no responses; send the whole conversation in 'input' "
                    + "(with 'store': false).", "previous_response_id", "unsupported_parameter"));
        }
    }
}
