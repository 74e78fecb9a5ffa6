package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The caller's side of a chat-completions stream translated from another style: the chunks that
 * {@link MessagesStreamToChat} and {@link GeminiStreamToChat} write as they read their upstream. Every chunk is
 * {@code data: <compact JSON>\n\n} with the same id, created and model; the role chunk comes first; {@code usage} is
 * {@code null} on every chunk but the usage chunk when {@code include_usage} was asked for, and absent otherwise;
 * reasoning goes out as {@code reasoning} + {@code reasoning_details} unless the caller excluded it. The stream ends
 * with {@code data: [DONE]} or with one {@code data: {"error":…}} event (GD-10), after which nothing follows.
 *
 * <p>Ownership: every buffer handed to {@code out} is new and owned by the consumer. One per stream, confined to the
 * exchange's event loop.
 */
final class ChatChunks {
    private static final JsonFactory JSON = ChatRequestToMessages.JSON.getFactory();
    private static final String DATA = "data: ";
    private static final String EVENT_END = "\n\n";
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final JsonOut.Fields NO_DELTA = g -> {
    };

    private final ByteBufAllocator alloc;
    private final String id;
    private final long created;
    private final String fallbackModel;
    private final boolean includeUsage;
    private final boolean excludeReasoning;

    /** The upstream's model once it said one; the fallback from the role chunk on when it had not. */
    private String model;
    private boolean started;
    private boolean finished;
    private boolean failed;

    /**
     * @param id               the completion id every chunk carries
     * @param created          the creation time (seconds) every chunk carries
     * @param fallbackModel    the model reported when the upstream names none before the role chunk
     * @param includeUsage     the caller asked for {@code stream_options.include_usage}
     * @param excludeReasoning the caller asked for no reasoning ({@code reasoning.exclude})
     */
    ChatChunks(ByteBufAllocator alloc, String id, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning) {
        this.alloc = alloc;
        this.id = id;
        this.created = created;
        this.fallbackModel = fallbackModel;
        this.includeUsage = includeUsage;
        this.excludeReasoning = excludeReasoning;
    }

    boolean started() {
        return started;
    }

    /** Whether {@code [DONE]} or the error event is out. */
    boolean finished() {
        return finished;
    }

    boolean failed() {
        return failed;
    }

    boolean includesUsage() {
        return includeUsage;
    }

    String model() {
        return model;
    }

    /** The model the chunks report (GD-17: the upstream's own). */
    void model(String upstreamModel) {
        model = upstreamModel;
    }

    /** The role chunk, once, before anything else the caller sees. */
    void start(Consumer<ByteBuf> out) throws IOException {
        if (started) {
            return;
        }
        started = true;
        if (model == null) {
            model = fallbackModel;
        }
        chunk(out, g -> {
            g.writeStringField("role", "assistant");
            g.writeStringField("content", "");
        }, null);
    }

    /** A fragment of the answer's text; nothing for an empty one. */
    void content(Consumer<ByteBuf> out, String text) throws IOException {
        if (text == null || text.isEmpty()) {
            return;
        }
        chunk(out, g -> g.writeStringField("content", text), null);
    }

    /** Reasoning text of the {@code reasoning_details} entry {@code k}. */
    void reasoning(Consumer<ByteBuf> out, int k, String text) throws IOException {
        if (excludeReasoning || text == null || text.isEmpty()) {
            return;
        }
        chunk(out, g -> {
            g.writeStringField("reasoning", text);
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningText(g, text, null, k);
            g.writeEndArray();
        }, null);
    }

    /** The signature of the {@code reasoning_details} entry {@code k}. */
    void signature(Consumer<ByteBuf> out, int k, String signature) throws IOException {
        if (excludeReasoning || signature == null || signature.isEmpty()) {
            return;
        }
        chunk(out, g -> {
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningText(g, null, signature, k);
            g.writeEndArray();
        }, null);
    }

    /** Reasoning the caller may only hand back ({@code reasoning.encrypted}) as the entry {@code k}. */
    void encrypted(Consumer<ByteBuf> out, int k, String data) throws IOException {
        if (excludeReasoning) {
            return;
        }
        chunk(out, g -> {
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningEncrypted(g, data, k);
            g.writeEndArray();
        }, null);
    }

    /** The first chunk of tool call {@code k}: its id, name and the arguments known so far. */
    void toolCall(Consumer<ByteBuf> out, int k, String callId, String name, String arguments) throws IOException {
        chunk(out, g -> {
            g.writeArrayFieldStart("tool_calls");
            g.writeStartObject();
            g.writeNumberField("index", k);
            JsonOut.toolCallFields(g, callId, name, arguments);
            g.writeEndObject();
            g.writeEndArray();
        }, null);
    }

    /** More of tool call {@code k}'s arguments. */
    void toolArguments(Consumer<ByteBuf> out, int k, String fragment) throws IOException {
        chunk(out, g -> {
            g.writeArrayFieldStart("tool_calls");
            g.writeStartObject();
            g.writeNumberField("index", k);
            g.writeObjectFieldStart("function");
            g.writeStringField("arguments", fragment);
            g.writeEndObject();
            g.writeEndObject();
            g.writeEndArray();
        }, null);
    }

    /** The finishing chunk: {@code delta {}} and the finish reason (8.7). */
    void finish(Consumer<ByteBuf> out, String finishReason) throws IOException {
        chunk(out, NO_DELTA, finishReason);
    }

    /** 3.11 step 5: {@code choices: []} and the whole request's usage (8.8); only when {@link #includesUsage()}. */
    void usage(Consumer<ByteBuf> out, Usage usage, boolean reasoningReported) throws IOException {
        out.accept(JsonOut.write(alloc, 320, JSON, DATA, g -> {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeEndArray();
            g.writeFieldName("usage");
            UsageJson.writeChat(g, usage, reasoningReported);
            g.writeEndObject();
        }, EVENT_END));
    }

    /** {@code data: [DONE]}: the stream is over. */
    void done(Consumer<ByteBuf> out) {
        finished = true;
        emit(out, DONE);
    }

    /** GD-11: an upstream keep-alive stays one, as a comment the SDKs skip. */
    void keepAlive(Consumer<ByteBuf> out) {
        emit(out, KEEP_ALIVE);
    }

    /** GD-10: one error event, then nothing (no [DONE]). */
    void fail(Consumer<ByteBuf> out, GatewayError error) {
        finished = true;
        failed = true;
        out.accept(ErrorBodies.streamEvent(alloc, ApiStyle.OPENAI, error));
    }

    private void emit(Consumer<ByteBuf> out, byte[] bytes) {
        out.accept(alloc.buffer(bytes.length).writeBytes(bytes));
    }

    /** One {@code chat.completion.chunk} with the given delta fields and finish reason (null: not finished). */
    private void chunk(Consumer<ByteBuf> out, JsonOut.Fields delta, String finishReason) throws IOException {
        out.accept(JsonOut.write(alloc, 256, JSON, DATA, g -> {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeStartObject();
            g.writeNumberField("index", 0);
            g.writeObjectFieldStart("delta");
            delta.write(g);
            g.writeEndObject();
            g.writeNullField("logprobs");
            if (finishReason == null) {
                g.writeNullField("finish_reason");
            } else {
                g.writeStringField("finish_reason", finishReason);
            }
            g.writeEndObject();
            g.writeEndArray();
            if (includeUsage) {
                g.writeNullField("usage");
            }
            g.writeEndObject();
        }, EVENT_END));
    }

    private void writeHead(JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", id);
        g.writeStringField("object", "chat.completion.chunk");
        g.writeNumberField("created", created);
        g.writeStringField("model", model != null ? model : fallbackModel);
    }
}
