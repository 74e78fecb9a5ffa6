package io.modelgateway.codecs.error;

/**
 * One error as the caller will see it. {@code param} and {@code code} are OpenAI-style details
 * (the field path, a machine-readable code); Anthropic-style bodies carry only type and message.
 */
public record GatewayError(ErrorKind kind, String message, String param, String code) {

    public GatewayError {
        if (code == null) {
            code = kind.defaultCode();
        }
    }

    public static GatewayError of(ErrorKind kind, String message) {
        return new GatewayError(kind, message, null, null);
    }

    public static GatewayError invalid(String message, String param, String code) {
        return new GatewayError(ErrorKind.INVALID_REQUEST, message, param, code);
    }
}
