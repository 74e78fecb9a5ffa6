package io.modelgateway.core.config;

import java.util.Locale;

/**
 * A fault the simulator injects, written as {@code key=value} pairs separated by {@code ,} or {@code ;}:
 * <ul>
 *   <li>{@code status=503} — answer with this error status (and the style's error body) instead;</li>
 *   <li>{@code delay_ms=200} — wait this long before the response headers;</li>
 *   <li>{@code error_after=5} — in a stream, send the style's error event after 5 content events, then end;</li>
 *   <li>{@code cut_after=5} — in a stream, close the connection after 5 content events (no terminator);</li>
 *   <li>{@code stall_after=5} — in a stream, stop after 5 content events but keep the connection open (no
 *       terminator, no close), as a provider that hangs; a non-stream answer sends its head and then nothing;</li>
 *   <li>{@code malformed=K} — the answer's JSON is broken: a non-stream answer is a 200 whose body is the real
 *       body cut in half (any K); in a stream the K-th content event's data is cut in half (K = 0: the very first
 *       event), and the stream then goes on as if nothing happened;</li>
 *   <li>{@code retry_after=2} — with {@code status}, also send {@code Retry-After: 2}.</li>
 * </ul>
 * When several of {@code error_after}, {@code cut_after}, {@code stall_after} are set, the smallest count wins
 * ({@code error_after}, then {@code cut_after} on a tie).
 * Used by the config validator and by the {@code x-sim-fault} request header.
 */
public record FaultSpec(int status, long delayMs, int errorAfter, int cutAfter, int retryAfter, int stallAfter,
        int malformed) {

    public static final FaultSpec NONE = new FaultSpec(0, 0, -1, -1, -1, -1, -1);

    public boolean isNone() {
        return status == 0 && delayMs == 0 && errorAfter < 0 && cutAfter < 0 && stallAfter < 0 && malformed < 0;
    }

    public static FaultSpec parse(String spec) {
        if (spec == null || spec.isBlank()) {
            return NONE;
        }
        int status = 0;
        long delayMs = 0;
        int errorAfter = -1;
        int cutAfter = -1;
        int retryAfter = -1;
        int stallAfter = -1;
        int malformed = -1;
        for (String part : spec.split("[,;]")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("fault: expected key=value, got '" + p + "'");
            }
            String key = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            long value;
            try {
                value = Long.parseLong(p.substring(eq + 1).trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("fault: '" + key + "' needs a whole number");
            }
            if (value < 0) {
                throw new IllegalArgumentException("fault: '" + key + "' must be >= 0");
            }
            switch (key) {
                case "status" -> {
                    if (value < 400 || value > 599) {
                        throw new IllegalArgumentException("fault: status must be 400..599");
                    }
                    status = (int) value;
                }
                case "delay_ms" -> delayMs = value;
                case "error_after" -> errorAfter = (int) Math.min(value, Integer.MAX_VALUE);
                case "cut_after" -> cutAfter = (int) Math.min(value, Integer.MAX_VALUE);
                case "retry_after" -> retryAfter = (int) Math.min(value, Integer.MAX_VALUE);
                case "stall_after" -> stallAfter = (int) Math.min(value, Integer.MAX_VALUE);
                case "malformed" -> malformed = (int) Math.min(value, Integer.MAX_VALUE);
                default -> throw new IllegalArgumentException("fault: unknown key '" + key
                        + "' (status, delay_ms, error_after, cut_after, stall_after, malformed, retry_after)");
            }
        }
        return new FaultSpec(status, delayMs, errorAfter, cutAfter, retryAfter, stallAfter, malformed);
    }
}
