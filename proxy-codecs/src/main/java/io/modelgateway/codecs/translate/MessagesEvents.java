package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The caller's side of an Anthropic messages stream translated from another style: the events that
 * {@link ChatStreamToMessages} and {@link GeminiStreamToMessages} write as they read their upstream, each
 * {@code event: <type>\ndata: <compact JSON>\n\n}. It keeps the one content block that is open and the index of the
 * next, so that a block is started by what comes and stopped by the next block or the end (5.10):
 * {@code message_start}, per block {@code content_block_start}, its deltas, {@code content_block_stop}; then
 * {@code message_delta} and {@code message_stop} — or one {@code event: error}, after which nothing follows.
 *
 * <p>Ownership: every buffer handed to {@code out} is new and owned by the consumer. One per stream, confined to the
 * exchange's event loop. A string the generator cannot write (a lone surrogate) throws {@link UncheckedIOException},
 * which the translator's {@code onEvent} turns into the error event.
 */
final class MessagesEvents {
    private static final byte[] PING = "event: ping\ndata: {\"type\":\"ping\"}\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MESSAGE_STOP =
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".getBytes(StandardCharsets.US_ASCII);

    /** A content block as it is open. */
    enum Block { NONE, TEXT, THINKING, TOOL }

    /** The event types written here, each with its {@code event:} line made once rather than per event. */
    private enum Type {
        MESSAGE_START("message_start"),
        BLOCK_START("content_block_start"),
        BLOCK_DELTA("content_block_delta"),
        BLOCK_STOP("content_block_stop"),
        MESSAGE_DELTA("message_delta");

        final String name;
        final String prefix;

        Type(String name) {
            this.name = name;
            this.prefix = JsonOut.eventPrefix(name);
        }
    }

    private final ByteBufAllocator alloc;
    private final JsonFactory json;
    private Block open = Block.NONE;
    /** Index of the open block, or of the next one when none is open. */
    private int index;
    private boolean finished;
    private boolean failed;

    /** @param json the translator's own factory: its write settings decide the exact bytes */
    MessagesEvents(ByteBufAllocator alloc, JsonFactory json) {
        this.alloc = alloc;
        this.json = json;
    }

    /** Whether {@code message_stop} or the error event is out. */
    boolean finished() {
        return finished;
    }

    boolean failed() {
        return failed;
    }

    boolean isOpen(Block block) {
        return open == block;
    }

    /** {@code message_start} with a new message id; {@code usage} is what is known of the input so far. */
    void messageStart(Consumer<ByteBuf> out, String model, Usage usage) {
        String id = Ids.withPrefix("msg_");
        emit(out, Type.MESSAGE_START, g -> {
            g.writeObjectFieldStart("message");
            g.writeStringField("id", id);
            g.writeStringField("type", "message");
            g.writeStringField("role", "assistant");
            g.writeStringField("model", model);
            g.writeArrayFieldStart("content");
            g.writeEndArray();
            g.writeNullField("stop_reason");
            g.writeNullField("stop_sequence");
            g.writeFieldName("usage");
            UsageJson.writeMessages(g, usage, false);
            g.writeEndObject();
        });
    }

    /** A fragment of the answer's text, in the open text block (one is started after any other). */
    void text(Consumer<ByteBuf> out, String text) {
        if (open != Block.TEXT) {
            close(out);
            open = Block.TEXT;
            blockStart(out, g -> JsonOut.textBlock(g, ""));
        }
        blockDelta(out, "text_delta", "text", text);
    }

    /** A new thinking block (after whatever was open), for the {@link #thinking} and {@link #signature} to come. */
    void startThinking(Consumer<ByteBuf> out) {
        close(out);
        open = Block.THINKING;
        blockStart(out, g -> JsonOut.thinkingBlock(g, "", ""));
    }

    /** Thinking text of the open thinking block. */
    void thinking(Consumer<ByteBuf> out, String text) {
        blockDelta(out, "thinking_delta", "thinking", text);
    }

    /** The signature of the open thinking block. */
    void signature(Consumer<ByteBuf> out, String signature) {
        blockDelta(out, "signature_delta", "signature", signature);
    }

    /** A redacted_thinking block: complete in its start event, so started and stopped at once. */
    void redacted(Consumer<ByteBuf> out, String data) {
        close(out);
        blockStart(out, g -> JsonOut.redactedThinkingBlock(g, data));
        stop(out);
    }

    /** A new tool_use block with an empty input, for the {@link #inputJson} to come. */
    void toolUse(Consumer<ByteBuf> out, String id, String name) {
        close(out);
        open = Block.TOOL;
        blockStart(out, g -> {
            g.writeStartObject();
            g.writeStringField("type", "tool_use");
            g.writeStringField("id", id);
            g.writeStringField("name", name);
            g.writeObjectFieldStart("input");
            g.writeEndObject();
            g.writeEndObject();
        });
    }

    /** A fragment of the open tool_use block's input. */
    void inputJson(Consumer<ByteBuf> out, String partialJson) {
        blockDelta(out, "input_json_delta", "partial_json", partialJson);
    }

    /** {@code content_block_stop} of the open block, if one is. */
    void close(Consumer<ByteBuf> out) {
        if (open != Block.NONE) {
            open = Block.NONE;
            stop(out);
        }
    }

    /** GD-11: a keep-alive in the messages form (a ping between events, never before message_start). */
    void ping(Consumer<ByteBuf> out) {
        out.accept(alloc.buffer(PING.length).writeBytes(PING));
    }

    /**
     * The end: the open block stopped, {@code message_delta} with the stop reason and the final usage, then
     * {@code message_stop}; {@link #finished()} turns true with {@code message_stop} itself.
     */
    void finish(Consumer<ByteBuf> out, String stopReason, Usage usage, boolean reasoningReported) {
        close(out);
        emit(out, Type.MESSAGE_DELTA, g -> {
            g.writeObjectFieldStart("delta");
            g.writeStringField("stop_reason", stopReason);
            g.writeNullField("stop_sequence");
            g.writeEndObject();
            g.writeFieldName("usage");
            UsageJson.writeMessages(g, usage, reasoningReported);
        });
        finished = true;
        out.accept(alloc.buffer(MESSAGE_STOP.length).writeBytes(MESSAGE_STOP));
    }

    /** One error event; the stream is over (no message_stop). */
    void fail(Consumer<ByteBuf> out, GatewayError error) {
        finished = true;
        failed = true;
        out.accept(ErrorBodies.streamEvent(alloc, ApiStyle.ANTHROPIC, error));
    }

    private void stop(Consumer<ByteBuf> out) {
        int i = index++;
        emit(out, Type.BLOCK_STOP, g -> g.writeNumberField("index", i));
    }

    /** A content_block_start event for the block at {@link #index}; {@code block} writes the block object. */
    private void blockStart(Consumer<ByteBuf> out, JsonOut.Fields block) {
        int i = index;
        emit(out, Type.BLOCK_START, g -> {
            g.writeNumberField("index", i);
            g.writeFieldName("content_block");
            block.write(g);
        });
    }

    /** A content_block_delta event of the open block: {@code {"type":type, field:value}}. */
    private void blockDelta(Consumer<ByteBuf> out, String type, String field, String value) {
        int i = index;
        emit(out, Type.BLOCK_DELTA, g -> {
            g.writeNumberField("index", i);
            g.writeObjectFieldStart("delta");
            g.writeStringField("type", type);
            g.writeStringField(field, value);
            g.writeEndObject();
        });
    }

    /** {@code event: <type>\ndata: {"type":"<type>", …}\n\n}. */
    private void emit(Consumer<ByteBuf> out, Type type, JsonOut.Fields fields) {
        try {
            out.accept(JsonOut.write(alloc, 128, json, type.prefix, g -> {
                g.writeStartObject();
                g.writeStringField("type", type.name);
                fields.write(g);
                g.writeEndObject();
            }, "\n\n"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
