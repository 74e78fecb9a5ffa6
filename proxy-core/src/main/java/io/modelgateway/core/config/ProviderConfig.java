package io.modelgateway.core.config;

import io.modelgateway.core.simulator.SimulatorSettings;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One upstream: where it is, how to authenticate to it and what to send besides the request.
 *
 * @param baseUrl          without a trailing slash; null for the simulator. For openai it includes
 *                         {@code /v1}; for anthropic it does not (the gateway appends {@code /v1/messages})
 * @param apiKey           the provider credential, or null; never printed
 * @param headers          extra headers sent on every upstream request, in config order
 * @param forwardHeaders   lower-case names or globs of client headers passed upstream
 * @param connectTimeoutMs TCP (and TLS) connect timeout
 * @param simulator        how the simulator answers; {@link SimulatorSettings#DEFAULT} when not set
 */
public record ProviderConfig(
        String name,
        ProviderType type,
        URI baseUrl,
        String apiKey,
        Map<String, String> headers,
        List<String> forwardHeaders,
        int connectTimeoutMs,
        SimulatorSettings simulator) {

    /**
     * Client headers that never go upstream whatever {@code forward_headers} says: the gateway's own
     * credentials (forwarding them would hand the gateway key to the provider) and the hop-by-hop and
     * framing headers the upstream request sets itself.
     */
    private static final Set<String> NEVER_FORWARDED = Set.of(
            "authorization", "proxy-authorization", "x-api-key",
            "host", "content-length", "transfer-encoding", "connection", "keep-alive",
            "proxy-connection", "te", "trailer", "upgrade");

    public ProviderConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if ((type == ProviderType.SIMULATOR) != (baseUrl == null)) {
            throw new IllegalArgumentException("a simulator has no base URL; every other provider needs one");
        }
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        forwardHeaders = forwardHeaders.stream().map(h -> h.toLowerCase(Locale.ROOT)).toList();
        if (connectTimeoutMs < 1) {
            throw new IllegalArgumentException("connectTimeoutMs must be >= 1");
        }
        simulator = simulator == null ? SimulatorSettings.DEFAULT : simulator;
    }

    /**
     * Whether the client header {@code lowerCaseName} is passed upstream. Runs per header per
     * request: no allocation, patterns were lower-cased at load.
     */
    public boolean forwardsHeader(String lowerCaseName) {
        if (forwardHeaders.isEmpty() || NEVER_FORWARDED.contains(lowerCaseName)) {
            return false;
        }
        for (int i = 0; i < forwardHeaders.size(); i++) {
            if (Glob.matches(forwardHeaders.get(i), lowerCaseName)) {
                return true;
            }
        }
        return false;
    }

    /** Without the API key, and with header names only: extra headers often carry credentials too. */
    @Override
    public String toString() {
        return "ProviderConfig[name=" + name
                + ", type=" + type
                + ", baseUrl=" + baseUrl
                + ", apiKey=" + (apiKey == null ? "none" : "(set)")
                + ", headers=" + headers.keySet()
                + ", forwardHeaders=" + forwardHeaders
                + ", connectTimeoutMs=" + connectTimeoutMs
                + ", simulator=" + simulator + "]";
    }
}
