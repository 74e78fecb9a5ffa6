package io.modelgateway.core.config;

import io.modelgateway.core.config.EnvExpander.UnsetVariableException;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.MapNode;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Reads the gateway's YAML config, expands {@code ${ENV}} references, checks every field and builds
 * the immutable {@link GatewayConfig}. The first problem found stops the load with a
 * {@link ConfigException} of the form {@code path.to.field: what is wrong (file:line)}.
 *
 * <p>Blocking (file I/O, hashing): call it at start-up or from a reload thread, never on an event loop.
 * Warnings (a skipped optional key, a literal API key, the development key in use) go to the
 * {@code System.Logger} named after this class; like errors, they never contain a secret.
 */
public final class ConfigLoader extends ConfigReader {

    public static final String DEFAULT_LISTEN = "127.0.0.1:8080";
    public static final long DEFAULT_MAX_BODY_BYTES = 32L * 1024 * 1024;
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5000;

    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());

    private static final List<String> TOP_FIELDS = List.of("listen", "max_body_bytes", "development_key", "keys",
            "providers", "models", "access_log", "admin", "reload", "server");
    private static final List<String> KEY_FIELDS =
            List.of("name", "key", "optional", "models", "limits", "model_limits", "rate_limit_headers");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9A-Fa-f]{64}");
    private final LimitsSection limitsSection = new LimitsSection(this);

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
        ReloadConfig reload = serverSection.reload(top);
        ServerConfig server = serverSection.server(top);
        Map<String, ProviderConfig> providers = new ProvidersSection(this).providers(top);
        Map<String, ModelConfig> models = new ModelsSection(this).models(top, providers);
        List<KeyConfig> keys = keys(top, listen, models);
        return new GatewayConfig(listen, maxBodyBytes, keys, providers, models, accessLog, adminListen, reload,
                server);
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

    // ---- keys

    private List<KeyConfig> keys(Section top, HostAndPort listen, Map<String, ModelConfig> models)
            throws ConfigException {
        List<KeyConfig> keys = new ArrayList<>();
        List<String> keyPaths = new ArrayList<>(); // parallel to keys, for "same key as" messages
        Map<String, Integer> names = new HashMap<>(); // also holds skipped keys: names stay unique
        ListNode list = top.list("keys");
        for (int i = 0; list != null && i < list.items().size(); i++) {
            Node item = list.items().get(i);
            Section k = section(item, "keys[" + i + "]", item.line());
            k.allowOnly(KEY_FIELDS);
            String name = k.requiredString("name");
            if (!NAME.matcher(name).matches()) {
                throw error(k.pathOf("name"), k.lineOf("name"), "may use only letters, digits, '_', '.' and '-'");
            }
            Integer other = names.putIfAbsent(name, i);
            if (other != null) {
                throw error(k.pathOf("name"), k.lineOf("name"), "duplicate key name '" + name
                        + "' (also keys[" + other + "])");
            }
            boolean optional = k.bool("optional", false);
            List<String> patterns = modelPatterns(k, models);
            // Checked before the key itself, so a skipped optional key's limits are still validated.
            LimitsConfig limits = limitsSection.limits(k, "limits");
            Map<String, LimitsConfig> modelLimits = limitsSection.modelLimits(k, patterns, models);
            boolean rateLimitHeaders = k.bool("rate_limit_headers", true);
            byte[] hash = keyHash(k, name, optional);
            if (hash == null) {
                continue;
            }
            for (int j = 0; j < keys.size(); j++) {
                if (keys.get(j).matches(hash)) {
                    throw error(k.pathOf("key"), k.lineOf("key"), "the same key as " + keyPaths.get(j)
                            + "; every entry needs its own key");
                }
            }
            keys.add(new KeyConfig(name, hash, patterns, false, limits, modelLimits, rateLimitHeaders));
            keyPaths.add(k.pathOf("key"));
        }

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

    private List<String> modelPatterns(Section k, Map<String, ModelConfig> models) throws ConfigException {
        ListNode list = k.list("models");
        if (list == null) {
            throw k.missing("models");
        }
        if (list.items().isEmpty()) {
            throw error(k.pathOf("models"), k.lineOf("models"), "needs at least one model name or glob, e.g. [\"*\"]");
        }
        List<String> patterns = new ArrayList<>();
        for (int i = 0; i < list.items().size(); i++) {
            Node item = list.items().get(i);
            String path = k.pathOf("models") + "[" + i + "]";
            String pattern = text(item, path);
            if (pattern.isEmpty() || hasWhitespace(pattern)) {
                throw error(path, item.line(), "must be non-empty and contain no whitespace");
            }
            if (!models.isEmpty() && models.keySet().stream().noneMatch(m -> Glob.matches(pattern, m))) {
                warn(path, item.line(), "'" + pattern + "' matches no configured model");
            }
            patterns.add(pattern);
        }
        return patterns;
    }

    /** The key's SHA-256; null when an optional key's variable is unset, which skips the entry. */
    private byte[] keyHash(Section k, String name, boolean optional) throws ConfigException {
        String path = k.pathOf("key");
        int line = k.lineOf("key");
        Scalar raw = k.scalar("key");
        if (raw == null) {
            throw k.missing("key");
        }
        if (EnvExpander.hasReference(raw.text())) {
            String key;
            try {
                key = EnvExpander.expand(raw.text(), env);
            } catch (UnsetVariableException e) {
                if (optional) {
                    warn(path, line, e.describe() + "; optional key '" + name + "' is skipped");
                    return null;
                }
                throw error(path, line, e.describe());
            } catch (IllegalArgumentException e) {
                throw error(path, line, e.getMessage());
            }
            if (key.isEmpty()) {
                if (optional) {
                    warn(path, line, "resolves to an empty key; optional key '" + name + "' is skipped");
                    return null;
                }
                throw error(path, line, "resolves to an empty key");
            }
            if (!key.equals(key.strip())) {
                throw error(path, line, "the key has leading or trailing whitespace");
            }
            return KeyConfig.sha256(key);
        }
        if (raw.text().startsWith("sha256:")) {
            String hex = raw.text().substring("sha256:".length());
            if (!SHA256_HEX.matcher(hex).matches()) {
                throw error(path, line, "a sha256: key needs exactly 64 hex digits after 'sha256:'");
            }
            return HexFormat.of().parseHex(hex);
        }
        throw error(path, line, "a plain key must come from an environment reference such as ${GATEWAY_KEY},"
                + " or be given as sha256:<hex>");
    }
}
