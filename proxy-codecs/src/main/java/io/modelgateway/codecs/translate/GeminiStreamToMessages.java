package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * A Gemini {@code streamGenerateContent?alt=sse} stream → Anthropic messages events, one upstream event at a time.
 * The first event opens the message ({@code message_start}, with the prompt's token counts when the provider gave
 * them already); each part then continues the open content block or opens the next one: thought text streams as
 * {@code thinking_delta}, a thought signature as {@code signature_delta} (the rule of {@link GeminiAnswer}), text as
 * {@code text_delta}, and a function call (Gemini sends it complete) as a {@code tool_use} block with its whole
 * input in one {@code input_json_delta}. The finish reason closes the open block; {@code message_delta} (stop reason
 * and the final usage) and {@code message_stop} follow at the clean end of the provider's stream, since Gemini's
 * last counts may come after its finish reason. An error the provider writes into the stream, a blocked prompt or
 * answer, an unreadable event or an end without a finish reason become one {@code event: error} (never followed by
 * {@code message_stop}).
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer. One
 * per stream, confined to the exchange's event loop; {@link #onEvent} never throws.
 */
final class GeminiStreamToMessages implements StreamTranslator {
    private static final JsonFactory JSON = GeminiResponseToChat.JSON;
    private static final byte[] MESSAGE_STOP =
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".getBytes(StandardCharsets.US_ASCII);

    private enum Open { NONE, TEXT, THINKING }

    private final ByteBufAllocator alloc;
    private final String fallbackModel;
    private final GeminiChunk chunk = new GeminiChunk();

    private boolean started;
    private boolean finished;
    private boolean failed;
    private Open open = Open.NONE;
    /** Index of the open block, or of the next one when none is open. */
    private int index;
    private boolean content;
    private boolean calls;
    private String stopReason;
    private Usage usage = Usage.ZERO;
    private boolean thoughtsReported;

    GeminiStreamToMessages(ByteBufAllocator alloc, String fallbackModel) {
        this.alloc = alloc;
        this.fallbackModel = fallbackModel == null ? "" : fallbackModel;
    }

    @Override
    public void onEvent(ByteBuf event, Consumer<ByteBuf> out) {
        if (finished) {
            return;
        }
        try {
            if (chunk.readEvent(event)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            if (!finished) {
                fail(out, MessagesStreamToChat.UNREADABLE);
            }
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (finished) {
            return;
        }
        if (!clean || stopReason == null) {
            fail(out, clean ? MessagesStreamToChat.ENDED_EARLY : MessagesStreamToChat.CONNECTION_LOST);
            return;
        }
        String reason = stopReason;
        Usage u = usage;
        emit(out, "message_delta", g -> {
            g.writeObjectFieldStart("delta");
            g.writeStringField("stop_reason", reason);
            g.writeNullField("stop_sequence");
            g.writeEndObject();
            g.writeFieldName("usage");
            UsageJson.writeMessages(g, u, thoughtsReported);
        });
        finished = true; // set with the terminal event itself: finished() says the caller's stream is over
        out.accept(alloc.buffer(MESSAGE_STOP.length).writeBytes(MESSAGE_STOP));
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!finished) {
            fail(out, error);
        }
    }

    @Override
    public boolean finished() {
        return finished;
    }

    @Override
    public boolean failed() {
        return failed;
    }

    @Override
    public Usage usage() {
        return usage;
    }

    private void handle(Consumer<ByteBuf> out) {
        GeminiChunk c = chunk;
        if (c.error) {
            fail(out, c.error());
            return;
        }
        if (c.blockReason != null) {
            fail(out, c.blocked());
            return;
        }
        if (c.hasUsage) {
            usage = c.usage();
            thoughtsReported |= c.thoughtsReported();
        }
        if (!started) {
            started = true;
            messageStart(out, c.modelVersion != null && !c.modelVersion.isEmpty() ? c.modelVersion : fallbackModel);
        }
        if (stopReason != null) {
            return; // after the finish reason only the usage still counts
        }
        for (int i = 0; i < c.partCount; i++) {
            part(out, c.part(i));
        }
        if (c.finishReason != null) {
            closeOpen(out);
            if (!content && GeminiChunk.filtered(c.finishReason)) {
                fail(out, c.blocked());
                return;
            }
            stopReason = GeminiChunk.stopReason(c.finishReason, calls);
        }
    }

    private void part(Consumer<ByteBuf> out, GeminiChunk.Part p) {
        if (p.kind == GeminiChunk.Kind.THOUGHT) {
            content = true;
            if (open != Open.THINKING) {
                closeOpen(out);
                open = Open.THINKING;
                blockStart(out, g -> JsonOut.thinkingBlock(g, "", ""));
            }
            if (p.text != null && !p.text.isEmpty()) {
                blockDelta(out, "thinking_delta", "thinking", p.text);
            }
            if (p.signature != null) {
                blockDelta(out, "signature_delta", "signature", p.signature);
                closeOpen(out);
            }
            return;
        }
        if (p.signature != null) {
            if (open != Open.THINKING) {
                closeOpen(out);
                open = Open.THINKING;
                blockStart(out, g -> JsonOut.thinkingBlock(g, "", ""));
            }
            blockDelta(out, "signature_delta", "signature", p.signature);
            closeOpen(out);
        } else if (open == Open.THINKING) {
            closeOpen(out);
        }
        switch (p.kind) {
            case TEXT -> {
                if (p.text != null && !p.text.isEmpty()) {
                    content = true;
                    if (open != Open.TEXT) {
                        closeOpen(out);
                        open = Open.TEXT;
                        blockStart(out, g -> JsonOut.textBlock(g, ""));
                    }
                    blockDelta(out, "text_delta", "text", p.text);
                }
            }
            case CALL -> {
                content = true;
                calls = true;
                closeOpen(out);
                String id = GeminiResponseToMessages.toolUseId(p.id);
                String name = p.name != null ? p.name : "";
                blockStart(out, g -> {
                    g.writeStartObject();
                    g.writeStringField("type", "tool_use");
                    g.writeStringField("id", id);
                    g.writeStringField("name", name);
                    g.writeObjectFieldStart("input");
                    g.writeEndObject();
                    g.writeEndObject();
                });
                blockDelta(out, "input_json_delta", "partial_json", p.args != null ? p.args : "{}");
                int i = index++;
                emit(out, "content_block_stop", g -> g.writeNumberField("index", i));
            }
            default -> {
                // parts with no messages form (code execution, inline data) are dropped
            }
        }
    }

    private void closeOpen(Consumer<ByteBuf> out) {
        if (open == Open.NONE) {
            return;
        }
        int i = index++;
        open = Open.NONE;
        emit(out, "content_block_stop", g -> g.writeNumberField("index", i));
    }

    private void messageStart(Consumer<ByteBuf> out, String model) {
        String id = Ids.withPrefix("msg_");
        // The input counts, when this first event has them; the output ones come with message_delta.
        Usage u = new Usage(usage.input(), 0, usage.cacheCreation(), usage.cacheRead(), 0);
        emit(out, "message_start", g -> {
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
            UsageJson.writeMessages(g, u, false);
            g.writeEndObject();
        });
    }

    /** One error event; the stream is over (no message_stop). */
    private void fail(Consumer<ByteBuf> out, GatewayError error) {
        finished = true;
        failed = true;
        out.accept(ErrorBodies.streamEvent(alloc, ApiStyle.ANTHROPIC, error));
    }

    @FunctionalInterface
    private interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private void blockStart(Consumer<ByteBuf> out, Body block) {
        int i = index;
        emit(out, "content_block_start", g -> {
            g.writeNumberField("index", i);
            g.writeFieldName("content_block");
            block.write(g);
        });
    }

    private void blockDelta(Consumer<ByteBuf> out, String type, String field, String value) {
        int i = index;
        emit(out, "content_block_delta", g -> {
            g.writeNumberField("index", i);
            g.writeObjectFieldStart("delta");
            g.writeStringField("type", type);
            g.writeStringField(field, value);
            g.writeEndObject();
        });
    }

    /** {@code event: <type>\ndata: {"type":"<type>", …}\n\n}. */
    private void emit(Consumer<ByteBuf> out, String type, Body body) {
        try {
            out.accept(JsonOut.write(alloc, 128, JSON, "event: " + type + "\ndata: ", g -> {
                g.writeStartObject();
                g.writeStringField("type", type);
                body.write(g);
                g.writeEndObject();
            }, "\n\n"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
