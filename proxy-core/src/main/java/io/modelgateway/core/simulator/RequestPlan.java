package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import java.util.List;
import java.util.Map;

/**
 * The settings in force for one request (defaults overridden by {@code x-sim-*} headers), and the
 * last step every responder shares: applying pace and faults to a finished non-stream answer.
 *
 * <p>Faults on a non-stream answer: {@code error_after} turns it into a 500 with the style's error
 * body; {@code cut_after} sends a 200 head and then closes the connection with an empty, unfinished
 * body (events empty, {@link SimulatedResponse#cutAtEnd()}). When both are set the smaller count
 * wins, {@code error_after} on a tie — the same rule as in streams.
 */
record RequestPlan(long ttftMs, double tokensPerSecond, Integer outputTokens, FaultSpec fault) {

    long perTokenNanos() {
        return tokensPerSecond == 0 || Double.isInfinite(tokensPerSecond) ? 0 : (long) (1e9 / tokensPerSecond);
    }

    boolean errorsBeforeCut() {
        return fault.errorAfter() >= 0 && (fault.cutAfter() < 0 || fault.errorAfter() <= fault.cutAfter());
    }

    SimulatedResponse nonStream(ApiStyle style, Map<String, String> headers, byte[] body) {
        long delay = ttftMs + fault.delayMs();
        if (errorsBeforeCut()) {
            return SimErrors.response(style, 500, "The simulator injected an error (error_after="
                    + fault.errorAfter() + ")", null, null, delay, -1);
        }
        if (fault.cutAfter() >= 0) {
            return SimulatedResponse.stream(SimulatedResponse.JSON, headers, delay, List.of(), true);
        }
        return SimulatedResponse.full(200, headers, delay, body);
    }
}
