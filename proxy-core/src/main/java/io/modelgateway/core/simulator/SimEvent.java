package io.modelgateway.core.simulator;

/**
 * One server-sent event of a simulated stream.
 *
 * @param delayNanos how long after the previous event was due (or the head, for the first) this one is due
 * @param bytes      the complete event in UTF-8, framing included, ending with the blank line
 *                   ({@code "data: {...}\n\n"} or {@code "event: x\ndata: {...}\n\n"}); never modified
 */
public record SimEvent(long delayNanos, byte[] bytes) {
}
