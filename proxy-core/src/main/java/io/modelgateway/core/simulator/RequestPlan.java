package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.config.FaultSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The settings in force for one request (defaults overridden by {@code x-sim-*} headers), and the
 * last step every responder shares: applying pace and faults to a finished non-stream answer.
 *
 * <p>Faults on a non-stream answer: {@code error_after} turns it into a 500 with the style's error
 * body; {@code cut_after} sends a 200 head and then closes the connection with an empty, unfinished
 * body (events empty, {@link SimulatedResponse#cutAtEnd()}); {@code stall_after} sends a 200 head and
 * then nothing, the connection left open ({@link SimulatedResponse#stallAtEnd()}); {@code malformed}
 * sends the first half of the real body as a complete 200 answer. When several endings are set the
 * smaller count wins, {@code error_after} then {@code cut_after} on a tie — the same rule as in streams.
 *
 * <p>Token types ({@code x-sim-cached-tokens}, {@code x-sim-cache-write-tokens}, {@code x-sim-reasoning-tokens}):
 * the answer's usage reports that many input tokens read from and written to the prompt cache (on top of the
 * uncached input the simulator counts) and that many of its output tokens as reasoning, in the style's own fields
 * (contract 8.8); {@code reasoningTokens} is -1 when not asked for.
 */
record RequestPlan(long ttftMs, double tokensPerSecond, Integer outputTokens, FaultSpec fault, long cachedTokens,
        long cacheWriteTokens, long reasoningTokens) {

    RequestPlan(long ttftMs, double tokensPerSecond, Integer outputTokens, FaultSpec fault) {
        this(ttftMs, tokensPerSecond, outputTokens, fault, 0, 0, -1);
    }

    /** The reasoning part of {@code output} output tokens: as asked for (at most the output), else {@code dflt}. */
    long reasoningOf(long output, long dflt) {
        return reasoningTokens < 0 ? dflt : Math.min(reasoningTokens, output);
    }

    /** How an answer ends: as generated, with the style's error, cut (connection closed), or stalled (left open). */
    enum Ending { COMPLETE, ERROR, CUT, STALL }

    long perTokenNanos() {
        return tokensPerSecond == 0 || Double.isInfinite(tokensPerSecond) ? 0 : (long) (1e9 / tokensPerSecond);
    }

    /** The injected ending with the smallest count (error, then cut, then stall on a tie). */
    Ending ending() {
        Ending e = Ending.COMPLETE;
        long k = Long.MAX_VALUE;
        if (fault.errorAfter() >= 0) {
            e = Ending.ERROR;
            k = fault.errorAfter();
        }
        if (fault.cutAfter() >= 0 && fault.cutAfter() < k) {
            e = Ending.CUT;
            k = fault.cutAfter();
        }
        if (fault.stallAfter() >= 0 && fault.stallAfter() < k) {
            e = Ending.STALL;
        }
        return e;
    }

    /** The content-event count after which {@link #ending()} applies. */
    int endAfter() {
        return switch (ending()) {
            case ERROR -> fault.errorAfter();
            case CUT -> fault.cutAfter();
            case STALL -> fault.stallAfter();
            case COMPLETE -> -1;
        };
    }

    SimulatedResponse nonStream(ApiStyle style, Map<String, String> headers, byte[] body) {
        long delay = ttftMs + fault.delayMs();
        switch (ending()) {
            case ERROR -> {
                return SimErrors.response(style, 500, "The simulator injected an error (error_after="
                        + fault.errorAfter() + ")", null, null, delay, -1);
            }
            case CUT -> {
                return SimulatedResponse.stream(SimulatedResponse.JSON, headers, delay, List.of(), true);
            }
            case STALL -> {
                return SimulatedResponse.stalled(SimulatedResponse.JSON, headers, delay, List.of());
            }
            default -> {
            }
        }
        if (fault.malformed() >= 0) {
            return SimulatedResponse.full(200, headers, delay, Arrays.copyOf(body, body.length / 2));
        }
        return SimulatedResponse.full(200, headers, delay, body);
    }
}
