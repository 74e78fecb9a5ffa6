package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.ApiStyle;

/**
 * Typed reads of request fields that fail with the wording of the endpoint's style: OpenAI names
 * the field in {@code param} ({@code messages[2].role}), Anthropic in the message
 * ({@code messages.2.role: Field required}). An explicit {@code null} counts as absent (contract 1.3).
 */
final class RequestReader {

    private final ApiStyle style;

    RequestReader(ApiStyle style) {
        this.style = style;
    }

    String index(String base, int i) {
        return style == ApiStyle.ANTHROPIC ? base + "." + i : base + "[" + i + "]";
    }

    static JsonNode get(JsonNode obj, String name) {
        JsonNode v = obj.get(name);
        return v == null || v.isNull() ? null : v;
    }

    String requireString(JsonNode obj, String name, String path) {
        JsonNode v = get(obj, name);
        if (v == null) {
            throw missing(path);
        }
        if (!v.isTextual()) {
            throw type(path, "a string");
        }
        return v.textValue();
    }

    JsonNode requireNonEmptyArray(JsonNode obj, String name, String path) {
        JsonNode v = get(obj, name);
        if (v == null) {
            throw missing(path);
        }
        if (!v.isArray()) {
            throw type(path, "an array");
        }
        if (v.isEmpty()) {
            throw value(path, "must contain at least one item");
        }
        return v;
    }

    /** An integer in [min, max], or null when absent. */
    Integer optInt(JsonNode obj, String name, String path, int min, int max) {
        JsonNode v = get(obj, name);
        if (v == null) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw type(path, "an integer");
        }
        int i = v.intValue();
        if (i < min || i > max) {
            throw value(path, max == Integer.MAX_VALUE ? "must be at least " + min
                    : "must be between " + min + " and " + max);
        }
        return i;
    }

    boolean optBool(JsonNode obj, String name, String path, boolean dflt) {
        JsonNode v = get(obj, name);
        if (v == null) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw type(path, "a boolean");
        }
        return v.booleanValue();
    }

    JsonNode optObject(JsonNode obj, String name, String path) {
        JsonNode v = get(obj, name);
        if (v != null && !v.isObject()) {
            throw type(path, "an object");
        }
        return v;
    }

    JsonNode optArray(JsonNode obj, String name, String path) {
        JsonNode v = get(obj, name);
        if (v != null && !v.isArray()) {
            throw type(path, "an array");
        }
        return v;
    }

    String optString(JsonNode obj, String name, String path) {
        JsonNode v = get(obj, name);
        if (v != null && !v.isTextual()) {
            throw type(path, "a string");
        }
        return v == null ? null : v.textValue();
    }

    SimRequestException missing(String path) {
        return style == ApiStyle.ANTHROPIC
                ? SimRequestException.invalid(path + ": Field required", path, null)
                : SimRequestException.invalid("Missing required parameter: '" + path + "'.", path,
                        "missing_required_parameter");
    }

    SimRequestException type(String path, String expected) {
        return style == ApiStyle.ANTHROPIC
                ? SimRequestException.invalid(path + ": Input should be " + expected, path, null)
                : SimRequestException.invalid("Invalid type for '" + path + "': expected " + expected + ".", path,
                        "invalid_type");
    }

    SimRequestException value(String path, String detail) {
        return style == ApiStyle.ANTHROPIC
                ? SimRequestException.invalid(path + ": " + detail, path, null)
                : SimRequestException.invalid("Invalid value for '" + path + "': " + detail + ".", path,
                        "invalid_value");
    }

    /** ceil(UTF-8 bytes / 4), at least 1: a deterministic stand-in for a tokenizer. */
    static int tokensFor(long utf8Bytes) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (utf8Bytes + 3) / 4));
    }

    /** UTF-8 length of a string node, or of the text blocks/parts of an array node. */
    static long textBytes(JsonNode content) {
        if (content == null) {
            return 0;
        }
        if (content.isTextual()) {
            return Vocabulary.utf8Length(content.textValue());
        }
        long n = 0;
        if (content.isArray()) {
            for (JsonNode part : content) {
                n += stringBytes(part.get("text")) + stringBytes(part.get("refusal")) + stringBytes(part.get("thinking"));
                if ("tool_use".equals(part.path("type").asText())) {
                    n += stringBytes(part.get("name")) + (part.has("input") ? part.get("input").toString().length() : 0);
                }
                if ("tool_result".equals(part.path("type").asText())) {
                    n += textBytes(part.get("content"));
                }
            }
        }
        return n;
    }

    static long stringBytes(JsonNode n) {
        return n != null && n.isTextual() ? Vocabulary.utf8Length(n.textValue()) : 0;
    }
}
