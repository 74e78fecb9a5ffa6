package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import java.io.IOException;

/**
 * The provider's side of a Gemini {@code streamGenerateContent?alt=sse} stream, as both Gemini stream translators
 * ({@link GeminiStreamToChat}, {@link GeminiStreamToMessages}) read it: each event into the reused
 * {@link GeminiChunk}, and what outlives one event — the usage so far, whether the answer had any content or function
 * call, the stop reason once the finish reason came — with Gemini's rules of what ends a stream: an error the
 * provider writes into it, a prompt its filters refused, an answer they stopped before any of it was made, and an
 * end without a finish reason. Gemini may send its last counts after the finish reason, so an event after it still
 * counts for the usage and for nothing else. One per stream, confined to its event loop.
 */
final class GeminiStream {
    private final GeminiChunk chunk = new GeminiChunk();
    private Usage usage = Usage.ZERO;
    private boolean thoughtsReported;
    private boolean content;
    private boolean calls;
    /** The finish reason in Anthropic's terms once it came. */
    private String stopReason;

    /** Reads one event (borrowed); false when it carries nothing to read; throws when it is unreadable. */
    boolean read(ByteBuf event) throws IOException {
        return chunk.readEvent(event);
    }

    /** The event last read. */
    GeminiChunk event() {
        return chunk;
    }

    /**
     * The error the event last read ends the stream with (the provider's own, or its filters' refusal of the
     * prompt); else null, with its usage counted and, until the finish reason, what its parts hold.
     */
    GatewayError failure() {
        GeminiChunk c = chunk;
        if (c.error) {
            return c.error();
        }
        if (c.blockReason != null) {
            return c.blocked();
        }
        if (c.hasUsage) {
            usage = c.usage();
            thoughtsReported |= c.thoughtsReported();
        }
        if (stopReason == null) {
            for (int i = 0; i < c.partCount; i++) {
                GeminiChunk.Part p = c.part(i);
                switch (p.kind) {
                    case THOUGHT -> content = true;
                    case TEXT -> content |= p.text != null && !p.text.isEmpty();
                    case CALL -> {
                        content = true;
                        calls = true;
                    }
                    default -> {
                        // no caller form: neither content nor a call
                    }
                }
            }
        }
        return null;
    }

    /** Whether the finish reason came: the answer is complete and only its usage may still change. */
    boolean answered() {
        return stopReason != null;
    }

    /**
     * The finish reason of the event last read: the error when the filters stopped an answer before any of it was
     * made, else null and the stop reason is kept.
     */
    GatewayError finish() {
        if (!content && GeminiChunk.filtered(chunk.finishReason)) {
            return chunk.blocked();
        }
        stopReason = GeminiChunk.stopReason(chunk.finishReason, calls);
        return null;
    }

    /** The error of a stream that ends here ({@code clean}: its body ended normally), null when it may end. */
    GatewayError end(boolean clean) {
        if (!clean) {
            return MessagesStreamToChat.CONNECTION_LOST;
        }
        return stopReason == null ? MessagesStreamToChat.ENDED_EARLY : null;
    }

    /** Anthropic's stop reason ({@link GeminiChunk#stopReason}) once {@link #answered()}. */
    String stopReason() {
        return stopReason;
    }

    Usage usage() {
        return usage;
    }

    /** Whether the provider reported its thoughts' token count (the caller's usage then details it). */
    boolean thoughtsReported() {
        return thoughtsReported;
    }
}
