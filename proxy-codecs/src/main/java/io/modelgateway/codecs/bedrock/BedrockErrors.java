package io.modelgateway.codecs.bedrock;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Bedrock's errors as Anthropic-style errors (GD-27, contract 6.1): an HTTP error answer ({@code x-amzn-ErrorType}
 * header, or a {@code __type} in the body, and {@code {"message":…}}) or an exception event of an event stream
 * ({@code :exception-type}, payload {@code {"message":…}}) becomes {@code {"type":"error","error":{type,message}}}
 * with the status the gateway answers it with, so that everything after the Bedrock adapter sees an Anthropic-style
 * upstream: a messages caller gets that error as it is, a chat caller gets it re-expressed (contract 8.10).
 *
 * <p>The statuses: validation 400; throttling, model-not-ready and service quota 429 (retried, and the quota is a
 * per-minute one); access denied and every signature or token fault 403 (the gateway's own credentials: the caller
 * gets a 502, never a 403); resource not found 404; model timeout 504; model and model-stream errors 502;
 * internal errors 500; service unavailable 529 ({@code overloaded_error}, 503 for chat callers). An unknown type keeps
 * its HTTP status (502 in a stream).
 */
public final class BedrockErrors {
    private static final JsonFactory JSON = new JsonFactory();

    private BedrockErrors() {
    }

    /** An error as the gateway answers it: the status and the Anthropic error type. */
    public record Mapped(int status, String type) {
    }

    /**
     * The status and type for a Bedrock error type ({@code ThrottlingException},
     * {@code throttlingException}, {@code ThrottlingException:http://…}, {@code com.amazon…#ThrottlingException});
     * {@code httpStatus} decides for an unknown or absent type (0: none, as in a stream).
     */
    public static Mapped map(String errorType, int httpStatus) {
        String t = normalize(errorType);
        if (t != null) {
            switch (t) {
                case "validationexception", "conflictexception" -> {
                    return new Mapped(400, "invalid_request_error");
                }
                case "throttlingexception", "modelnotreadyexception", "servicequotaexceededexception",
                        "toomanyrequestsexception" -> {
                    return new Mapped(429, "rate_limit_error");
                }
                case "accessdeniedexception" -> {
                    return new Mapped(403, "permission_error");
                }
                case "unrecognizedclientexception", "invalidsignatureexception", "expiredtokenexception",
                        "incompletesignatureexception", "missingauthenticationtokenexception",
                        "invalidclienttokenidexception", "signaturedoesnotmatch" -> {
                    return new Mapped(403, "authentication_error");
                }
                case "resourcenotfoundexception" -> {
                    return new Mapped(404, "not_found_error");
                }
                case "modeltimeoutexception" -> {
                    return new Mapped(504, "timeout_error");
                }
                case "modelerrorexception", "modelstreamerrorexception" -> {
                    return new Mapped(502, "api_error");
                }
                case "internalserverexception", "internalfailure" -> {
                    return new Mapped(500, "api_error");
                }
                case "serviceunavailableexception" -> {
                    return new Mapped(529, "overloaded_error");
                }
                default -> {
                }
            }
        }
        return byStatus(httpStatus);
    }

    private static Mapped byStatus(int status) {
        return switch (status) {
            case 400, 422 -> new Mapped(400, "invalid_request_error");
            case 401 -> new Mapped(401, "authentication_error");
            case 403 -> new Mapped(403, "permission_error");
            case 404 -> new Mapped(404, "not_found_error");
            case 408, 504 -> new Mapped(504, "timeout_error");
            case 413 -> new Mapped(413, "request_too_large");
            case 429 -> new Mapped(429, "rate_limit_error");
            case 503, 529 -> new Mapped(529, "overloaded_error");
            case 0 -> new Mapped(502, "api_error");
            default -> new Mapped(status >= 400 && status < 500 ? 400 : status >= 500 ? status : 502,
                    status >= 400 && status < 500 ? "invalid_request_error" : "api_error");
        };
    }

    /** {@code ThrottlingException:http://…} / {@code ns#ThrottlingException} → {@code throttlingexception}. */
    static String normalize(String errorType) {
        if (errorType == null || errorType.isBlank()) {
            return null;
        }
        String t = errorType.strip();
        int colon = t.indexOf(':');
        if (colon >= 0) {
            t = t.substring(0, colon);
        }
        int hash = t.lastIndexOf('#');
        if (hash >= 0) {
            t = t.substring(hash + 1);
        }
        return t.toLowerCase(Locale.ROOT);
    }

    /** What a Bedrock error body says: its {@code message} (or {@code Message}) and its {@code __type}; nulls when not. */
    public record Body(String message, String type) {
        static final Body NONE = new Body(null, null);
    }

    /** Reads a Bedrock error body (borrowed; not consumed); a body that is not a JSON object says nothing. */
    public static Body read(ByteBuf body) {
        if (body == null || !body.isReadable()) {
            return Body.NONE;
        }
        byte[] bytes = new byte[body.readableBytes()];
        body.getBytes(body.readerIndex(), bytes);
        String message = null;
        String type = null;
        try (JsonParser p = JSON.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return Body.NONE;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if (v == JsonToken.VALUE_STRING && (name.equals("message") || name.equals("Message"))) {
                    message = p.getText();
                } else if (v == JsonToken.VALUE_STRING && (name.equals("__type") || name.equals("code"))) {
                    type = p.getText();
                } else {
                    p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            return message == null ? Body.NONE : new Body(message, type);
        }
        return new Body(message, type);
    }

    /** {@code {"type":"error","error":{"type":…,"message":…}}} in a new buffer. */
    public static ByteBuf anthropicBody(ByteBufAllocator alloc, String type, String message) {
        return write(alloc, type, message, null, null);
    }

    /** The same as an Anthropic SSE error event ({@code event: error}), which ends a stream (GD-10). */
    public static ByteBuf anthropicEvent(ByteBufAllocator alloc, String type, String message) {
        return write(alloc, type, message, "event: error\ndata: ", "\n\n");
    }

    /** A message for an error that came without one. */
    public static String describe(Mapped mapped, String errorType) {
        String what = errorType == null ? "an error" : normalize(errorType);
        return "The upstream provider (Amazon Bedrock) reported " + what + " (HTTP " + mapped.status() + ").";
    }

    private static ByteBuf write(ByteBufAllocator alloc, String type, String message, String prefix, String suffix) {
        ByteBuf buf = alloc.buffer(96 + (message == null ? 0 : message.length()));
        boolean ok = false;
        try {
            if (prefix != null) {
                buf.writeCharSequence(prefix, StandardCharsets.US_ASCII);
            }
            try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf), JsonEncoding.UTF8)) {
                g.writeStartObject();
                g.writeStringField("type", "error");
                g.writeObjectFieldStart("error");
                g.writeStringField("type", type);
                g.writeStringField("message", message == null ? "The upstream provider reported an error." : message);
                g.writeEndObject();
                g.writeEndObject();
            }
            if (suffix != null) {
                buf.writeCharSequence(suffix, StandardCharsets.US_ASCII);
            }
            ok = true;
            return buf;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!ok) {
                buf.release();
            }
        }
    }
}
