package io.modelgateway.core.config;

import io.modelgateway.core.config.YamlTree.MapNode;
import io.modelgateway.core.config.YamlTree.Node;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Reads the gateway's YAML config, expands {@code ${ENV}} references, checks every field and builds
 * the immutable {@link GatewayConfig}. The first problem found stops the load with a
 * {@link ConfigException} of the form {@code path.to.field: what is wrong (file:line)}.
 *
 * <p>Blocking (file I/O, hashing): call it at start-up or from a reload thread, never on an event loop.
 * Warnings (a skipped optional key, a literal API key, the development key in use) go to the
 * {@code System.Logger} named after this class; like errors, they never contain a secret.
 *
 * <p>This class reads the top level (which fields may appear there, {@code listen}, {@code max_body_bytes},
 * {@code development_key}) and hands the sections, in this order, to one reader each: {@link ServerSection}
 * ({@code access_log}, {@code admin} with its key and TLS, {@code tls}, {@code http2}, {@code reload}, {@code server}), {@link RedisSection}, {@link TelemetrySection}, {@link ProvidersSection},
 * {@link ModelsSection} and {@link KeysSection}, the last two with {@link LimitsSection} for their limits blocks.
 * What they all use (paths, lines, messages, {@code ${VAR}} expansion, typed fields) is in {@link ConfigReader}.
 */
public final class ConfigLoader extends ConfigReader {

    public static final String DEFAULT_LISTEN = "127.0.0.1:8080";
    public static final long DEFAULT_MAX_BODY_BYTES = 32L * 1024 * 1024;
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5000;

    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());

    private static final List<String> TOP_FIELDS = List.of("listen", "max_body_bytes", "development_key", "keys",
            "providers", "models", "access_log", "admin", "reload", "server", "upstream_limits", "redis",
            "telemetry", "tls", "http2");

    private ConfigLoader(String source, Map<String, String> env) {
        super(source, env);
    }

    /**
     * Loads {@code file}.
     *
     * @param env            the environment for {@code ${VAR}} references ({@code System.getenv()} in production)
     * @param listenOverride {@code host:port} replacing {@code listen} (e.g. from the command line), or null;
     *                       applied before the checks, so it also decides whether {@code development_key} counts
     */
    public static GatewayConfig load(Path file, Map<String, String> env, String listenOverride)
            throws ConfigException {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException(file + ": config file not found");
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot read the config file (" + e.getClass().getSimpleName() + ")");
        }
        return load(content, file, env, listenOverride);
    }

    /**
     * As {@link #load(Path, Map, String)}, for the bytes of {@code file} already read. The reloader uses it
     * so that what it loads is exactly what it fingerprinted, even if the file changes again in between.
     */
    static GatewayConfig load(byte[] content, Path file, Map<String, String> env, String listenOverride)
            throws ConfigException {
        String yaml;
        try {
            // A fresh decoder reports malformed input instead of replacing it, like Files.readString.
            yaml = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(content)).toString();
        } catch (CharacterCodingException e) {
            throw new ConfigException(file + ": not a UTF-8 text file");
        }
        return parse(yaml, file.toString(), env, listenOverride);
    }

    /** As {@link #load}, for YAML already in memory; {@code sourceName} is what messages call the file. */
    public static GatewayConfig parse(String yaml, String sourceName, Map<String, String> env, String listenOverride)
            throws ConfigException {
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(sourceName, "sourceName");
        Objects.requireNonNull(env, "env");
        Node root = YamlTree.read(yaml, sourceName);
        return new ConfigLoader(sourceName, env).bind(root, listenOverride);
    }

    /**
     * Logs a config warning (already ending with its {@code (file:line)}). Every section's warnings go out
     * through here, so they all come from this class's logger, the one to configure or filter on.
     */
    static void warn(String message) {
        LOG.log(Level.WARNING, message);
    }

    private GatewayConfig bind(Node root, String listenOverride) throws ConfigException {
        Section top = root == null ? new Section("", new MapNode(Map.of(), 1)) : section(root, "", 1);
        top.allowOnly(TOP_FIELDS);
        HostAndPort listen = listen(top, listenOverride);
        long maxBodyBytes = top.integer("max_body_bytes", DEFAULT_MAX_BODY_BYTES, 1024, Integer.MAX_VALUE);
        ServerSection serverSection = new ServerSection(this);
        String accessLog = serverSection.accessLog(top);
        HostAndPort adminListen = serverSection.adminListen(top, listen);
        AdminKey adminKey = serverSection.adminKey(top, adminListen);
        TlsConfig tls = serverSection.tls(top);
        TlsConfig adminTls = serverSection.adminTls(top, adminListen);
        Http2Config http2 = serverSection.http2(top, tls);
        ReloadConfig reload = serverSection.reload(top);
        ServerConfig server = serverSection.server(top);
        UpstreamLimitsConfig upstreamLimits = serverSection.upstreamLimits(top);
        RedisConfig redis = new RedisSection(this).redis(top);
        TelemetryConfig telemetry = new TelemetrySection(this).telemetry(top);
        Map<String, ProviderConfig> providers = new ProvidersSection(this).providers(top);
        Map<String, ModelConfig> models = new ModelsSection(this).models(top, providers);
        List<KeyConfig> keys = keys(top, listen, models, tls != null && tls.clientCaFile() != null);
        return new GatewayConfig(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload,
                server, upstreamLimits, adminKey, redis, telemetry, tls, adminTls, http2);
    }

    // ---- listen

    private HostAndPort listen(Section top, String override) throws ConfigException {
        HostAndPort listen = HostAndPort.parse(DEFAULT_LISTEN);
        String text = top.string("listen");
        if (text != null) {
            try {
                listen = HostAndPort.parse(text);
            } catch (IllegalArgumentException e) {
                throw error(top.pathOf("listen"), top.lineOf("listen"), e.getMessage());
            }
        }
        if (override != null) {
            try {
                listen = HostAndPort.parse(override);
            } catch (IllegalArgumentException e) {
                throw new ConfigException("listen: " + e.getMessage() + " (listen override '" + override + "')");
            }
        }
        return listen;
    }

    // ---- keys, development_key

    /**
     * The gateway keys: those of {@code keys}, or, when no entry there has a key, {@code development_key} (only
     * on a loopback listen address); with neither the config is refused.
     */
    private List<KeyConfig> keys(Section top, HostAndPort listen, Map<String, ModelConfig> models,
            boolean clientCerts) throws ConfigException {
        List<KeyConfig> keys = new KeysSection(this).keys(top, models, clientCerts);

        String devKey = top.string("development_key");
        if (devKey != null && devKey.isEmpty()) {
            devKey = null; // ${VAR:-} left it empty: as if absent
        }
        if (!keys.isEmpty()) {
            if (devKey != null) {
                LOG.log(Level.INFO, "development_key: not used, because keys are configured"
                        + at(source, top.lineOf("development_key")));
            }
            return keys;
        }
        if (devKey != null && listen.isLoopback()) {
            warn("development_key", top.lineOf("development_key"), "in use, because no entry of keys has a"
                    + " key; it is accepted only while the gateway listens on a loopback address");
            return List.of(new KeyConfig(KeyConfig.DEVELOPMENT_NAME, KeyConfig.sha256(devKey), List.of("*"), true));
        }
        String hint = devKey == null ? "" : "; development_key is accepted only on a loopback listen address, not "
                + listen;
        throw error("keys", top.lineOf("keys"), "no gateway key is configured (set GATEWAY_KEY or add a key)" + hint);
    }
}
