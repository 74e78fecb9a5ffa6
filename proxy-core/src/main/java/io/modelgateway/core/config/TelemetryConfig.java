package io.modelgateway.core.config;

import java.util.Objects;

/**
 * The optional top-level {@code telemetry} block: OpenTelemetry traces of the exchanges, exported over OTLP/HTTP.
 * Absent (null in {@link GatewayConfig#telemetry()}), nothing is traced and tracing costs nothing. Read at start;
 * a reload keeps the one the process started with.
 *
 * @param otlpEndpoint  where span batches are POSTed ({@code http://collector:4318/v1/traces})
 * @param samplingRatio the share of traces kept for a request that brings no sampled {@code traceparent}, 0 to 1; a
 *                      caller's sampling decision is followed
 * @param serviceName   the {@code service.name} of the spans
 */
public record TelemetryConfig(String otlpEndpoint, double samplingRatio, String serviceName) {
    public static final String DEFAULT_SERVICE_NAME = "model-gateway";

    public TelemetryConfig {
        Objects.requireNonNull(otlpEndpoint, "otlpEndpoint");
        Objects.requireNonNull(serviceName, "serviceName");
        if (!(samplingRatio >= 0 && samplingRatio <= 1)) {
            throw new IllegalArgumentException("samplingRatio is between 0 and 1");
        }
    }
}
