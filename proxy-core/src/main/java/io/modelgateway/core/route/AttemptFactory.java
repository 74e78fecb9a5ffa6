package io.modelgateway.core.route;

import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.GatewayRequest;
import io.netty.channel.ChannelHandlerContext;
import java.util.function.Consumer;

/**
 * Builds the attempts of a request for its {@link RetryingExchange}: the {@link AttemptPlanner}, one per server (the
 * request and its channel are arguments, so that no object per request stands between the two).
 */
interface AttemptFactory {

    /**
     * A new, not yet started exchange of {@code request} with one deployment of {@code model} (the requested model or
     * a fallback, whose own settings shape the upstream request), on the client channel {@code ctx}. It owns what it
     * allocated until it ends.
     *
     * @throws TranslationException the request cannot be expressed for that deployment's style
     */
    Exchange attempt(ChannelHandlerContext ctx, GatewayRequest request, ModelConfig model, DeploymentConfig deployment,
            AttemptHook hook, Consumer<Outcome> onDone) throws TranslationException;

    /** Whether a fallback {@code model} may serve {@code request} (it would have passed that model's own checks). */
    boolean accepts(GatewayRequest request, ModelConfig model);
}
