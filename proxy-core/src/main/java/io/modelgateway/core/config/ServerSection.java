package io.modelgateway.core.config;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads the small top-level blocks about the gateway's own serving: {@code server} (into a {@link ServerConfig}),
 * {@code admin} (the admin listener's {@link HostAndPort}, its dashboard's {@link AdminKey} and its {@link TlsConfig}),
 * {@code tls} and {@code http2} (the API listener's {@link TlsConfig} and {@link Http2Config}), {@code reload} (into a
 * {@link ReloadConfig}) and {@code access_log} (the access log's destination).
 */
final class ServerSection extends ConfigReader {

    private static final List<String> ADMIN_FIELDS = List.of("listen", "key", "tls");
    private static final List<String> TLS_FIELDS =
            List.of("cert_file", "key_file", "key_password", "client_ca_file", "client_auth");
    private static final List<String> HTTP2_FIELDS = List.of("enabled", "cleartext", "max_concurrent_streams",
            "max_header_list_size");
    private static final java.util.regex.Pattern SHA256_HEX = java.util.regex.Pattern.compile("[0-9a-fA-F]{64}");
    private static final List<String> RELOAD_FIELDS = List.of("watch", "interval_ms");
    private static final List<String> UPSTREAM_LIMIT_FIELDS = List.of("max_error_body_bytes", "max_sse_event_bytes",
            "max_collected_bytes", "collected_budget_bytes");
    private static final List<String> SERVER_FIELDS = List.of("max_connections", "max_concurrent_requests",
            "request_timeout_ms", "idle_timeout_ms", "drain_timeout_ms", "max_connections_per_client");

    ServerSection(ConfigReader load) {
        super(load);
    }

    String accessLog(Section top) throws ConfigException {
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

    HostAndPort adminListen(Section top, HostAndPort listen) throws ConfigException {
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

    /**
     * {@code admin.key}: an environment reference ({@code ${ADMIN_KEY}}) or {@code sha256:<hex>}, like a gateway key
     * (a plain key in the file is refused); null when absent or when the reference resolves to an empty string
     * ({@code ${ADMIN_KEY:-}}). Only the hash is kept. Without a key, an admin listener on a non-loopback address
     * serves no dashboard, which a warning says here.
     */
    AdminKey adminKey(Section top, HostAndPort adminListen) throws ConfigException {
        Section admin = top.section("admin");
        Scalar raw = admin == null ? null : admin.scalar("key");
        AdminKey key = raw == null || raw.isNull() ? null : adminKey(admin, raw, adminListen);
        if (key == null && adminListen != null && !adminListen.isLoopback()) {
            warn(admin.pathOf("listen"), admin.lineOf("listen"), adminListen + " is not a loopback address and no"
                    + " admin.key is set: the dashboard is refused (403); /metrics, /health and /ready answer as"
                    + " before");
        }
        return key;
    }

    private AdminKey adminKey(Section admin, Scalar raw, HostAndPort adminListen) throws ConfigException {
        String path = admin.pathOf("key");
        int line = admin.lineOf("key");
        if (raw.token() != JsonToken.VALUE_STRING) {
            throw error(path, line, "must be an environment reference such as ${ADMIN_KEY} or sha256:<hex>, not "
                    + kind(raw));
        }
        if (adminListen == null) {
            throw error(path, line, "needs admin.listen: the dashboard it protects is served there");
        }
        if (EnvExpander.hasReference(raw.text())) {
            String key = expand(raw.text(), path, line);
            if (key.isEmpty()) {
                return null; // ${ADMIN_KEY:-} left it empty: as if absent
            }
            if (!key.equals(key.strip())) {
                throw error(path, line, "the key has leading or trailing whitespace");
            }
            return new AdminKey(KeyConfig.sha256(key));
        }
        if (raw.text().startsWith("sha256:")) {
            String hex = raw.text().substring("sha256:".length());
            if (!SHA256_HEX.matcher(hex).matches()) {
                throw error(path, line, "a sha256: key needs exactly 64 hex digits after 'sha256:'");
            }
            return new AdminKey(java.util.HexFormat.of().parseHex(hex));
        }
        throw error(path, line, "a plain key must come from an environment reference such as ${ADMIN_KEY},"
                + " or be given as sha256:<hex>");
    }

    /** {@code tls} beside {@code listen}: null for a plain listener. */
    TlsConfig tls(Section top) throws ConfigException {
        return tls(top, "tls");
    }

    /** {@code admin.tls}: null for a plain admin listener (or none). */
    TlsConfig adminTls(Section top, HostAndPort adminListen) throws ConfigException {
        Section admin = top.section("admin");
        if (admin == null || admin.field("tls") == null) {
            return null;
        }
        if (adminListen == null) {
            throw error(admin.pathOf("tls"), admin.lineOf("tls"), "needs admin.listen: it is that listener's TLS");
        }
        return tls(admin, "tls");
    }

    /**
     * A {@code tls} block of {@code parent}: {@code cert_file} and {@code key_file} (both needed; PEM files this
     * process can read; relative paths from the working directory) and {@code key_password} (for an encrypted key;
     * empty = none); {@code client_ca_file} (PEM certificates that issue client certificates: the handshake asks for
     * one) and {@code client_auth} ({@code require}, the default, or {@code optional}). Whether the files hold a
     * usable certificate and key is checked by the server when it reads them, at start and on each change.
     */
    private TlsConfig tls(Section parent, String name) throws ConfigException {
        if (parent.field(name) == null) {
            return null;
        }
        String blockPath = parent.pathOf(name);
        Section t = section(parent.field(name).value(), blockPath, parent.lineOf(name));
        t.allowOnly(TLS_FIELDS);
        Path cert = pemFile(t, "cert_file");
        Path key = pemFile(t, "key_file");
        String password = t.string("key_password");
        if (password != null && password.isEmpty()) {
            password = null; // ${TLS_KEY_PASSWORD:-} left empty: an unencrypted key
        }
        Path clientCa = t.field("client_ca_file") == null ? null : pemFile(t, "client_ca_file");
        String clientAuth = t.string("client_auth");
        boolean required = true;
        if (clientAuth != null) {
            if (clientCa == null) {
                throw error(t.pathOf("client_auth"), t.lineOf("client_auth"), "needs client_ca_file: the CA that "
                        + "issues the client certificates");
            }
            required = switch (clientAuth) {
                case "require" -> true;
                case "optional" -> false;
                default -> throw error(t.pathOf("client_auth"), t.lineOf("client_auth"), "must be require or "
                        + "optional, not '" + clientAuth + "'");
            };
        }
        return new TlsConfig(cert, key, password, clientCa, clientCa != null && required, blockPath);
    }

    private Path pemFile(Section t, String name) throws ConfigException {
        String value = t.requiredString(name);
        String path = t.pathOf(name);
        int line = t.lineOf(name);
        Path file;
        try {
            file = Path.of(value).toAbsolutePath();
        } catch (InvalidPathException e) {
            throw error(path, line, "is not a valid file path");
        }
        if (!Files.exists(file)) {
            throw error(path, line, "'" + value + "' does not exist");
        }
        if (!Files.isRegularFile(file)) {
            throw error(path, line, "'" + value + "' is not a file");
        }
        if (!Files.isReadable(file)) {
            throw error(path, line, "'" + value + "' is not readable by this process");
        }
        return file;
    }

    /**
     * {@code http2}: {@code enabled} (h2 offered by ALPN on a TLS listener, default true), {@code cleartext} (h2c
     * with prior knowledge on a plain listener, default false), {@code max_concurrent_streams} (100),
     * {@code max_header_list_size} (16384).
     */
    Http2Config http2(Section top, TlsConfig tls) throws ConfigException {
        Section h = top.section("http2");
        if (h == null) {
            return Http2Config.DEFAULT;
        }
        h.allowOnly(HTTP2_FIELDS);
        Http2Config d = Http2Config.DEFAULT;
        boolean enabled = h.bool("enabled", d.enabled());
        boolean cleartext = h.bool("cleartext", d.cleartext());
        if (cleartext && tls != null) {
            throw error(h.pathOf("cleartext"), h.lineOf("cleartext"), "is for a plain listener; with tls, h2 is"
                    + " offered by ALPN (http2.enabled)");
        }
        if (cleartext && !enabled) {
            throw error(h.pathOf("cleartext"), h.lineOf("cleartext"), "needs http2.enabled: true");
        }
        int streams = (int) h.integer("max_concurrent_streams", d.maxConcurrentStreams(), 1,
                Http2Config.MAX_CONCURRENT_STREAMS);
        int headers = (int) h.integer("max_header_list_size", d.maxHeaderListSize(), Http2Config.MIN_HEADER_LIST_SIZE,
                Http2Config.MAX_HEADER_LIST_SIZE);
        return new Http2Config(enabled, cleartext, streams, headers);
    }

    private static boolean isWildcard(HostAndPort a) {
        return a.host().equals("0.0.0.0") || a.host().equals("::") || a.host().equals("0:0:0:0:0:0:0:0");
    }

    ReloadConfig reload(Section top) throws ConfigException {
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

    ServerConfig server(Section top) throws ConfigException {
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

    UpstreamLimitsConfig upstreamLimits(Section top) throws ConfigException {
        Section u = top.section("upstream_limits");
        if (u == null) {
            return UpstreamLimitsConfig.DEFAULT;
        }
        u.allowOnly(UPSTREAM_LIMIT_FIELDS);
        UpstreamLimitsConfig d = UpstreamLimitsConfig.DEFAULT;
        int errorBody = (int) u.integer("max_error_body_bytes", d.maxErrorBodyBytes(),
                UpstreamLimitsConfig.MIN_ERROR_BODY_BYTES, UpstreamLimitsConfig.MAX_ERROR_BODY_BYTES);
        int sseEvent = (int) u.integer("max_sse_event_bytes", d.maxSseEventBytes(),
                UpstreamLimitsConfig.MIN_SSE_EVENT_BYTES, UpstreamLimitsConfig.MAX_SSE_EVENT_BYTES);
        int collected = (int) u.integer("max_collected_bytes", d.maxCollectedBytes(),
                UpstreamLimitsConfig.MIN_COLLECTED_BYTES, UpstreamLimitsConfig.MAX_COLLECTED_BYTES);
        // Absent, the budget is the default or, when max_collected_bytes was raised past it, that value.
        long budget = u.integer("collected_budget_bytes", Math.max(d.collectedBudgetBytes(), collected),
                UpstreamLimitsConfig.MIN_COLLECTED_BYTES, UpstreamLimitsConfig.MAX_COLLECTED_BUDGET_BYTES);
        if (budget < collected) {
            throw error(u.pathOf("collected_budget_bytes"), u.lineOf("collected_budget_bytes"),
                    "must be at least max_collected_bytes (" + collected + "), or no answer that large could pass");
        }
        return new UpstreamLimitsConfig(errorBody, sseEvent, collected, budget);
    }
}
