package io.modelgateway.core.route;

import io.netty.channel.ChannelHandler;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ModelType;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.RequestStep;

/**
 * Request step: may this key use the model it names, on this endpoint? Finds the model in the request's config
 * (404 when it has none), checks the key's permission (403), that the endpoint fits the model's kind (an
 * embedding model on embeddings only, 400) and the settings the model refuses (GD-19 {@code temperature} on
 * messages, {@code dimensions}; 400). A refused request is answered in its style and released here; one that
 * passes goes on carrying its {@link GatewayRequest#model model}, and its record names the model. Event-loop
 * confined, stateless.
 */
@ChannelHandler.Sharable
public final class ModelResolver extends RequestStep {
    public ModelResolver(Exchanges exchanges) {
        super(exchanges);
    }

    @Override
    protected GatewayError check(GatewayRequest request) {
        RequestPeek peek = request.peek();
        Endpoint endpoint = request.endpoint();
        ModelConfig model = request.config().model(peek.model());
        if (model == null) {
            return new GatewayError(ErrorKind.NOT_FOUND, request.style() == ApiStyle.ANTHROPIC
                    ? "model: " + abbreviate(peek.model())
                    : "The model `" + abbreviate(peek.model()) + "` does not exist or you do not have access to it.",
                    "model", "model_not_found");
        }
        ExchangeRecord record = request.record();
        record.model(model.name());
        record.stream(peek.stream());
        if (!request.key().allowsModel(model.name())) {
            return new GatewayError(ErrorKind.PERMISSION, "This key is not allowed to use the model `"
                    + model.name() + "`.", "model", "model_not_allowed");
        }
        boolean wantsEmbedding = endpoint == Endpoint.EMBEDDINGS;
        if (wantsEmbedding != (model.type() == ModelType.EMBEDDING)) {
            return GatewayError.invalid(wantsEmbedding
                    ? "The model `" + model.name() + "` is not an embedding model."
                    : "The model `" + model.name() + "` is an embedding model and cannot be used on this endpoint.",
                    "model", "unsupported_model");
        }
        if (endpoint == Endpoint.MESSAGES && model.noTemperature() && peek.hasTemperature()) {
            return GatewayError.invalid("temperature: the model `" + model.name()
                    + "` does not support temperature.", "temperature", "unsupported_parameter"); // GD-19
        }
        if (wantsEmbedding && peek.dimensions() > 0 && !model.supportsDimensions()) {
            return GatewayError.invalid("The model `" + model.name() + "` does not support "
                    + "'dimensions'.", "dimensions", "unsupported_parameter");
        }
        request.model(model);
        return null;
    }

    /**
     * Whether {@code model} would have taken this request past the checks above that depend on the model's
     * settings: the test a fallback model passes before a request falls back to it.
     */
    static boolean servable(Endpoint endpoint, RequestPeek peek, ModelConfig model) {
        if (endpoint == Endpoint.MESSAGES && model.noTemperature() && peek.hasTemperature()) {
            return false;
        }
        return !(endpoint == Endpoint.EMBEDDINGS && peek.dimensions() > 0 && !model.supportsDimensions());
    }

    private static String abbreviate(String s) {
        return s.length() > 100 ? s.substring(0, 100) + "…" : s;
    }
}
