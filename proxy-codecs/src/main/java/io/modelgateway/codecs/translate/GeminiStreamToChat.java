package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * A Gemini {@code streamGenerateContent?alt=sse} stream → OpenAI chat completion chunks, one upstream event at a
 * time: each event's parts become chunks as soon as it is read (time to first token is the provider's). Sits
 * behind the {@code SseEventScanner} of a translated exchange; one per stream, confined to its event loop.
 *
 * <p>Output, written by {@link ChatChunks} as for {@link MessagesStreamToChat}: the role chunk first; text as
 * {@code content}; thought text as {@code reasoning} + {@code reasoning_details} and thought signatures as
 * {@code reasoning_details} (the signature rule of {@link GeminiAnswer}); a function call as one {@code tool_calls}
 * chunk with its whole arguments (Gemini sends a call complete); the finishing chunk when the provider gives its
 * finish reason. The usage chunk (with {@code include_usage}) and {@code data: [DONE]} follow at the clean end of
 * the provider's stream, since Gemini's last counts may come after the finish reason. An {@code error} the provider
 * writes into the stream, a prompt its filters refused, an answer they stopped before any of it was made, an
 * unreadable event or an end without a finish reason end the stream with one {@code data: {"error":…}} event
 * (GD-10).
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer.
 * {@link #onEvent} never throws for anything the upstream sends.
 */
final class GeminiStreamToChat implements StreamTranslator {
    private final ChatChunks chunks;
    private final GeminiStream stream = new GeminiStream();

    private int toolOrdinal;
    private int reasoningOrdinal;
    /** The {@code reasoning_details} index of the thinking block still open, -1 when none is. */
    private int openThinking = -1;

    GeminiStreamToChat(ByteBufAllocator alloc, String id, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning) {
        this.chunks = new ChatChunks(alloc, id, created, fallbackModel, includeUsage, excludeReasoning);
    }

    @Override
    public void onEvent(ByteBuf event, Consumer<ByteBuf> out) {
        if (chunks.finished()) {
            return;
        }
        try {
            if (stream.read(event)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            if (!chunks.finished()) {
                chunks.fail(out, MessagesStreamToChat.UNREADABLE);
            }
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (chunks.finished()) {
            return;
        }
        GatewayError early = stream.end(clean);
        if (early != null) {
            chunks.fail(out, early);
            return;
        }
        try {
            if (chunks.includesUsage()) {
                chunks.usage(out, stream.usage(), stream.thoughtsReported());
            }
        } catch (IOException e) {
            chunks.fail(out, MessagesStreamToChat.UNREADABLE);
            return;
        }
        chunks.done(out);
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!chunks.finished()) {
            chunks.fail(out, error);
        }
    }

    @Override
    public boolean finished() {
        return chunks.finished();
    }

    @Override
    public boolean failed() {
        return chunks.failed();
    }

    @Override
    public Usage usage() {
        return stream.usage();
    }

    private void handle(Consumer<ByteBuf> out) throws IOException {
        GeminiChunk c = stream.event();
        GatewayError failure = stream.failure();
        if (failure != null) {
            chunks.fail(out, failure);
            return;
        }
        if (chunks.model() == null && c.modelVersion != null && !c.modelVersion.isEmpty()) {
            chunks.model(c.modelVersion);
        }
        if (stream.answered()) {
            return;
        }
        for (int i = 0; i < c.partCount; i++) {
            part(out, c.part(i));
        }
        if (c.finishReason != null) {
            openThinking = -1;
            GatewayError blocked = stream.finish();
            if (blocked != null) {
                chunks.fail(out, blocked);
                return;
            }
            chunks.start(out);
            chunks.finish(out, StopReasons.toFinishReason(stream.stopReason(), false));
        }
    }

    private void part(Consumer<ByteBuf> out, GeminiChunk.Part p) throws IOException {
        if (p.kind == GeminiChunk.Kind.THOUGHT) {
            chunks.start(out);
            if (openThinking < 0) {
                openThinking = reasoningOrdinal++;
            }
            int k = openThinking;
            chunks.reasoning(out, k, p.text);
            if (p.signature != null) {
                chunks.signature(out, k, p.signature);
                openThinking = -1;
            }
            return;
        }
        if (p.signature != null) {
            chunks.start(out);
            int k = openThinking >= 0 ? openThinking : reasoningOrdinal++;
            chunks.signature(out, k, p.signature);
        }
        openThinking = -1;
        switch (p.kind) {
            case TEXT -> {
                if (p.text != null && !p.text.isEmpty()) {
                    chunks.start(out);
                    chunks.content(out, p.text);
                }
            }
            case CALL -> {
                chunks.start(out);
                String callId = p.id != null && !p.id.isEmpty() ? p.id : Ids.withPrefix("call_");
                chunks.toolCall(out, toolOrdinal++, callId, p.name != null ? p.name : "",
                        p.args != null ? p.args : "{}");
            }
            default -> {
                // parts with no chat form (code execution, inline data) are dropped
            }
        }
    }
}
