package io.modelgateway.core.route;

import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import java.util.function.Consumer;

/** Builds the attempts of one request for its {@link RetryingExchange} (made by {@link AttemptPlanner#attempts}). */
interface AttemptFactory {

    /**
     * A new, not yet started exchange of the request with one deployment of {@code model} (the requested model or
     * a fallback, whose own settings shape the upstream request). It owns what it allocated until it ends.
     *
     * @throws TranslationException the request cannot be expressed for that deployment's style
     */
    Exchange create(ModelConfig model, DeploymentConfig deployment, AttemptHook hook, Consumer<Outcome> onDone)
            throws TranslationException;

    /** Whether a fallback {@code model} may serve the request (it would have passed that model's own checks). */
    boolean accepts(ModelConfig model);
}
