package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
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
 * <p>Written by {@link MessagesEvents}, as for {@link ChatStreamToMessages}.
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer. One
 * per stream, confined to the exchange's event loop; {@link #onEvent} never throws.
 */
final class GeminiStreamToMessages implements StreamTranslator {
    private final MessagesEvents events;
    private final String fallbackModel;
    private final GeminiStream stream = new GeminiStream();

    private boolean started;

    GeminiStreamToMessages(ByteBufAllocator alloc, String fallbackModel) {
        this.events = new MessagesEvents(alloc, GeminiResponseToChat.JSON);
        this.fallbackModel = fallbackModel == null ? "" : fallbackModel;
    }

    @Override
    public void onEvent(ByteBuf event, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        try {
            if (stream.read(event)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            if (!events.finished()) {
                events.fail(out, MessagesStreamToChat.UNREADABLE);
            }
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        GatewayError early = stream.end(clean);
        if (early != null) {
            events.fail(out, early);
            return;
        }
        events.finish(out, stream.stopReason(), stream.usage(), stream.thoughtsReported());
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!events.finished()) {
            events.fail(out, error);
        }
    }

    @Override
    public boolean finished() {
        return events.finished();
    }

    @Override
    public boolean failed() {
        return events.failed();
    }

    @Override
    public Usage usage() {
        return stream.usage();
    }

    private void handle(Consumer<ByteBuf> out) {
        GeminiChunk c = stream.event();
        GatewayError failure = stream.failure();
        if (failure != null) {
            events.fail(out, failure);
            return;
        }
        if (!started) {
            started = true;
            // The input counts, when this first event has them; the output ones come with message_delta.
            Usage u = stream.usage();
            events.messageStart(out, c.modelVersion != null && !c.modelVersion.isEmpty() ? c.modelVersion
                    : fallbackModel, new Usage(u.input(), 0, u.cacheCreation(), u.cacheRead(), 0));
        }
        if (stream.answered()) {
            return;
        }
        for (int i = 0; i < c.partCount; i++) {
            part(out, c.part(i));
        }
        if (c.finishReason != null) {
            events.close(out);
            GatewayError blocked = stream.finish();
            if (blocked != null) {
                events.fail(out, blocked);
            }
        }
    }

    private void part(Consumer<ByteBuf> out, GeminiChunk.Part p) {
        if (p.kind == GeminiChunk.Kind.THOUGHT) {
            if (!events.isOpen(MessagesEvents.Block.THINKING)) {
                events.startThinking(out);
            }
            if (p.text != null && !p.text.isEmpty()) {
                events.thinking(out, p.text);
            }
            if (p.signature != null) {
                events.signature(out, p.signature);
                events.close(out);
            }
            return;
        }
        if (p.signature != null) {
            if (!events.isOpen(MessagesEvents.Block.THINKING)) {
                events.startThinking(out);
            }
            events.signature(out, p.signature);
            events.close(out);
        } else if (events.isOpen(MessagesEvents.Block.THINKING)) {
            events.close(out);
        }
        switch (p.kind) {
            case TEXT -> {
                if (p.text != null && !p.text.isEmpty()) {
                    events.text(out, p.text);
                }
            }
            case CALL -> {
                // Gemini sends a call whole: its block opens, carries all of its input and closes at once.
                events.toolUse(out, GeminiResponseToMessages.toolUseId(p.id), p.name != null ? p.name : "");
                events.inputJson(out, p.args != null ? p.args : "{}");
                events.close(out);
            }
            default -> {
                // parts with no messages form (code execution, inline data) are dropped
            }
        }
    }
}
