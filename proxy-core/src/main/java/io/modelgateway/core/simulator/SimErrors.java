package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Error bodies of both styles, as the real providers write them (contract 7.1–7.3, 7.6):
 * OpenAI {@code {"error":{"message","type","param","code"}}} and Anthropic
 * {@code {"type":"error","error":{"type","message"},"request_id"}}.
 */
final class SimErrors {

    /** The error vocabulary of one HTTP status in each style. */
    record Shape(String openAiType, String openAiCode, String anthropicType) {
    }

    private SimErrors() {
    }

    static Shape shape(int status) {
        return switch (status) {
            case 400 -> new Shape("invalid_request_error", null, "invalid_request_error");
            case 401 -> new Shape("invalid_request_error", "invalid_api_key", "authentication_error");
            case 402 -> new Shape("insufficient_quota", "insufficient_quota", "billing_error");
            case 403 -> new Shape("permission_error", null, "permission_error");
            case 404 -> new Shape("invalid_request_error", "not_found", "not_found_error");
            case 405 -> new Shape("invalid_request_error", "method_not_allowed", "invalid_request_error");
            case 408 -> new Shape("invalid_request_error", "request_timeout", "invalid_request_error");
            case 413 -> new Shape("invalid_request_error", "request_too_large", "request_too_large");
            case 429 -> new Shape("requests", "rate_limit_exceeded", "rate_limit_error");
            case 502 -> new Shape("server_error", "upstream_error", "api_error");
            case 503, 529 -> new Shape("server_error", "overloaded", "overloaded_error");
            case 504 -> new Shape("server_error", "upstream_timeout", "timeout_error");
            default -> status < 500
                    ? new Shape("invalid_request_error", null, "invalid_request_error")
                    : new Shape("server_error", null, "api_error");
        };
    }

    /** What a provider would say for an injected status. */
    static String faultMessage(int status, int retryAfter) {
        return switch (status) {
            case 429 -> "Rate limit reached for requests. Please try again in "
                    + Math.max(1, retryAfter) + "s. (simulated)";
            case 503, 529 -> "Overloaded (simulated)";
            case 504 -> "The upstream did not answer in time (simulated)";
            default -> "Simulated error with status " + status;
        };
    }

    static String requestId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return "req_" + new Prng(r.nextLong()).base62(24);
    }

    static Map<String, String> idHeaders(ApiStyle style, String requestId) {
        Map<String, String> h = new HashMap<>(4);
        h.put(style == ApiStyle.ANTHROPIC ? "request-id" : "x-request-id", requestId);
        return h;
    }

    static SimulatedResponse response(ApiStyle style, int status, String message, String param, String code,
                                      long delayMs, int retryAfter) {
        String requestId = requestId();
        Map<String, String> headers = idHeaders(style, requestId);
        if (retryAfter >= 0) {
            headers.put("retry-after", Integer.toString(retryAfter));
        }
        return SimulatedResponse.full(status, headers, delayMs, body(style, status, message, param, code, requestId));
    }

    static SimulatedResponse response(ApiStyle style, SimRequestException e) {
        return response(style, e.status(), e.getMessage(), e.param(), e.code(), 0, -1);
    }

    static byte[] body(ApiStyle style, int status, String message, String param, String code, String requestId) {
        Shape shape = shape(status);
        JsonBytes out = new JsonBytes(160 + message.length());
        if (style == ApiStyle.ANTHROPIC) {
            out.raw("{\"type\":\"error\",\"error\":{\"type\":").str(shape.anthropicType())
                    .raw(",\"message\":").str(message).raw("},\"request_id\":").str(requestId).raw("}");
        } else {
            openAiError(out, message, shape.openAiType(), param, code != null ? code : shape.openAiCode());
        }
        return out.toBytes();
    }

    /** The {@code {"error":{...}}} object, shared by error bodies and mid-stream error events. */
    static JsonBytes openAiError(JsonBytes out, String message, String type, String param, String code) {
        return out.raw("{\"error\":{\"message\":").str(message).raw(",\"type\":").str(type)
                .raw(",\"param\":").str(param).raw(",\"code\":").str(code).raw("}}");
    }

    /** The mid-stream error event of a style (GD-10); the stream ends after it. */
    static byte[] streamErrorEvent(ApiStyle style, String message) {
        JsonBytes out = new JsonBytes(200);
        if (style == ApiStyle.ANTHROPIC) {
            out.raw("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":")
                    .str(message).raw("}}\n\n");
        } else {
            openAiError(out.raw("data: "), message, "server_error", null, null).raw("\n\n");
        }
        return out.toBytes();
    }
}
