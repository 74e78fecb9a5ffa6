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
 * A Gemini {@code streamGenerateContent?alt=sse} stream → OpenAI chat completion chunks, one upstream event at a
 * time: each event's parts become chunks as soon as it is read (time to first token is the provider's). Sits
 * behind the {@code SseEventScanner} of a translated exchange; one per stream, confined to its event loop.
 *
 * <p>Output, in the shapes {@link MessagesStreamToChat} uses: the role chunk first; text as {@code content};
 * thought text as {@code reasoning} + {@code reasoning_details} and thought signatures as {@code reasoning_details}
 * (the signature rule of {@link GeminiAnswer}); a function call as one {@code tool_calls} chunk with its whole
 * arguments (Gemini sends a call complete); the finishing chunk when the provider gives its finish reason. The
 * usage chunk (with {@code include_usage}) and {@code data: [DONE]} follow at the clean end of the provider's
 * stream, since Gemini's last counts may come after the finish reason. An {@code error} the provider writes into
 * the stream, a prompt its filters refused, an answer they stopped before any of it was made, an unreadable event
 * or an end without a finish reason end the stream with one {@code data: {"error":…}} event (GD-10).
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer.
 * {@link #onEvent} never throws for anything the upstream sends.
 */
final class GeminiStreamToChat implements StreamTranslator {
    private static final JsonFactory JSON = GeminiResponseToChat.JSON;
    private static final String DATA = "data: ";
    private static final String EVENT_END = "\n\n";
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

    private final ByteBufAllocator alloc;
    private final String id;
    private final long created;
    private final String fallbackModel;
    private final boolean includeUsage;
    private final boolean excludeReasoning;
    private final GeminiChunk chunk = new GeminiChunk();

    private String model;
    private boolean started;
    private boolean finished;
    private boolean failed;
    /** The provider's finish reason in Anthropic's terms once it came; the stream then only waits for its end. */
    private String stopReason;
    private boolean content;
    private boolean calls;
    private int toolOrdinal;
    private int reasoningOrdinal;
    /** The {@code reasoning_details} index of the thinking block still open, -1 when none is. */
    private int openThinking = -1;
    private Usage usage = Usage.ZERO;
    private boolean thoughtsReported;

    GeminiStreamToChat(ByteBufAllocator alloc, String id, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning) {
        this.alloc = alloc;
        this.id = id;
        this.created = created;
        this.fallbackModel = fallbackModel;
        this.includeUsage = includeUsage;
        this.excludeReasoning = excludeReasoning;
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
        try {
            if (includeUsage) {
                usageChunk(out);
            }
        } catch (IOException e) {
            fail(out, MessagesStreamToChat.UNREADABLE);
            return;
        }
        finished = true;
        out.accept(alloc.buffer(DONE.length).writeBytes(DONE));
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

    private void handle(Consumer<ByteBuf> out) throws IOException {
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
        if (model == null && c.modelVersion != null && !c.modelVersion.isEmpty()) {
            model = c.modelVersion;
        }
        if (stopReason != null) {
            return; // after the finish reason only the usage still counts
        }
        for (int i = 0; i < c.partCount; i++) {
            part(out, c.part(i));
        }
        if (c.finishReason != null) {
            openThinking = -1;
            if (!content && GeminiChunk.filtered(c.finishReason)) {
                fail(out, c.blocked());
                return;
            }
            start(out);
            stopReason = GeminiChunk.stopReason(c.finishReason, calls);
            chunk(out, g -> {
            }, StopReasons.toFinishReason(stopReason, false));
        }
    }

    private void part(Consumer<ByteBuf> out, GeminiChunk.Part p) throws IOException {
        if (p.kind == GeminiChunk.Kind.THOUGHT) {
            start(out);
            content = true;
            if (openThinking < 0) {
                openThinking = reasoningOrdinal++;
            }
            int k = openThinking;
            reasoning(out, k, p.text);
            if (p.signature != null) {
                signature(out, k, p.signature);
                openThinking = -1;
            }
            return;
        }
        if (p.signature != null) {
            start(out);
            int k = openThinking >= 0 ? openThinking : reasoningOrdinal++;
            signature(out, k, p.signature);
        }
        openThinking = -1;
        switch (p.kind) {
            case TEXT -> {
                if (p.text != null && !p.text.isEmpty()) {
                    start(out);
                    content = true;
                    String text = p.text;
                    chunk(out, g -> g.writeStringField("content", text), null);
                }
            }
            case CALL -> {
                start(out);
                content = true;
                calls = true;
                int k = toolOrdinal++;
                String callId = p.id != null && !p.id.isEmpty() ? p.id : Ids.withPrefix("call_");
                String name = p.name != null ? p.name : "";
                String args = p.args != null ? p.args : "{}";
                chunk(out, g -> {
                    g.writeArrayFieldStart("tool_calls");
                    g.writeStartObject();
                    g.writeNumberField("index", k);
                    JsonOut.toolCallFields(g, callId, name, args);
                    g.writeEndObject();
                    g.writeEndArray();
                }, null);
            }
            default -> {
                // parts with no chat form (code execution, inline data) are dropped
            }
        }
    }

    /** The role chunk, once, before anything else the caller sees. */
    private void start(Consumer<ByteBuf> out) throws IOException {
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

    private void reasoning(Consumer<ByteBuf> out, int k, String text) throws IOException {
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

    private void signature(Consumer<ByteBuf> out, int k, String signature) throws IOException {
        if (excludeReasoning || signature.isEmpty()) {
            return;
        }
        chunk(out, g -> {
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningText(g, null, signature, k);
            g.writeEndArray();
        }, null);
    }

    /** GD-10: one error event, then nothing (no [DONE]). */
    private void fail(Consumer<ByteBuf> out, GatewayError error) {
        finished = true;
        failed = true;
        out.accept(ErrorBodies.streamEvent(alloc, ApiStyle.OPENAI, error));
    }

    @FunctionalInterface
    private interface DeltaWriter {
        void write(JsonGenerator g) throws IOException;
    }

    /** One {@code chat.completion.chunk} with the given delta fields and finish reason (null: not finished). */
    private void chunk(Consumer<ByteBuf> out, DeltaWriter delta, String finishReason) throws IOException {
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

    /** {@code choices: []} and the whole request's usage (3.11). */
    private void usageChunk(Consumer<ByteBuf> out) throws IOException {
        out.accept(JsonOut.write(alloc, 320, JSON, DATA, g -> {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeEndArray();
            g.writeFieldName("usage");
            UsageJson.writeChat(g, usage, thoughtsReported);
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
