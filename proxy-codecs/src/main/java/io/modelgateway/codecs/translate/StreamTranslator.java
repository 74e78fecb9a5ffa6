package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import java.util.function.Consumer;

/**
 * Translates one upstream SSE stream into the caller's style, event by event, with a small state machine:
 * nothing is buffered beyond what one event needs, so time to first token is unchanged. One instance per
 * stream, confined to the exchange's event loop.
 *
 * <p>Ownership: input events are borrowed (the caller releases them); every buffer handed to {@code out} is
 * a new, complete SSE event of the caller's style, owned by the consumer.
 */
public interface StreamTranslator {
    /** One complete upstream event (as cut by {@code SseEventScanner}; comments and blank events included). */
    void onEvent(ByteBuf event, Consumer<ByteBuf> out);

    /**
     * The upstream stream ended ({@code clean}: the HTTP body ended normally; false: the connection broke).
     * Emits whatever the caller must still see: nothing after a terminal event, else the style's error event.
     */
    void onEnd(boolean clean, Consumer<ByteBuf> out);

    /**
     * The gateway ends the stream for its own reason ({@code error}: an upstream timeout, a shutdown): the caller
     * gets that error as the style's error event (GD-10), unless the stream already finished.
     */
    void onFailure(GatewayError error, Consumer<ByteBuf> out);

    /** Whether the caller's terminal event ({@code [DONE]} / {@code message_stop}) or an error event was emitted. */
    boolean finished();

    /**
     * Whether the stream ended with an error event: a malformed upstream event, an error the upstream sent, an
     * early or unfinished end, or {@link #onFailure}. The answer is then a failure, whatever the HTTP status was.
     */
    boolean failed();

    /** Token counts seen so far (final once finished). */
    Usage usage();

    /**
     * Whether the caller's stream reports the input count before the upstream does, so the translator needs the
     * gateway's own count ({@link #inputEstimate}) before its first event: an Anthropic-style stream translated from
     * an OpenAI-style one, whose {@code message_start} carries the input count (8.9 step 1).
     */
    default boolean wantsInputEstimate() {
        return false;
    }

    /**
     * The gateway's best count of the input tokens of the upstream request, given before the first event when
     * {@link #wantsInputEstimate()}; the upstream's exact counts replace it when they come.
     */
    default void inputEstimate(long tokens) {
    }
}
