package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.EnvExpander.UnsetVariableException;
import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.MapNode;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import io.modelgateway.core.simulator.SimulatorSettings;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.math.BigInteger;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
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
public final class ConfigLoader {

    public static final String DEFAULT_LISTEN = "127.0.0.1:8080";
    public static final long DEFAULT_MAX_BODY_BYTES = 32L * 1024 * 1024;
    public static final int DEFAULT_CONNECT_TIMEOUT_MS = 5000;

    private static final System.Logger LOG = System.getLogger(ConfigLoader.class.getName());

    private static final List<String> TOP_FIELDS = List.of("listen", "max_body_bytes", "development_key", "keys",
            "providers", "models", "access_log", "admin", "reload", "server");
    private static final List<String> KEY_FIELDS =
            List.of("name", "key", "optional", "models", "limits", "model_limits", "rate_limit_headers");
    private static final List<String> LIMIT_FIELDS =
            List.of("requests_per_minute", "tokens_per_minute", "concurrent_requests", "daily_tokens");
    private static final List<String> ADMIN_FIELDS = List.of("listen");
    private static final List<String> RELOAD_FIELDS = List.of("watch", "interval_ms");
    private static final List<String> SERVER_FIELDS = List.of("max_connections", "max_concurrent_requests",
            "request_timeout_ms", "idle_timeout_ms", "drain_timeout_ms", "max_connections_per_client");
    private static final List<String> PROVIDER_FIELDS = List.of("type", "base_url", "api_key", "headers",
            "forward_headers", "connect_timeout_ms", "simulator", "max_tokens_field", "reasoning_details", "cooldown",
            "timeouts", "anthropic_beta");
    private static final List<String> TIMEOUT_FIELDS = List.of("first_byte_ms", "stream_idle_ms", "total_ms");
    private static final List<String> COOLDOWN_FIELDS = List.of("failures", "seconds");
    private static final List<String> SIMULATOR_FIELDS =
            List.of("ttft_ms", "tokens_per_second", "output_tokens", "fault");
    private static final List<String> MODEL_FIELDS = List.of("type", "deployments", "max_output_tokens",
            "no_temperature", "supports_dimensions", "encode_base64", "limits", "strategy", "retries", "fallbacks");
    private static final List<String> RETRY_FIELDS = List.of("max", "backoff_ms", "max_backoff_ms");
    private static final List<String> DEPLOYMENT_FIELDS = List.of("provider", "model", "weight");

    // Upper bounds of the limit fields: far above any real quota, and low enough that a limiter can multiply a
    // per-minute value by the nanoseconds in a minute (6e10) without overflowing a long.
    static final long MAX_REQUESTS_PER_MINUTE = 100_000_000L;
    static final long MAX_TOKENS_PER_MINUTE = 100_000_000L;
    static final long MAX_CONCURRENT_REQUESTS = 1_000_000L;
    static final long MAX_DAILY_TOKENS = 1_000_000_000_000L;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9A-Fa-f]{64}");
    // RFC 9110 token characters; forward_headers patterns may also use '?' ('*' already is one).
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern HEADER_GLOB = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z?-]+");
    /** An entry of anthropic_beta's allow-list: a beta name such as prompt-caching-2024-07-31, or a glob. */
    private static final Pattern BETA_NAME = Pattern.compile("[A-Za-z0-9._*?-]+");
    /** Client headers with a rule of their own (the upstream request's Anthropic headers), whatever forward_headers says. */
    private static final Set<String> ANTHROPIC_HEADERS = Set.of("anthropic-version", "anthropic-beta", "vendor-version");
    /** Headers the upstream request frames itself; setting them from config would corrupt it. */
    private static final Set<String> MANAGED_HEADERS = Set.of("content-length", "transfer-encoding",
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade");

    private final String source;
    private final Map<String, String> env;

    private ConfigLoader(String source, Map<String, String> env) {
        this.source = source;
        this.env = env;
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

    /** The {@code " (file:line)"} suffix every message ends with. */
    static String at(String source, int line) {
        return " (" + source + ":" + line + ")";
    }

    static String pathOrRoot(String path) {
        return path.isEmpty() ? "(root)" : path;
    }

    private GatewayConfig bind(Node root, String listenOverride) throws ConfigException {
        Section top = root == null ? new Section("", new MapNode(Map.of(), 1)) : section(root, "", 1);
        top.allowOnly(TOP_FIELDS);
        HostAndPort listen = listen(top, listenOverride);
        long maxBodyBytes = top.integer("max_body_bytes", DEFAULT_MAX_BODY_BYTES, 1024, Integer.MAX_VALUE);
        String accessLog = accessLog(top);
        HostAndPort adminListen = adminListen(top, listen);
        ReloadConfig reload = reload(top);
        ServerConfig server = server(top);
        Map<String, ProviderConfig> providers = providers(top);
        Map<String, ModelConfig> models = models(top, providers);
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

    // ---- access log, admin listener, reload

    private String accessLog(Section top) throws ConfigException {
        Scalar s = top.scalar("access_log");
        if (s == null) {
            return GatewayConfig.ACCESS_LOG_STDOUT;
        }
        String path = "access_log";
        int line = top.lineOf(path);
        if (s.token() == JsonToken.VALUE_FALSE) {
            return GatewayConfig.ACCESS_LOG_OFF; // YAML 1.1 reads a bare off (or no, false) as a boolean
        }
        if (s.token() != JsonToken.VALUE_STRING) {
            throw error(path, line, "must be stdout, stderr, off or a file path, not " + kind(s));
        }
        String value = expand(s.text(), path, line);
        if (value.isEmpty()) {
            throw error(path, line, "must not be empty; use off for no access log");
        }
        for (String keyword : List.of(GatewayConfig.ACCESS_LOG_STDOUT, GatewayConfig.ACCESS_LOG_STDERR,
                GatewayConfig.ACCESS_LOG_OFF)) {
            if (value.equals(keyword)) {
                return keyword;
            }
            if (value.equalsIgnoreCase(keyword)) {
                // Quietly writing a file called STDOUT into the working directory would surprise everyone.
                throw error(path, line, "write " + keyword + " in lower case (or ./" + value
                        + " for a file of that name)");
            }
        }
        if (hasLineBreak(value)) {
            throw error(path, line, "must not contain line breaks");
        }
        // Checked now so a typo in the directory stops the start (or the reload) with a line number,
        // instead of surfacing as lost log lines once traffic flows.
        Path file;
        try {
            file = Path.of(value).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw error(path, line, "is not a valid file path");
        }
        if (Files.isDirectory(file)) {
            throw error(path, line, "'" + value + "' is a directory; give the path of a file in it");
        }
        Path dir = file.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw error(path, line, "the directory of '" + value + "' does not exist");
        }
        if (Files.exists(file) ? !Files.isWritable(file) : !Files.isWritable(dir)) {
            throw error(path, line, "'" + value + "' is not writable by this process");
        }
        return value;
    }

    private HostAndPort adminListen(Section top, HostAndPort listen) throws ConfigException {
        Section admin = top.section("admin");
        if (admin == null) {
            return null;
        }
        admin.allowOnly(ADMIN_FIELDS);
        String text = admin.string("listen");
        if (text == null) {
            return null;
        }
        String path = admin.pathOf("listen");
        int line = admin.lineOf("listen");
        HostAndPort address;
        try {
            address = HostAndPort.parse(text);
        } catch (IllegalArgumentException e) {
            throw error(path, line, e.getMessage());
        }
        // Port 0 asks the OS for a free port each time, so only a fixed port can clash.
        if (address.port() != 0 && address.port() == listen.port()
                && (address.host().equalsIgnoreCase(listen.host()) || isWildcard(address) || isWildcard(listen))) {
            throw error(path, line, "port " + address.port() + " is already taken by listen (" + listen
                    + "); give the admin listener its own port");
        }
        return address;
    }

    private static boolean isWildcard(HostAndPort a) {
        return a.host().equals("0.0.0.0") || a.host().equals("::") || a.host().equals("0:0:0:0:0:0:0:0");
    }

    private ReloadConfig reload(Section top) throws ConfigException {
        Section r = top.section("reload");
        if (r == null) {
            return ReloadConfig.DEFAULT;
        }
        r.allowOnly(RELOAD_FIELDS);
        boolean watch = r.bool("watch", ReloadConfig.DEFAULT.watch());
        int intervalMs = (int) r.integer("interval_ms", ReloadConfig.DEFAULT.intervalMs(),
                ReloadConfig.MIN_INTERVAL_MS, ReloadConfig.MAX_INTERVAL_MS);
        return new ReloadConfig(watch, intervalMs);
    }

    private ServerConfig server(Section top) throws ConfigException {
        Section s = top.section("server");
        if (s == null) {
            return ServerConfig.DEFAULT;
        }
        s.allowOnly(SERVER_FIELDS);
        ServerConfig d = ServerConfig.DEFAULT;
        return new ServerConfig(
                (int) s.integer("max_connections", d.maxConnections(), 0, 1_000_000),
                (int) s.integer("max_concurrent_requests", d.maxConcurrentExchanges(), 0, 1_000_000),
                s.integer("request_timeout_ms", d.requestTimeoutMs(), 100, 3_600_000),
                s.integer("idle_timeout_ms", d.idleTimeoutMs(), 100, 86_400_000),
                s.integer("drain_timeout_ms", d.drainTimeoutMs(), 0, 3_600_000),
                (int) s.integer("max_connections_per_client", d.maxConnectionsPerClient(), 0, 1_000_000));
    }

    // ---- limits

    /** The limits block {@code name} of {@code parent}; absent, empty or {@code {}} means no limits. */
    private LimitsConfig limits(Section parent, String name) throws ConfigException {
        Field f = parent.field(name);
        return f == null ? LimitsConfig.NONE : limitsBlock(f.value(), parent.pathOf(name), f.line());
    }

    private LimitsConfig limitsBlock(Node node, String path, int line) throws ConfigException {
        if (node instanceof Scalar s && s.isNull()) {
            return LimitsConfig.NONE;
        }
        Section l = section(node, path, line);
        l.allowOnly(LIMIT_FIELDS);
        return new LimitsConfig(
                limit(l, "requests_per_minute", MAX_REQUESTS_PER_MINUTE),
                limit(l, "tokens_per_minute", MAX_TOKENS_PER_MINUTE),
                (int) limit(l, "concurrent_requests", MAX_CONCURRENT_REQUESTS),
                limit(l, "daily_tokens", MAX_DAILY_TOKENS));
    }

    /**
     * One limit field: absent is 0 (no limit). Written, it must be positive: a written 0 could mean "no limit"
     * or "nothing allowed", and guessing either wrong is costly, so it is refused with the way to say the first.
     */
    private long limit(Section l, String name, long max) throws ConfigException {
        Scalar s = l.scalar(name);
        if (s == null) {
            return 0;
        }
        if (s.token() == JsonToken.VALUE_NUMBER_INT && !(s.number() instanceof BigInteger)
                && s.number().longValue() < 1) {
            throw error(l.pathOf(name), l.lineOf(name), "must be between 1 and " + max
                    + "; leave the field out for no limit");
        }
        return l.integer(name, 0, 1, max);
    }

    /**
     * A key's {@code model_limits}: model name or glob → limits, in config order, because the first
     * matching entry applies (so a narrow entry above {@code "*"} overrides it for those models).
     */
    private Map<String, LimitsConfig> modelLimits(Section k, List<String> keyModels, Map<String, ModelConfig> models)
            throws ConfigException {
        Section all = k.section("model_limits");
        if (all == null) {
            return Map.of();
        }
        Map<String, LimitsConfig> limits = new LinkedHashMap<>();
        String catchAll = null;
        for (Field f : all.node.fields().values()) {
            String pattern = f.key();
            String path = all.pathOf(pattern);
            if (pattern.isEmpty() || hasWhitespace(pattern)) {
                throw error(path, f.line(), "a model name or glob must be non-empty and contain no whitespace");
            }
            limits.put(pattern, limitsBlock(f.value(), path, f.line()));
            if (catchAll != null) {
                warn(path, f.line(), "never applies: " + catchAll + " above it matches every model first");
            } else if (!models.isEmpty() && models.keySet().stream().noneMatch(m -> Glob.matches(pattern, m))) {
                warn(path, f.line(), "'" + pattern + "' matches no configured model");
            } else if (!Glob.isGlob(pattern) && keyModels.stream().noneMatch(p -> Glob.matches(p, pattern))) {
                warn(path, f.line(), "never applies: this key may not call '" + pattern + "'");
            }
            if (pattern.equals("*")) {
                catchAll = path;
            }
        }
        return limits;
    }

    // ---- providers

    private Map<String, ProviderConfig> providers(Section top) throws ConfigException {
        Map<String, ProviderConfig> providers = new LinkedHashMap<>();
        Section all = top.section("providers");
        if (all == null) {
            return providers;
        }
        for (Field f : all.node.fields().values()) {
            String path = all.pathOf(f.key());
            if (!NAME.matcher(f.key()).matches()) {
                throw error(path, f.line(), "a provider name may use only letters, digits, '_', '.' and '-'");
            }
            Section p = section(f.value(), path, f.line());
            p.allowOnly(PROVIDER_FIELDS);
            providers.put(f.key(), provider(f.key(), p));
        }
        return providers;
    }

    private ProviderConfig provider(String name, Section p) throws ConfigException {
        String typeText = p.requiredString("type");
        ProviderType type = ProviderType.fromConfigName(typeText);
        if (type == null) {
            throw error(p.pathOf("type"), p.lineOf("type"),
                    "must be one of openai, anthropic, simulator (got '" + typeText + "')");
        }
        URI baseUrl = null;
        if (type == ProviderType.SIMULATOR) {
            if (p.field("base_url") != null) {
                throw error(p.pathOf("base_url"), p.lineOf("base_url"), "not used by type simulator, which"
                        + " answers in-process; to reach a standalone simulator use type openai or anthropic");
            }
        } else {
            baseUrl = baseUrl(p, type);
        }
        String apiKey = apiKey(p, type);
        Map<String, String> headers = headers(p);
        int connectTimeoutMs = (int) p.integer("connect_timeout_ms", DEFAULT_CONNECT_TIMEOUT_MS, 1, 600_000);
        SimulatorSettings simulator = simulator(p, type);
        ListNode forwardList = p.list("forward_headers");
        List<String> forward = new ArrayList<>();
        if (forwardList != null) {
            for (int i = 0; i < forwardList.items().size(); i++) {
                Node item = forwardList.items().get(i);
                String path = p.pathOf("forward_headers") + "[" + i + "]";
                String pattern = text(item, path);
                if (!HEADER_GLOB.matcher(pattern).matches()) {
                    throw error(path, item.line(), "not a header name or glob (letters, digits, '-', '*', '?')");
                }
                forward.add(pattern);
            }
        }
        String maxTokensField = p.string("max_tokens_field");
        if (maxTokensField == null) {
            maxTokensField = "max_completion_tokens";
        } else if (type != ProviderType.OPENAI) {
            throw error(p.pathOf("max_tokens_field"), p.lineOf("max_tokens_field"), "only used by type openai");
        } else if (!maxTokensField.equals("max_completion_tokens") && !maxTokensField.equals("max_tokens")) {
            throw error(p.pathOf("max_tokens_field"), p.lineOf("max_tokens_field"),
                    "must be max_completion_tokens or max_tokens (got '" + maxTokensField + "')");
        }
        boolean reasoningDetails = p.bool("reasoning_details", false);
        CooldownConfig cooldown = cooldown(p);
        TimeoutsConfig timeouts = timeouts(p);
        AnthropicBeta anthropicBeta = anthropicBeta(p, type);
        ProviderConfig provider = new ProviderConfig(name, type, baseUrl, apiKey, headers, forward, connectTimeoutMs,
                simulator, maxTokensField, reasoningDetails, cooldown, timeouts, anthropicBeta);
        for (int i = 0; i < forward.size(); i++) {
            String lower = forward.get(i).toLowerCase(Locale.ROOT);
            String path = p.pathOf("forward_headers") + "[" + i + "]";
            int line = forwardList.items().get(i).line();
            if (!Glob.isGlob(lower) && !provider.forwardsHeader(lower)) {
                throw error(path, line,
                        "'" + lower + "' is never forwarded: it is a gateway credential or a hop-by-hop header");
            }
            if (ANTHROPIC_HEADERS.contains(lower)) {
                warn(path, line, "'" + lower + "' follows its own rule, not forward_headers: a messages caller's "
                        + "anthropic-version and anthropic-beta go to anthropic providers (narrow the betas with "
                        + "anthropic_beta), never to other types");
            }
        }
        return provider;
    }

    /**
     * {@code anthropic_beta} (anthropic type only): {@code forward} (the default), {@code drop}, or a list of beta
     * names or globs; values of the caller's comma list that no entry matches are removed.
     */
    private AnthropicBeta anthropicBeta(Section p, ProviderType type) throws ConfigException {
        Field f = p.field("anthropic_beta");
        if (f == null) {
            return AnthropicBeta.FORWARD;
        }
        String path = p.pathOf("anthropic_beta");
        if (type != ProviderType.ANTHROPIC) {
            throw error(path, f.line(), "only used by type anthropic (no other type is sent anthropic-beta)");
        }
        if (f.value() instanceof ListNode list) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < list.items().size(); i++) {
                Node item = list.items().get(i);
                String itemPath = path + "[" + i + "]";
                String name = text(item, itemPath).strip();
                if (!BETA_NAME.matcher(name).matches()) {
                    throw error(itemPath, item.line(), "not a beta name or glob (letters, digits, '.', '_', '-', "
                            + "'*', '?'; one name per entry, no commas)");
                }
                names.add(name);
            }
            return AnthropicBeta.allow(names);
        }
        String mode = text(f.value(), path, f.line()).strip();
        return switch (mode) {
            case "forward" -> AnthropicBeta.FORWARD;
            case "drop" -> AnthropicBeta.DROP;
            default -> throw error(path, f.line(),
                    "must be forward, drop, or a list of allowed beta names (got '" + mode + "')");
        };
    }

    /**
     * {@code cooldown}: absent is {@link CooldownConfig#DEFAULT}; {@code false} (YAML also reads a bare {@code off}
     * so) turns it off; a mapping sets {@code failures} and {@code seconds}, each defaulting as in DEFAULT.
     */
    private CooldownConfig cooldown(Section p) throws ConfigException {
        Field f = p.field("cooldown");
        if (f == null) {
            return CooldownConfig.DEFAULT;
        }
        String path = p.pathOf("cooldown");
        if (f.value() instanceof Scalar s) {
            if (s.token() == JsonToken.VALUE_FALSE) {
                return CooldownConfig.OFF;
            }
            if (s.token() == JsonToken.VALUE_TRUE) {
                return CooldownConfig.DEFAULT;
            }
            throw error(path, f.line(), "must be off, or a mapping with failures and seconds, not " + kind(s));
        }
        Section c = section(f.value(), path, f.line());
        c.allowOnly(COOLDOWN_FIELDS);
        int failures = (int) c.integer("failures", CooldownConfig.DEFAULT.failures(), 1, CooldownConfig.MAX_FAILURES);
        int seconds = (int) c.integer("seconds", CooldownConfig.DEFAULT.seconds(), 1, CooldownConfig.MAX_SECONDS);
        return new CooldownConfig(failures, seconds);
    }

    private TimeoutsConfig timeouts(Section p) throws ConfigException {
        Section t = p.section("timeouts");
        if (t == null) {
            return TimeoutsConfig.DEFAULT;
        }
        t.allowOnly(TIMEOUT_FIELDS);
        TimeoutsConfig d = TimeoutsConfig.DEFAULT;
        return new TimeoutsConfig(
                t.integer("first_byte_ms", d.firstByteMs(), 1, 86_400_000),
                t.integer("stream_idle_ms", d.streamIdleMs(), 1, 86_400_000),
                t.integer("total_ms", d.totalMs(), 1, 86_400_000));
    }

    private URI baseUrl(Section p, ProviderType type) throws ConfigException {
        String path = p.pathOf("base_url");
        int line = p.lineOf("base_url");
        String text = p.string("base_url");
        if (text == null || text.isBlank()) {
            throw error(path, line, "is required for type " + type.configName());
        }
        // The URL's text stays out of messages: a mistyped one may carry credentials.
        URI uri;
        try {
            uri = new URI(text.strip());
        } catch (URISyntaxException e) {
            throw error(path, line, "is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw error(path, line, "must start with http:// or https://");
        }
        if (uri.getRawUserInfo() != null) {
            throw error(path, line, "must not hold credentials; put them in api_key or headers");
        }
        if (uri.getHost() == null) {
            throw error(path, line, "needs a valid host");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw error(path, line, "must not have a query or a fragment");
        }
        String urlPath = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (urlPath.endsWith("/")) {
            urlPath = urlPath.substring(0, urlPath.length() - 1);
        }
        if (type == ProviderType.ANTHROPIC && urlPath.endsWith("/v1")) {
            throw error(path, line, "for type anthropic give the URL without /v1 (the gateway appends /v1/messages)");
        }
        return URI.create(scheme + "://" + uri.getRawAuthority() + urlPath);
    }

    private String apiKey(Section p, ProviderType type) throws ConfigException {
        Scalar raw = p.scalar("api_key");
        if (raw == null) {
            return null;
        }
        String path = p.pathOf("api_key");
        int line = p.lineOf("api_key");
        String value = expand(raw.text(), path, line);
        if (value.isEmpty()) {
            return null; // e.g. ${OPENAI_API_KEY:-} — an upstream that needs no key
        }
        if (hasLineBreak(value)) {
            throw error(path, line, "must not contain line breaks");
        }
        if (!EnvExpander.hasReference(raw.text())) {
            warn(path, line, "the API key is written in the config file; prefer an environment reference"
                    + " such as ${" + apiKeyVariable(type) + "}");
        }
        return value;
    }

    /** The environment variable a provider of this type conventionally takes its key from. */
    static String apiKeyVariable(ProviderType type) {
        return switch (type) {
            case OPENAI -> "OPENAI_API_KEY";
            case ANTHROPIC -> "ANTHROPIC_API_KEY";
            case SIMULATOR -> "SIMULATOR_API_KEY";
        };
    }

    private Map<String, String> headers(Section p) throws ConfigException {
        Section h = p.section("headers");
        if (h == null) {
            return Map.of();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        Map<String, String> seen = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (Field f : h.node.fields().values()) {
            String path = h.pathOf(f.key());
            if (!HEADER_NAME.matcher(f.key()).matches()) {
                throw error(path, f.line(), "not a valid header name");
            }
            if (MANAGED_HEADERS.contains(f.key().toLowerCase(Locale.ROOT))) {
                throw error(path, f.line(), "the gateway sets this header itself");
            }
            if (seen.putIfAbsent(f.key(), f.key()) != null) {
                throw error(path, f.line(), "the same header as " + h.pathOf(seen.get(f.key()))
                        + " (header names ignore case)");
            }
            String value = text(f.value(), path, f.line());
            if (hasLineBreak(value)) {
                throw error(path, f.line(), "must not contain line breaks");
            }
            headers.put(f.key(), value);
        }
        return headers;
    }

    private SimulatorSettings simulator(Section p, ProviderType type) throws ConfigException {
        Section s = p.section("simulator");
        if (s == null) {
            return SimulatorSettings.DEFAULT;
        }
        if (type != ProviderType.SIMULATOR) {
            throw error(p.pathOf("simulator"), p.lineOf("simulator"), "only allowed for type simulator");
        }
        s.allowOnly(SIMULATOR_FIELDS);
        long ttftMs = s.integer("ttft_ms", 0, 0, 3_600_000);
        double tokensPerSecond = s.decimal("tokens_per_second", 0, 0, 1_000_000);
        Integer outputTokens =
                s.field("output_tokens") == null ? null : (int) s.integer("output_tokens", 1, 1, 10_000_000);
        String fault = s.string("fault");
        try {
            return new SimulatorSettings(ttftMs, tokensPerSecond, outputTokens, fault);
        } catch (IllegalArgumentException e) {
            // SimulatorSettings names the field first ("fault: ...", "ttft_ms must ..."): point at it.
            String message = e.getMessage() == null ? "invalid" : e.getMessage();
            for (String name : SIMULATOR_FIELDS) {
                if (message.startsWith(name + ": ") || message.startsWith(name + " ")) {
                    String rest = message.substring(name.length() + (message.startsWith(name + ": ") ? 2 : 1));
                    throw error(s.pathOf(name), s.lineOf(name), rest);
                }
            }
            throw error(p.pathOf("simulator"), p.lineOf("simulator"), message);
        }
    }

    // ---- models

    private Map<String, ModelConfig> models(Section top, Map<String, ProviderConfig> providers)
            throws ConfigException {
        Map<String, ModelConfig> models = new LinkedHashMap<>();
        Map<String, List<Written>> fallbackLines = new HashMap<>(); // model -> where each fallback was written
        Section all = top.section("models");
        if (all == null || all.node.fields().isEmpty()) {
            warn("models", top.lineOf("models"), "no models are configured, so no request can be routed");
            return models;
        }
        for (Field f : all.node.fields().values()) {
            String name = f.key();
            String path = all.pathOf(name);
            if (name.isEmpty() || hasWhitespace(name)) {
                throw error(path, f.line(), "a model name must be non-empty and contain no whitespace");
            }
            Section m = section(f.value(), path, f.line());
            m.allowOnly(MODEL_FIELDS);
            ModelType type = ModelType.CHAT;
            String typeText = m.string("type");
            if (typeText != null) {
                type = switch (typeText) {
                    case "chat" -> ModelType.CHAT;
                    case "embedding" -> ModelType.EMBEDDING;
                    default -> throw error(m.pathOf("type"), m.lineOf("type"),
                            "must be chat or embedding (got '" + typeText + "')");
                };
            }
            ListNode list = m.list("deployments");
            if (list == null) {
                throw m.missing("deployments");
            }
            if (list.items().isEmpty()) {
                throw error(m.pathOf("deployments"), m.lineOf("deployments"), "needs at least one deployment");
            }
            if (list.items().size() > ModelConfig.MAX_DEPLOYMENTS) {
                throw error(m.pathOf("deployments"), m.lineOf("deployments"), "at most "
                        + ModelConfig.MAX_DEPLOYMENTS + " deployments per model");
            }
            List<DeploymentConfig> deployments = new ArrayList<>();
            for (int i = 0; i < list.items().size(); i++) {
                Node item = list.items().get(i);
                Section d = section(item, m.pathOf("deployments") + "[" + i + "]", item.line());
                d.allowOnly(DEPLOYMENT_FIELDS);
                deployments.add(deployment(name, d, providers));
            }
            int maxOutputTokens = (int) m.integer("max_output_tokens", 0, 1, 10_000_000);
            boolean noTemperature = m.bool("no_temperature", false);
            boolean supportsDimensions = m.bool("supports_dimensions", false);
            boolean encodeBase64 = m.bool("encode_base64", false);
            if (type != ModelType.EMBEDDING && (m.field("supports_dimensions") != null
                    || m.field("encode_base64") != null)) {
                String field = m.field("supports_dimensions") != null ? "supports_dimensions" : "encode_base64";
                throw error(m.pathOf(field), m.lineOf(field), "only for type embedding");
            }
            LimitsConfig limits = limits(m, "limits");
            RoutingConfig routing = new RoutingConfig(strategy(m), retries(m), fallbackNames(m, name, fallbackLines));
            models.put(name, new ModelConfig(name, type, deployments, maxOutputTokens, noTemperature,
                    supportsDimensions, encodeBase64, limits, routing));
        }
        checkFallbacks(models, fallbackLines);
        return models;
    }

    /** Where a value was written, for messages about it given later. */
    private record Written(String path, int line) {
    }

    private RoutingStrategy strategy(Section m) throws ConfigException {
        String text = m.string("strategy");
        if (text == null) {
            return RoutingStrategy.WEIGHTED;
        }
        RoutingStrategy strategy = RoutingStrategy.fromConfigName(text);
        if (strategy == null) {
            throw error(m.pathOf("strategy"), m.lineOf("strategy"),
                    "must be weighted or least_inflight (got '" + text + "')");
        }
        return strategy;
    }

    /** {@code retries}: absent or empty is {@link RetryConfig#DEFAULT}; each field defaults on its own. */
    private RetryConfig retries(Section m) throws ConfigException {
        Section r = m.section("retries");
        if (r == null) {
            return RetryConfig.DEFAULT;
        }
        r.allowOnly(RETRY_FIELDS);
        RetryConfig d = RetryConfig.DEFAULT;
        int max = (int) r.integer("max", d.max(), 0, RetryConfig.MAX_RETRIES);
        long backoff = r.integer("backoff_ms", d.backoffMs(), 1, RetryConfig.MAX_BACKOFF_MS);
        long maxBackoff = r.integer("max_backoff_ms", Math.max(d.maxBackoffMs(), backoff), 1,
                RetryConfig.MAX_BACKOFF_MS);
        if (maxBackoff < backoff) {
            throw error(r.pathOf("max_backoff_ms"), r.lineOf("max_backoff_ms"), "must be at least backoff_ms ("
                    + backoff + ")");
        }
        return new RetryConfig(max, backoff, maxBackoff);
    }

    /**
     * The names in {@code fallbacks}, checked on their own here (strings, no self, no repeats); that they exist and
     * have the model's type is checked once every model is read, with the lines kept in {@code lines}.
     */
    private List<String> fallbackNames(Section m, String model, Map<String, List<Written>> lines)
            throws ConfigException {
        ListNode list = m.list("fallbacks");
        if (list == null) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        List<Written> at = new ArrayList<>();
        for (int i = 0; i < list.items().size(); i++) {
            Node item = list.items().get(i);
            String path = m.pathOf("fallbacks") + "[" + i + "]";
            String name = text(item, path);
            if (name.equals(model)) {
                throw error(path, item.line(), "a model cannot fall back to itself");
            }
            if (names.contains(name)) {
                throw error(path, item.line(), "'" + name + "' is listed twice");
            }
            names.add(name);
            at.add(new Written(path, item.line()));
        }
        lines.put(model, at);
        return names;
    }

    private void checkFallbacks(Map<String, ModelConfig> models, Map<String, List<Written>> lines)
            throws ConfigException {
        for (ModelConfig model : models.values()) {
            List<String> names = model.routing().fallbacks();
            for (int i = 0; i < names.size(); i++) {
                Written at = lines.get(model.name()).get(i);
                ModelConfig fallback = models.get(names.get(i));
                if (fallback == null) {
                    throw error(at.path(), at.line(), "unknown model '" + names.get(i) + "'");
                }
                if (fallback.type() != model.type()) {
                    throw error(at.path(), at.line(), "'" + fallback.name() + "' is a "
                            + fallback.type().name().toLowerCase(Locale.ROOT) + " model; a fallback must have the"
                            + " type of the model it stands in for ("
                            + model.type().name().toLowerCase(Locale.ROOT) + ")");
                }
            }
        }
    }

    private DeploymentConfig deployment(String modelName, Section d, Map<String, ProviderConfig> providers)
            throws ConfigException {
        String providerName = d.requiredString("provider");
        ProviderConfig provider = providers.get(providerName);
        if (provider == null) {
            throw error(d.pathOf("provider"), d.lineOf("provider"), "unknown provider '" + providerName + "'; "
                    + (providers.isEmpty() ? "no providers are configured" : "configured: "
                    + String.join(", ", providers.keySet())));
        }
        String upstream = d.string("model");
        if (upstream == null) {
            upstream = modelName;
        } else if (upstream.isEmpty() || hasWhitespace(upstream)) {
            throw error(d.pathOf("model"), d.lineOf("model"), "must be non-empty and contain no whitespace");
        }
        int weight = (int) d.integer("weight", 1, 1, 1_000_000);
        return new DeploymentConfig(provider, upstream, weight);
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
            LimitsConfig limits = limits(k, "limits");
            Map<String, LimitsConfig> modelLimits = modelLimits(k, patterns, models);
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

    // ---- helpers

    private ConfigException error(String path, int line, String problem) {
        return new ConfigException(pathOrRoot(path) + ": " + problem + at(source, line));
    }

    private void warn(String path, int line, String problem) {
        LOG.log(Level.WARNING, path + ": " + problem + at(source, line));
    }

    private String expand(String raw, String path, int line) throws ConfigException {
        try {
            return EnvExpander.expand(raw, env);
        } catch (UnsetVariableException e) {
            throw error(path, line, e.describe());
        } catch (IllegalArgumentException e) {
            throw error(path, line, e.getMessage());
        }
    }

    /** A list item or map value that must be a string; expanded. */
    private String text(Node node, String path) throws ConfigException {
        return text(node, path, node.line());
    }

    private String text(Node node, String path, int line) throws ConfigException {
        if (!(node instanceof Scalar s) || s.isNull()) {
            throw error(path, line, "must be a string, not " + kind(node));
        }
        return expand(s.text(), path, line);
    }

    private Section section(Node node, String path, int line) throws ConfigException {
        if (!(node instanceof MapNode map)) {
            throw error(path, line, "must be a mapping of fields, not " + kind(node));
        }
        return new Section(path, map);
    }

    private static String kind(Node node) {
        if (node instanceof MapNode) {
            return "a mapping";
        }
        if (node instanceof ListNode) {
            return "a list";
        }
        Scalar s = (Scalar) node;
        return switch (s.token()) {
            case VALUE_NULL -> "an empty value";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            default -> "a string";
        };
    }

    private static boolean hasWhitespace(String s) {
        return s.chars().anyMatch(Character::isWhitespace);
    }

    private static boolean hasLineBreak(String s) {
        return s.indexOf('\r') >= 0 || s.indexOf('\n') >= 0;
    }

    /**
     * The closest allowed name within two edits, for "did you mean" hints; else the one allowed name that
     * {@code name} abbreviates, because long names get shortened ({@code requests_per_min}).
     */
    private static String closest(String name, List<String> allowed) {
        String lower = name.toLowerCase(Locale.ROOT);
        String best = null;
        int bestDistance = 3;
        for (String candidate : allowed) {
            int d = editDistance(lower, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        if (best == null && lower.length() >= 4) {
            List<String> longer = allowed.stream().filter(c -> c.startsWith(lower)).toList();
            best = longer.size() == 1 ? longer.get(0) : null;
        }
        return best;
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /**
     * One YAML mapping being bound, with its path. Typed getters return the default (or null) when a
     * field is absent or empty, expand {@code ${...}} in strings, and accept a string for a number
     * or boolean only when it came from an environment reference ({@code ${TIMEOUT:-5000}}).
     */
    private final class Section {
        final String path;
        final MapNode node;

        Section(String path, MapNode node) {
            this.path = path;
            this.node = node;
        }

        String pathOf(String name) {
            return path.isEmpty() ? name : path + "." + name;
        }

        /** The line of a field's key, or of this mapping when the field is absent. */
        int lineOf(String name) {
            Field f = node.fields().get(name);
            return f != null ? f.line() : node.line();
        }

        /** The field, or null when absent or written without a value. */
        Field field(String name) {
            Field f = node.fields().get(name);
            return f == null || (f.value() instanceof Scalar s && s.isNull()) ? null : f;
        }

        void allowOnly(List<String> allowed) throws ConfigException {
            for (Field f : node.fields().values()) {
                if (!allowed.contains(f.key())) {
                    String guess = closest(f.key(), allowed);
                    throw error(pathOf(f.key()), f.line(), "unknown field"
                            + (guess == null ? "" : " (did you mean " + guess + "?)")
                            + "; allowed: " + String.join(", ", allowed));
                }
            }
        }

        ConfigException missing(String name) {
            return error(pathOf(name), node.line(), "is required");
        }

        Scalar scalar(String name) throws ConfigException {
            Field f = field(name);
            if (f == null) {
                return null;
            }
            if (!(f.value() instanceof Scalar s)) {
                throw error(pathOf(name), f.line(), "must be a single value, not " + kind(f.value()));
            }
            return s;
        }

        String string(String name) throws ConfigException {
            Scalar s = scalar(name);
            return s == null ? null : expand(s.text(), pathOf(name), lineOf(name));
        }

        String requiredString(String name) throws ConfigException {
            String value = string(name);
            if (value == null) {
                throw missing(name);
            }
            if (value.isEmpty()) {
                throw error(pathOf(name), lineOf(name), "must not be empty");
            }
            return value;
        }

        long integer(String name, long dflt, long min, long max) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            String path = pathOf(name);
            int line = lineOf(name);
            long value;
            if (s.token() == JsonToken.VALUE_NUMBER_INT) {
                if (s.number() instanceof BigInteger) {
                    throw error(path, line, "must be between " + min + " and " + max);
                }
                value = s.number().longValue();
            } else if (s.token() == JsonToken.VALUE_STRING
                    && EnvExpander.hasReference(s.text())) {
                try {
                    value = Long.parseLong(expand(s.text(), path, line).strip());
                } catch (NumberFormatException e) {
                    throw error(path, line, "must be a whole number (after environment expansion)");
                }
            } else {
                throw error(path, line, "must be a whole number, not " + kind(s));
            }
            if (value < min || value > max) {
                throw error(path, line, "must be between " + min + " and " + max);
            }
            return value;
        }

        double decimal(String name, double dflt, double min, double max) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            String path = pathOf(name);
            int line = lineOf(name);
            double value;
            if (s.number() != null) {
                value = s.number().doubleValue();
            } else if (s.token() == JsonToken.VALUE_STRING
                    && EnvExpander.hasReference(s.text())) {
                try {
                    value = Double.parseDouble(expand(s.text(), path, line).strip());
                } catch (NumberFormatException e) {
                    throw error(path, line, "must be a number (after environment expansion)");
                }
            } else {
                throw error(path, line, "must be a number, not " + kind(s));
            }
            if (!(value >= min && value <= max)) { // also refuses NaN
                throw error(path, line, "must be between " + min + " and " + max);
            }
            return value;
        }

        boolean bool(String name, boolean dflt) throws ConfigException {
            Scalar s = scalar(name);
            if (s == null) {
                return dflt;
            }
            switch (s.token()) {
                case VALUE_TRUE:
                    return true;
                case VALUE_FALSE:
                    return false;
                case VALUE_STRING:
                    if (EnvExpander.hasReference(s.text())) {
                        String v = expand(s.text(), pathOf(name), lineOf(name)).strip().toLowerCase(Locale.ROOT);
                        if (v.equals("true") || v.equals("false")) {
                            return v.equals("true");
                        }
                    }
                    break;
                default:
                    break;
            }
            throw error(pathOf(name), lineOf(name), "must be true or false");
        }

        ListNode list(String name) throws ConfigException {
            Field f = field(name);
            if (f == null) {
                return null;
            }
            if (!(f.value() instanceof ListNode l)) {
                throw error(pathOf(name), f.line(), "must be a list, not " + kind(f.value()));
            }
            return l;
        }

        Section section(String name) throws ConfigException {
            Field f = field(name);
            return f == null ? null : ConfigLoader.this.section(f.value(), pathOf(name), f.line());
        }
    }
}
