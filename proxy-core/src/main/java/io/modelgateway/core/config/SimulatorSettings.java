package io.modelgateway.core.config;

/**
 * How a simulator answers: its pace and the faults it injects. Set per provider in the config
 * ({@code providers.NAME.simulator}) and per request by {@code x-sim-*} headers, which win.
 *
 * @param ttftMs          delay before the first stream event (or before a non-stream answer), ms
 * @param tokensPerSecond pace of stream events after the first; 0 means as fast as possible
 * @param outputTokens    fixed answer length in tokens; null means derived from the request
 * @param fault           a fault spec (see {@link FaultSpec#parse}); null or empty means none
 */
public record SimulatorSettings(long ttftMs, double tokensPerSecond, Integer outputTokens, String fault) {

    public static final SimulatorSettings DEFAULT = new SimulatorSettings(0, 0, null, null);

    public SimulatorSettings {
        if (ttftMs < 0) {
            throw new IllegalArgumentException("ttft_ms must be >= 0");
        }
        if (tokensPerSecond < 0 || Double.isNaN(tokensPerSecond)) {
            throw new IllegalArgumentException("tokens_per_second must be >= 0");
        }
        if (outputTokens != null && outputTokens < 1) {
            throw new IllegalArgumentException("output_tokens must be >= 1");
        }
        if (fault != null && !fault.isBlank()) {
            FaultSpec.parse(fault); // throws IllegalArgumentException naming the bad part
        }
    }
}
