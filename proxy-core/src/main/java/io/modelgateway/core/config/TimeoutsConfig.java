package io.modelgateway.core.config;

/**
 * How long an upstream of a provider may take (GD-9, GD-10). The connect timeout is {@code connect_timeout_ms}.
 *
 * @param firstByteMs  from sending the request to the upstream's response head; past it the attempt fails like
 *                     a lost connection (retried when retries allow, else 504 / {@code timeout_error})
 * @param streamIdleMs the longest gap between two pieces of the upstream's answer; in a stream already under
 *                     way the caller gets the style's error event (GD-10)
 * @param totalMs      the whole exchange from the caller's request, retries included
 */
public record TimeoutsConfig(long firstByteMs, long streamIdleMs, long totalMs) {
    /** Generous: a reasoning model may think for minutes before its first token. */
    public static final TimeoutsConfig DEFAULT = new TimeoutsConfig(300_000, 300_000, 1_800_000);

    public TimeoutsConfig {
        if (firstByteMs < 1 || streamIdleMs < 1 || totalMs < 1) {
            throw new IllegalArgumentException("timeouts are at least 1 ms");
        }
    }
}
