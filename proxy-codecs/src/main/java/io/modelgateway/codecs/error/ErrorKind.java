package io.modelgateway.codecs.error;

import io.modelgateway.codecs.ApiStyle;

/**
 * Every error the gateway can answer, with its status and vocabulary in both styles
 * (contract 7.3). OpenAI-style {@code code} defaults here and may be refined per error.
 */
public enum ErrorKind {
    INVALID_REQUEST(400, 400, "invalid_request_error", "invalid_request_error", null),
    AUTHENTICATION(401, 401, "invalid_request_error", "authentication_error", "invalid_api_key"),
    PERMISSION(403, 403, "permission_error", "permission_error", "model_not_allowed"),
    NOT_FOUND(404, 404, "invalid_request_error", "not_found_error", "not_found"),
    METHOD_NOT_ALLOWED(405, 405, "invalid_request_error", "invalid_request_error", "method_not_allowed"),
    REQUEST_TIMEOUT(408, 408, "invalid_request_error", "invalid_request_error", "request_timeout"),
    REQUEST_TOO_LARGE(413, 413, "invalid_request_error", "request_too_large", "request_too_large"),
    HEADERS_TOO_LARGE(431, 431, "invalid_request_error", "invalid_request_error", "headers_too_large"),
    /** An HTTP version other than 1.0 and 1.1 on the request line. */
    HTTP_VERSION_NOT_SUPPORTED(505, 505, "invalid_request_error", "invalid_request_error", "http_version_not_supported"),
    /** A requests limit (per minute, or in flight) of the gateway or an upstream: OpenAI type {@code requests}. */
    RATE_LIMIT(429, 429, "requests", "rate_limit_error", "rate_limit_exceeded"),
    /**
     * A token limit of the gateway (per minute, or per day): the same 429 and Anthropic type, but OpenAI type
     * {@code tokens}, which is how OpenAI tells callers that a smaller request might pass where more requests
     * would not (contract 7.3).
     */
    RATE_LIMIT_TOKENS(429, 429, "tokens", "rate_limit_error", "rate_limit_exceeded"),
    /**
     * A spend budget of the gateway (a key's {@code budget_usd} per UTC day or month) is used up: the same 429 and
     * Anthropic type, with OpenAI's own vocabulary for a quota that no retry within minutes can pass,
     * {@code insufficient_quota} (contract 7.3).
     */
    SPEND_BUDGET(429, 429, "insufficient_quota", "rate_limit_error", "insufficient_quota"),
    INTERNAL(500, 500, "server_error", "api_error", null),
    UPSTREAM_ERROR(502, 502, "server_error", "api_error", "upstream_error"),
    /** No upstream available or upstream overloaded: 503 for OpenAI-style callers, 529 for Anthropic-style (GD-8). */
    OVERLOADED(503, 529, "server_error", "overloaded_error", "overloaded"),
    UPSTREAM_TIMEOUT(504, 504, "server_error", "timeout_error", "upstream_timeout");

    private final int openAiStatus;
    private final int anthropicStatus;
    private final String openAiType;
    private final String anthropicType;
    private final String defaultCode;

    ErrorKind(int openAiStatus, int anthropicStatus, String openAiType, String anthropicType, String defaultCode) {
        this.openAiStatus = openAiStatus;
        this.anthropicStatus = anthropicStatus;
        this.openAiType = openAiType;
        this.anthropicType = anthropicType;
        this.defaultCode = defaultCode;
    }

    public int status(ApiStyle style) {
        return style == ApiStyle.ANTHROPIC ? anthropicStatus : openAiStatus;
    }

    public String openAiType() {
        return openAiType;
    }

    public String anthropicType() {
        return anthropicType;
    }

    public String defaultCode() {
        return defaultCode;
    }
}
