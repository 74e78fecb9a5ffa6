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
 * @param accessLog    where the one-line-per-exchange access log goes: {@link #ACCESS_LOG_STDOUT},
 *                     {@link #ACCESS_LOG_STDERR}, {@link #ACCESS_LOG_OFF} or a file path (relative to the
 *                     working directory)
 * @param adminListen  the address of the admin listener, or null for none
 * @param reload       how the config file is watched for changes
 * @param server       connection caps, client timeouts and the shutdown drain of the API listener
 * @param upstreamLimits bounds on what an upstream's answer may make the gateway hold
 * @param adminKey     the key of the admin listener's dashboard ({@code admin.key}), or null for none
 * @param redis        where the replicas share their rate-limit state, or null: each replica counts on its own
 * @param telemetry    where the exchanges' traces go, or null: nothing is traced
 * @param tls          TLS on the API listener ({@code tls}), or null for plain HTTP
 * @param adminTls     TLS on the admin listener ({@code admin.tls}), or null
 * @param http2        HTTP/2 to clients: h2 by ALPN, h2c, the per-connection caps
 */
public record GatewayConfig(
        HostAndPort listen,
        long maxBodyBytes,
        List<KeyConfig> keys,
        Map<String, ProviderConfig> providers,
        Map<String, ModelConfig> models,
        String accessLog,
        HostAndPort adminListen,
        ReloadConfig reload,
        ServerConfig server,
        UpstreamLimitsConfig upstreamLimits,
        AdminKey adminKey,
        RedisConfig redis,
        TelemetryConfig telemetry,
        TlsConfig tls,
        TlsConfig adminTls,
        Http2Config http2) {

    public static final String ACCESS_LOG_STDOUT = "stdout";
    public static final String ACCESS_LOG_STDERR = "stderr";
    public static final String ACCESS_LOG_OFF = "off";

    public GatewayConfig {
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(accessLog, "accessLog");
        Objects.requireNonNull(reload, "reload");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(upstreamLimits, "upstreamLimits");
        http2 = http2 == null ? Http2Config.DEFAULT : http2;
        keys = keys instanceof KeyIndex index ? index : new KeyIndex(List.copyOf(keys));
        providers = Collections.unmodifiableMap(new LinkedHashMap<>(providers));
        models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
    }

    /** The shape before {@code telemetry}, TLS and HTTP/2 existed: no tracing, plain HTTP/1.1 listeners. */
    public GatewayConfig(HostAndPort listen, long maxBodyBytes, List<KeyConfig> keys,
            Map<String, ProviderConfig> providers, Map<String, ModelConfig> models, String accessLog,
            HostAndPort adminListen, ReloadConfig reload, ServerConfig server, UpstreamLimitsConfig upstreamLimits,
            AdminKey adminKey, RedisConfig redis) {
        this(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload, server, upstreamLimits,
                adminKey, redis, null, null, null, Http2Config.DEFAULT);
    }

    /** The shape before the upstream limits and {@code admin.key} existed: their defaults (no admin key). */
    public GatewayConfig(HostAndPort listen, long maxBodyBytes, List<KeyConfig> keys,
            Map<String, ProviderConfig> providers, Map<String, ModelConfig> models, String accessLog,
            HostAndPort adminListen, ReloadConfig reload, ServerConfig server) {
        this(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload, server,
                UpstreamLimitsConfig.DEFAULT, null, null);
    }

    /**
     * The shape before access log, admin listener, reload and server settings existed; kept so code (and
     * tests) that build a config by hand need not care about them. Those take their defaults.
     */
    public GatewayConfig(HostAndPort listen, long maxBodyBytes, List<KeyConfig> keys,
            Map<String, ProviderConfig> providers, Map<String, ModelConfig> models) {
        this(listen, maxBodyBytes, keys, providers, models, ACCESS_LOG_STDOUT, null, ReloadConfig.DEFAULT,
                ServerConfig.DEFAULT, UpstreamLimitsConfig.DEFAULT, null, null);
    }

    /**
     * This config with other listen addresses. A reload uses it to keep the addresses the process has
     * bound: moving a listener needs a restart, and the rest of an edit should still apply.
     */
    public GatewayConfig withListeners(HostAndPort listen, HostAndPort adminListen) {
        return new GatewayConfig(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload,
                server, upstreamLimits, adminKey, redis, telemetry, tls, adminTls, http2);
    }

    /**
     * This config with other listener protocols ({@code tls}, {@code admin.tls}, {@code http2}). A reload uses it to
     * keep what the listeners were started with: those take a restart (the certificate files themselves are
     * watched and reloaded by the server).
     */
    public GatewayConfig withProtocols(TlsConfig tls, TlsConfig adminTls, Http2Config http2) {
        return new GatewayConfig(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload,
                server, upstreamLimits, adminKey, redis, telemetry, tls, adminTls, http2);
    }

    /**
     * The key whose hash is {@code sha256}, or null: a map lookup by digest, then a constant-time compare
     * ({@link KeyIndex} says why that tells a caller nothing the hash does not). The array is not kept: the key check
     * passes one it reuses and zeroes.
     */
    public KeyConfig findKey(byte[] sha256) {
        return ((KeyIndex) keys).find(sha256);
    }


    /** The model callers call {@code name}, or null when there is none. */
    public ModelConfig model(String name) {
        return name == null ? null : models.get(name);
    }
}
