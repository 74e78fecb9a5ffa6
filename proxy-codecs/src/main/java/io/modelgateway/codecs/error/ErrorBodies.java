package io.modelgateway.codecs.error;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The one writer of error bodies (design rule 7): OpenAI style {@code {"error":{message,type,param,code}}}
 * and Anthropic style {@code {"type":"error","error":{type,message},"request_id"}}, as whole bodies and
 * as mid-stream SSE events (GD-10); on the Responses API's typed stream a mid-stream error is its
 * {@code response.failed} event (GD-28). Messages are written through Jackson so they are always valid JSON.
 */
public final class ErrorBodies {
    private static final JsonFactory JSON = new JsonFactory();

    private ErrorBodies() {
    }

    /** A complete JSON error body; the caller owns (and releases or writes) the returned buffer. */
    public static ByteBuf body(ByteBufAllocator alloc, ApiStyle style, GatewayError error, String requestId) {
        return write(alloc, style, error, requestId, null);
    }

    /**
     * A mid-stream error event in the caller's style: {@code data: {"error":…}} for OpenAI,
     * {@code event: error} + data for Anthropic. The stream must be closed after it, with no terminator.
     */
    public static ByteBuf streamEvent(ByteBufAllocator alloc, ApiStyle style, GatewayError error) {
        return write(alloc, style, error, null, style == ApiStyle.ANTHROPIC ? "event: error\ndata: " : "data: ");
    }

    /**
     * GD-28: the gateway's error on a Responses API stream it did not write itself (passed through, or ended by the
     * gateway's drain): {@code event: response.failed} with a failed response of its own id, no output and
     * {@code error: {code, message}}, numbered {@code sequenceNumber} (the events the caller got before it, which is
     * the next number of a stream numbered from 0). A translated stream writes its own, with the output so far.
     */
    public static ByteBuf responsesFailedEvent(ByteBufAllocator alloc, GatewayError error, long sequenceNumber) {
        ByteBuf buf = alloc.buffer(320 + error.message().length());
        boolean ok = false;
        try {
            buf.writeCharSequence("event: response.failed\ndata: ", StandardCharsets.US_ASCII);
            try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf), JsonEncoding.UTF8)) {
                g.writeStartObject();
                g.writeStringField("type", "response.failed");
                g.writeNumberField("sequence_number", sequenceNumber);
                g.writeObjectFieldStart("response");
                g.writeStringField("id", Ids.withPrefix("resp_"));
                g.writeStringField("object", "response");
                g.writeNumberField("created_at", System.currentTimeMillis() / 1000);
                g.writeStringField("status", "failed");
                g.writeObjectFieldStart("error");
                g.writeStringField("code", responsesErrorCode(error.kind()));
                g.writeStringField("message", error.message());
                g.writeEndObject();
                g.writeNullField("incomplete_details");
                g.writeArrayFieldStart("output");
                g.writeEndArray();
                g.writeStringField("output_text", "");
                g.writeNullField("usage");
                g.writeEndObject();
                g.writeEndObject();
            }
            buf.writeByte('\n').writeByte('\n');
            ok = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!ok) {
                buf.release();
            }
        }
        return buf;
    }

    /**
     * The Responses API's {@code error.code} of a failed response, from its published codes: {@code
     * rate_limit_exceeded} for a rate limit, else {@code server_error} (a mid-stream failure is never the caller's).
     */
    public static String responsesErrorCode(ErrorKind kind) {
        return kind == ErrorKind.RATE_LIMIT || kind == ErrorKind.RATE_LIMIT_TOKENS ? "rate_limit_exceeded"
                : "server_error";
    }

    /** The JSON object, framed as an SSE event when {@code ssePrefix} is given. */
    private static ByteBuf write(ByteBufAllocator alloc, ApiStyle style, GatewayError error, String requestId,
            String ssePrefix) {
        ByteBuf buf = alloc.buffer(192 + error.message().length());
        boolean ok = false;
        try {
            if (ssePrefix != null) {
                buf.writeCharSequence(ssePrefix, StandardCharsets.US_ASCII);
            }
            try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf), JsonEncoding.UTF8)) {
                writeObject(g, style, error, requestId);
            }
            if (ssePrefix != null) {
                buf.writeByte('\n').writeByte('\n');
            }
            ok = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!ok) {
                buf.release();
            }
        }
        return buf;
    }

    private static void writeObject(JsonGenerator g, ApiStyle style, GatewayError error, String requestId)
            throws IOException {
        g.writeStartObject();
        if (style == ApiStyle.ANTHROPIC) {
            g.writeStringField("type", "error");
            g.writeObjectFieldStart("error");
            g.writeStringField("type", error.kind().anthropicType());
            g.writeStringField("message", error.message());
            g.writeEndObject();
            if (requestId != null) {
                g.writeStringField("request_id", requestId);
            }
        } else {
            g.writeObjectFieldStart("error");
            g.writeStringField("message", error.message());
            g.writeStringField("type", error.kind().openAiType());
            writeNullable(g, "param", error.param());
            writeNullable(g, "code", error.code());
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    private static void writeNullable(JsonGenerator g, String name, String value) throws IOException {
        if (value == null) {
            g.writeNullField(name);
        } else {
            g.writeStringField(name, value);
        }
    }
}
