package io.modelgateway.core.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;

/**
 * Reads the optional top-level {@code telemetry} block into a {@link TelemetryConfig}: {@code otlp_endpoint}
 * (required: an {@code http://} or {@code https://} URL, usually ending in {@code /v1/traces}), {@code sampling_ratio}
 * (default 1) and {@code service_name} (default {@code model-gateway}). Absent, the result is null: no tracing.
 */
final class TelemetrySection extends ConfigReader {

    private static final List<String> FIELDS = List.of("otlp_endpoint", "sampling_ratio", "service_name");

    TelemetrySection(ConfigReader load) {
        super(load);
    }

    TelemetryConfig telemetry(Section top) throws ConfigException {
        Section t = top.section("telemetry");
        if (t == null) {
            return null;
        }
        t.allowOnly(FIELDS);
        String endpoint = t.requiredString("otlp_endpoint").strip();
        String path = t.pathOf("otlp_endpoint");
        int line = t.lineOf("otlp_endpoint");
        URI uri;
        try {
            uri = new URI(endpoint);
        } catch (URISyntaxException e) {
            throw error(path, line, "is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw error(path, line, "must start with http:// or https:// (OTLP over HTTP, e.g."
                    + " http://127.0.0.1:4318/v1/traces)");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw error(path, line, "needs a host");
        }
        if (uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
            throw error(path, line, "must have no user information and no fragment");
        }
        double ratio = t.decimal("sampling_ratio", 1.0, 0.0, 1.0);
        String service = t.string("service_name");
        if (service == null || service.isBlank()) {
            service = TelemetryConfig.DEFAULT_SERVICE_NAME;
        } else if (service.length() > 128 || hasLineBreak(service)) {
            throw error(t.pathOf("service_name"), t.lineOf("service_name"), "must be one line of at most 128"
                    + " characters");
        }
        return new TelemetryConfig(endpoint, ratio, service);
    }
}
