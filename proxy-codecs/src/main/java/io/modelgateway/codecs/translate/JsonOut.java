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

    /** Writes some members of an object whose start and end its caller writes (an event's own fields). */
    @FunctionalInterface
    interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    /** The {@code event:} and {@code data:} line starts of a typed SSE event; its JSON and a blank line follow. */
    static String eventPrefix(String type) {
        return "event: " + type + "\ndata: ";
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

    /**
     * A whole answer for the caller, written with {@code json} into a buffer sized for the upstream's answer it
     * translates; a write that fails (a string the generator cannot write) is an answer the gateway could not read.
     */
    static ByteBuf answer(ByteBufAllocator alloc, ByteBuf upstream, JsonFactory json, Body<IOException> body)
            throws TranslationException {
        try {
            return write(alloc, 512 + upstream.readableBytes(), json, body);
        } catch (IOException | RuntimeException e) {
            throw TranslationException.unreadableAnswer();
        }
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

    /**
     * A whole {@code chat.completion} up to its one message's own fields: the head, {@code choices[0]} and the
     * message's {@code role}; {@link #completionEnd} closes it.
     */
    static void completionStart(JsonGenerator g, String id, long created, String model) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", id);
        g.writeStringField("object", "chat.completion");
        g.writeNumberField("created", created);
        g.writeStringField("model", model);
        g.writeNullField("system_fingerprint");
        g.writeArrayFieldStart("choices");
        g.writeStartObject();
        g.writeNumberField("index", 0);
        g.writeObjectFieldStart("message");
        g.writeStringField("role", "assistant");
    }

    /** The message's {@code content} (null for an answer of tool calls only) and its {@code refusal}: none. */
    static void completionContent(JsonGenerator g, CharSequence text, boolean toolCalls) throws IOException {
        if (text.length() == 0 && toolCalls) {
            g.writeNullField("content");
        } else {
            g.writeStringField("content", text.toString());
        }
        g.writeNullField("refusal");
    }

    /** The rest of a {@link #completionStart}: the message closed, the finish reason, the whole usage. */
    static void completionEnd(JsonGenerator g, String finishReason, Usage usage, boolean reasoningReported)
            throws IOException {
        g.writeEndObject();
        g.writeNullField("logprobs");
        g.writeStringField("finish_reason", finishReason);
        g.writeEndObject();
        g.writeEndArray();
        g.writeFieldName("usage");
        UsageJson.writeChat(g, usage, reasoningReported);
        g.writeEndObject();
    }

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
