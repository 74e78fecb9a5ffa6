package io.modelgateway.core.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The whole gateway config, immutable, as {@link ConfigLoader} built it. A reload makes a new one
 * and swaps the reference; request handling reads whichever it picked up when the request began.
 *
 * @param listen       the address the server binds
 * @param maxBodyBytes the largest request body accepted
 * @param keys         the keys callers may present (the loader never leaves this empty)
 * @param providers    by name, in config order
 * @param models       by the name callers send, in config order
 */
public record GatewayConfig(
        HostAndPort listen,
        long maxBodyBytes,
        List<KeyConfig> keys,
        Map<String, ProviderConfig> providers,
        Map<String, ModelConfig> models) {

    public GatewayConfig {
        Objects.requireNonNull(listen, "listen");
        keys = List.copyOf(keys);
        providers = Collections.unmodifiableMap(new LinkedHashMap<>(providers));
        models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
    }

    /**
     * The key whose hash is {@code sha256}, or null. Every key is compared, in constant time each,
     * so the time taken says nothing about which key (or how much of one) matched.
     */
    public KeyConfig findKey(byte[] sha256) {
        KeyConfig found = null;
        for (int i = 0; i < keys.size(); i++) {
            KeyConfig k = keys.get(i);
            if (k.matches(sha256) && found == null) {
                found = k;
            }
        }
        return found;
    }

    /** The model callers call {@code name}, or null when there is none. */
    public ModelConfig model(String name) {
        return name == null ? null : models.get(name);
    }
}
