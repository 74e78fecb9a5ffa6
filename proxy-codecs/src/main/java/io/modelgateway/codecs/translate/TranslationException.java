package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.error.ErrorKind;
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

    /** The 400 of a request the request translators refuse: its message, the field's path and the error code. */
    static TranslationException invalid(String message, String param, String code) {
        return new TranslationException(GatewayError.invalid(message, param, code));
    }

    /** The 502 of an upstream answer the answer translators could not read. */
    static TranslationException unreadableAnswer() {
        return new TranslationException(GatewayError.of(ErrorKind.UPSTREAM_ERROR,
                "The upstream provider returned a response the gateway could not read."));
    }
}
