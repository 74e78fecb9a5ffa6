package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writing the translators share: a JSON value generated straight into a new buffer (optionally framed as an SSE
 * event), and the small objects both directions write alike. Each translator keeps its own factory or mapper:
 * their settings differ (number handling, string limits) and decide the exact bytes.
 */
final class JsonOut {
    private JsonOut() {
    }

    /** Writes one JSON value; {@code E} is what else the writer may throw (a translation error). */
    @FunctionalInterface
    interface Body<E extends Exception> {
        void write(JsonGenerator g) throws IOException, E;
    }

    @FunctionalInterface
    private interface Generators {
        JsonGenerator create(OutputStream out) throws IOException;
    }

    /** A new buffer with the JSON {@code body} writes through a generator of {@code json}. */
    static <E extends Exception> ByteBuf write(ByteBufAllocator alloc, int capacity, JsonFactory json, Body<E> body)
            throws IOException, E {
        return write(alloc, capacity, out -> json.createGenerator(out, JsonEncoding.UTF8), null, body, null);
    }

    /**
     * As {@link #write(ByteBufAllocator, int, JsonFactory, Body)}, between {@code prefix} and {@code suffix}
     * (US-ASCII, as SSE framing is): {@code data: …\n\n} and the like.
     */
    static <E extends Exception> ByteBuf write(ByteBufAllocator alloc, int capacity, JsonFactory json, String prefix,
            Body<E> body, String suffix) throws IOException, E {
        return write(alloc, capacity, out -> json.createGenerator(out, JsonEncoding.UTF8), prefix, body, suffix);
    }

    /** As above with a generator of {@code mapper}, so the mapper's serialization settings apply to it. */
    static <E extends Exception> ByteBuf write(ByteBufAllocator alloc, int capacity, ObjectMapper mapper, Body<E> body)
            throws IOException, E {
        return write(alloc, capacity, out -> mapper.createGenerator(out, JsonEncoding.UTF8), null, body, null);
    }

    /** As above between {@code prefix} and {@code suffix}: an SSE event written with a mapper's generator. */
    static <E extends Exception> ByteBuf write(ByteBufAllocator alloc, int capacity, ObjectMapper mapper, String prefix,
            Body<E> body, String suffix) throws IOException, E {
        return write(alloc, capacity, out -> mapper.createGenerator(out, JsonEncoding.UTF8), prefix, body, suffix);
    }

    /** The buffer is released when anything throws, so a failed write leaks nothing. */
    private static <E extends Exception> ByteBuf write(ByteBufAllocator alloc, int capacity, Generators generators,
            String prefix, Body<E> body, String suffix) throws IOException, E {
        ByteBuf buf = alloc.buffer(capacity);
        boolean ok = false;
        try {
            if (prefix != null) {
                buf.writeCharSequence(prefix, StandardCharsets.US_ASCII);
            }
            try (JsonGenerator g = generators.create(new ByteBufOutputStream(buf))) {
                body.write(g);
            }
            if (suffix != null) {
                buf.writeCharSequence(suffix, StandardCharsets.US_ASCII);
            }
            ok = true;
            return buf;
        } finally {
            if (!ok) {
                buf.release();
            }
        }
    }

    // ---- chat style ----

    /** The fields of a chat tool call after its {@code index}: {@code id}, {@code type} and {@code function}. */
    static void toolCallFields(JsonGenerator g, String id, String name, String arguments) throws IOException {
        g.writeStringField("id", id);
        g.writeStringField("type", "function");
        g.writeObjectFieldStart("function");
        g.writeStringField("name", name);
        g.writeStringField("arguments", arguments);
        g.writeEndObject();
    }

    /** A tool input as chat {@code arguments}: its compact JSON, {@code {}} when there is none. */
    static String arguments(ObjectMapper mapper, JsonNode input) throws IOException {
        return input == null || input.isNull() ? "{}" : mapper.writeValueAsString(input);
    }

    /** A {@code reasoning.text} entry of {@code reasoning_details}; a null text or signature is left out. */
    static void reasoningText(JsonGenerator g, String text, String signature, int index) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "reasoning.text");
        if (text != null) {
            g.writeStringField("text", text);
        }
        if (signature != null) {
            g.writeStringField("signature", signature);
        }
        g.writeNumberField("index", index);
        g.writeEndObject();
    }

    /** A {@code reasoning.encrypted} entry of {@code reasoning_details}. */
    static void reasoningEncrypted(JsonGenerator g, String data, int index) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "reasoning.encrypted");
        g.writeStringField("data", data);
        g.writeNumberField("index", index);
        g.writeEndObject();
    }

    // ---- messages style ----

    /** {@code {"type":"text","text":…}}: a messages text block, and a chat text content part alike. */
    static void textBlock(JsonGenerator g, String text) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "text");
        g.writeStringField("text", text);
        g.writeEndObject();
    }

    static void thinkingBlock(JsonGenerator g, String thinking, String signature) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "thinking");
        g.writeStringField("thinking", thinking);
        g.writeStringField("signature", signature);
        g.writeEndObject();
    }

    static void redactedThinkingBlock(JsonGenerator g, String data) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "redacted_thinking");
        g.writeStringField("data", data);
        g.writeEndObject();
    }
}
