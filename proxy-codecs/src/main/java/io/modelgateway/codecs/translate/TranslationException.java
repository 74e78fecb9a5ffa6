package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.error.GatewayError;

/** A request that cannot be translated (a 400 for the caller) or an upstream answer that cannot (a 502). */
public final class TranslationException extends Exception {
    private final transient GatewayError error;

    public TranslationException(GatewayError error) {
        super(error.message(), null, false, false);
        this.error = error;
    }

    public GatewayError error() {
        return error;
    }
}
