package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.error.SecretRedactor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.InputStream;
import java.util.Locale;

/**
 * Contract 8.10: an upstream error answer (non-2xx) re-expressed for the caller, by HTTP status through
 * the table of 7.3. Used by both translation directions, so it reads either style's body: Anthropic
 * {@code {"type":"error","error":{type,message}}}, OpenAI {@code {"error":{message,type,param,code}}}, and the
 * looser shapes OpenAI-compatible servers send ({@code {"error":"…"}}, {@code {"message":"…"}},
 * {@code {"detail":"…"}}). The {@link GatewayError} it returns is style-neutral; its kind carries the status
 * for each style (OVERLOADED: 503 for chat callers, 529 for messages callers).
 *
 * <p>The upstream message is kept (it is what the provider knows about the failure) after anything that
 * looks like a credential is masked (callers that know the provider's own secrets remove those from the body first,
 * with the provider's {@link SecretRedactor}); bodies that are not JSON (proxy HTML pages) are never relayed.
 * Problems with the gateway's own upstream account (401, 402, 403, quota) become 502: the caller cannot fix
 * them and must never be told its own key is wrong.
 */
public final class ErrorTranslator {
    /** Longer upstream messages are cut: they end up in logs and SDK exceptions. */
    static final int MAX_MESSAGE_CHARS = 2000;
    /** Bodies larger than this are not parsed for a message (an error body is small; this is not one). */
    private static final int MAX_BODY_BYTES = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private ErrorTranslator() {
    }

    /**
     * @param upstreamStyle the style the upstream speaks (decides whose details are worth keeping)
     * @param status        the upstream's HTTP status
     * @param body          the upstream's body, borrowed (neither read nor released); may be empty or not JSON
     * @param callerStyle   the style of the caller that will see the error
     */
    public static GatewayError fromUpstream(ApiStyle upstreamStyle, int status, ByteBuf body, ApiStyle callerStyle) {
        return fromUpstream(upstreamStyle, status, body, callerStyle, null, null);
    }

    /**
     * As {@link #fromUpstream(ApiStyle, int, ByteBuf, ApiStyle)}, and occurrences of the internal
     * {@code upstreamModel} id in the message are replaced by the caller's {@code callerModel} (or a neutral
     * phrase when null), so provider-side model ids do not leak.
     */
    public static GatewayError fromUpstream(ApiStyle upstreamStyle, int status, ByteBuf body, ApiStyle callerStyle,
            String upstreamModel, String callerModel) {
        Details d = Details.read(body);
        ErrorKind kind = kindOf(status, d);
        String message = d.message == null ? null : clean(d.message, upstreamModel, callerModel);
        String param = null;
        String code = null;
        if (callerStyle == ApiStyle.OPENAI && isClientKind(kind)) {
            if (upstreamStyle == ApiStyle.OPENAI) {
                param = d.param;
                code = d.code;
            } else if (kind == ErrorKind.INVALID_REQUEST && message != null
                    && message.toLowerCase(Locale.ROOT).contains("prompt is too long")) {
                // Anthropic's wording for what OpenAI callers know as context_length_exceeded.
                param = "messages";
                code = "context_length_exceeded";
            }
        }
        return new GatewayError(kind, describe(kind, status, d, message), param, code);
    }

    /**
     * The kind an upstream error status maps to (7.3) when its body says nothing: what the caller is told when the
     * body cannot be relayed (too large, unreadable).
     */
    public static ErrorKind kindForStatus(int status) {
        return kindOf(status, Details.NONE);
    }

    /** The kind by status (7.3), with the few overrides a body's error type decides. */
    static ErrorKind kindOf(int status, Details d) {
        if ("overloaded_error".equals(d.type)) {
            return ErrorKind.OVERLOADED;
        }
        if (isAccountProblem(status, d)) {
            return ErrorKind.UPSTREAM_ERROR;
        }
        return switch (status) {
            case 400, 422 -> ErrorKind.INVALID_REQUEST;
            case 404 -> ErrorKind.NOT_FOUND;
            case 413 -> ErrorKind.REQUEST_TOO_LARGE;
            case 429 -> ErrorKind.RATE_LIMIT;
            case 503, 529 -> ErrorKind.OVERLOADED;
            // 408: the upstream found the gateway too slow; 524: a CDN in front of the upstream timed out.
            case 408, 504, 524 -> ErrorKind.UPSTREAM_TIMEOUT;
            // 405/409/…: nothing the caller's request can fix.
            case 405, 409 -> ErrorKind.UPSTREAM_ERROR;
            default -> status >= 400 && status < 500 ? ErrorKind.INVALID_REQUEST : ErrorKind.UPSTREAM_ERROR;
        };
    }

    /** The mid-stream Anthropic {@code error} event's type → kind (8.4: overloaded, rate limit, others). */
    static ErrorKind kindOfAnthropicType(String type) {
        if (type == null) {
            return ErrorKind.UPSTREAM_ERROR;
        }
        return switch (type) {
            case "overloaded_error" -> ErrorKind.OVERLOADED;
            case "rate_limit_error" -> ErrorKind.RATE_LIMIT;
            case "timeout_error" -> ErrorKind.UPSTREAM_TIMEOUT;
            default -> ErrorKind.UPSTREAM_ERROR;
        };
    }

    /** Credentials, billing or quota of the gateway's own upstream account. */
    private static boolean isAccountProblem(int status, Details d) {
        return status == 401 || status == 402 || status == 403 || "insufficient_quota".equals(d.code)
                || "insufficient_quota".equals(d.type) || "billing_error".equals(d.type)
                || "authentication_error".equals(d.type) || "permission_error".equals(d.type);
    }

    private static boolean isClientKind(ErrorKind kind) {
        return kind == ErrorKind.INVALID_REQUEST || kind == ErrorKind.NOT_FOUND
                || kind == ErrorKind.REQUEST_TOO_LARGE || kind == ErrorKind.RATE_LIMIT;
    }

    private static String describe(ErrorKind kind, int status, Details d, String message) {
        if (kind == ErrorKind.UPSTREAM_ERROR && isAccountProblem(status, d)) {
            String what = status == 401 || status == 403 || "authentication_error".equals(d.type)
                    || "permission_error".equals(d.type)
                    ? "The upstream provider rejected the gateway's credentials"
                    : "The gateway's account with the upstream provider is out of credit or quota";
            return what + " (HTTP " + status + ")." + (message == null ? "" : " Upstream message: " + message);
        }
        if (message != null) {
            return message;
        }
        return switch (kind) {
            case INVALID_REQUEST -> "The upstream provider rejected the request (HTTP " + status + ").";
            case NOT_FOUND -> "The upstream provider could not find the requested resource (HTTP " + status + ").";
            case REQUEST_TOO_LARGE -> "The request is too large for the upstream provider (HTTP " + status + ").";
            case RATE_LIMIT -> "The upstream provider's rate limit was reached. Please retry later.";
            case OVERLOADED -> "The upstream provider is overloaded (HTTP " + status + "). Please retry later.";
            case UPSTREAM_TIMEOUT -> "The upstream provider did not answer in time (HTTP " + status + ").";
            default -> "The upstream provider returned an error (HTTP " + status + ").";
        };
    }

    /** Masks credentials, hides the internal model id and bounds the length of an upstream message. */
    static String clean(String message, String upstreamModel, String callerModel) {
        String m = message.strip();
        if (m.isEmpty()) {
            return null;
        }
        if (upstreamModel != null && !upstreamModel.isEmpty() && !upstreamModel.equals(callerModel)) {
            m = m.replace(upstreamModel, callerModel != null ? callerModel : "the requested model");
        }
        m = redact(m);
        if (m.length() > MAX_MESSAGE_CHARS) {
            m = m.substring(0, MAX_MESSAGE_CHARS) + "…";
        }
        return m;
    }

    /** Replaces anything that looks like an API key or bearer token ({@link SecretRedactor#PATTERNS_ONLY}). */
    static String redact(String message) {
        return SecretRedactor.PATTERNS_ONLY.redact(message);
    }

    /** What an upstream error body says, in either style; all null when it says nothing readable. */
    static final class Details {
        static final Details NONE = new Details(null, null, null, null);
        final String message;
        final String type;
        final String code;
        final String param;

        private Details(String message, String type, String code, String param) {
            this.message = message;
            this.type = type;
            this.code = code;
            this.param = param;
        }

        static Details read(ByteBuf body) {
            if (body == null || !body.isReadable() || body.readableBytes() > MAX_BODY_BYTES || !startsLikeObject(body)) {
                return NONE;
            }
            JsonNode root;
            try {
                root = JSON.readTree((InputStream) new ByteBufInputStream(body.duplicate()));
            } catch (Exception e) {
                return NONE; // a torn or non-JSON body says nothing we can relay
            }
            if (root == null || !root.isObject()) {
                return NONE;
            }
            JsonNode error = root.get("error");
            if (error != null && error.isObject()) {
                return new Details(text(error.get("message")), text(error.get("type")), text(error.get("code")),
                        text(error.get("param")));
            }
            String message = text(error);
            if (message == null) {
                message = text(root.get("message"));
            }
            if (message == null) {
                message = text(root.get("detail"));
            }
            return new Details(message, null, null, null);
        }

        private static boolean startsLikeObject(ByteBuf body) {
            for (int i = body.readerIndex(); i < body.writerIndex(); i++) {
                byte b = body.getByte(i);
                if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                    return b == '{';
                }
            }
            return false;
        }
    }
}
