package io.modelgateway.core.config;

import io.modelgateway.core.config.YamlTree.Scalar;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * Reads the optional top-level {@code redis} block (the state the replicas share for rate limits) into a
 * {@link RedisConfig}; absent, the result is null and each replica counts on its own.
 *
 * <p>Neither the URL's text nor a password ever appears in a message: a mistyped URL may hold the password.
 */
final class RedisSection extends ConfigReader {

    private static final List<String> REDIS_FIELDS = List.of("url", "password", "timeout_ms", "key_prefix",
            "fallback", "replicas_hint", "lease_ttl_ms", "batch");
    static final int MAX_KEY_PREFIX_CHARS = 64;

    RedisSection(ConfigReader load) {
        super(load);
    }

    RedisConfig redis(Section top) throws ConfigException {
        Section r = top.section("redis");
        if (r == null) {
            return null;
        }
        r.allowOnly(REDIS_FIELDS);
        String urlPath = r.pathOf("url");
        int urlLine = r.lineOf("url");
        Scalar rawUrl = r.scalar("url");
        if (rawUrl == null) {
            throw r.missing("url");
        }
        String text = expand(rawUrl.text(), urlPath, urlLine).strip();
        if (text.isEmpty()) {
            throw error(urlPath, urlLine, "must not be empty");
        }
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw error(urlPath, urlLine, "is not a valid URL (percent-encode special characters of a password in"
                    + " it, or give the password in redis.password)");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw error(urlPath, urlLine, "must start with redis:// or rediss:// (TLS)");
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw error(urlPath, urlLine, "needs a host (redis://HOST:PORT/DB)");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = uri.getPort() < 0 ? RedisConfig.DEFAULT_PORT : uri.getPort();
        if (port == 0) {
            throw error(urlPath, urlLine, "port must be between 1 and 65535");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw error(urlPath, urlLine, "must not have a query or a fragment");
        }
        if (uri.getRawPath() != null && uri.getRawPath().indexOf('@') >= 0) {
            // An unencoded '/' in a password ends the authority early: what follows reads as the path.
            throw error(urlPath, urlLine, "is not a valid URL (percent-encode special characters of a password in"
                    + " it, or give the password in redis.password)");
        }
        int database = database(uri.getRawPath(), urlPath, urlLine);
        String username = null;
        String password = null;
        if (uri.getRawUserInfo() != null) {
            String info = uri.getRawUserInfo();
            int colon = info.indexOf(':');
            String user;
            String pass;
            try {
                user = colon < 0 ? "" : decode(info.substring(0, colon));
                pass = decode(colon < 0 ? info : info.substring(colon + 1));
            } catch (IllegalArgumentException e) {
                throw error(urlPath, urlLine, "the user or password in it is not properly percent-encoded");
            }
            username = user.isEmpty() ? null : user;
            password = pass.isEmpty() ? null : pass;
            if (password != null && !EnvExpander.hasReference(rawUrl.text())) {
                warn(urlPath, urlLine, "the Redis password is written in the config file; prefer an environment"
                        + " reference such as redis://:${REDIS_PASSWORD}@host:6379/0 or redis.password");
            }
        }
        Scalar rawPassword = r.scalar("password");
        if (rawPassword != null) {
            String value = expand(rawPassword.text(), r.pathOf("password"), r.lineOf("password"));
            if (hasLineBreak(value)) {
                throw error(r.pathOf("password"), r.lineOf("password"), "must not contain line breaks");
            }
            if (!value.isEmpty() && !EnvExpander.hasReference(rawPassword.text())) {
                warn(r.pathOf("password"), r.lineOf("password"), "the Redis password is written in the config file;"
                        + " prefer an environment reference such as ${REDIS_PASSWORD}");
            }
            if (!value.isEmpty()) {
                password = value; // ${REDIS_PASSWORD:-} left empty: no password, or the URL's
            }
        }
        if (username != null && password == null) {
            throw error(urlPath, urlLine, "names a user but no password");
        }
        int timeoutMs = (int) r.integer("timeout_ms", RedisConfig.DEFAULT_TIMEOUT_MS, 1, 60_000);
        String prefix = r.string("key_prefix");
        if (prefix == null) {
            prefix = RedisConfig.DEFAULT_KEY_PREFIX;
        } else if (prefix.length() > MAX_KEY_PREFIX_CHARS || hasWhitespace(prefix)
                || prefix.chars().anyMatch(Character::isISOControl)) {
            throw error(r.pathOf("key_prefix"), r.lineOf("key_prefix"), "must be at most " + MAX_KEY_PREFIX_CHARS
                    + " characters without spaces or control characters");
        }
        RedisConfig.Fallback fallback = fallback(r);
        int replicas = (int) r.integer("replicas_hint", RedisConfig.DEFAULT_REPLICAS_HINT, 1, 1000);
        int leaseTtlMs = (int) r.integer("lease_ttl_ms", RedisConfig.DEFAULT_LEASE_TTL_MS,
                RedisConfig.MIN_LEASE_TTL_MS, 3_600_000);
        if (leaseTtlMs < 4L * timeoutMs) {
            // Leases are renewed every third of their life; a renewal must be able to wait out a slow answer.
            throw error(r.pathOf("lease_ttl_ms"), r.lineOf("lease_ttl_ms"), "must be at least 4 times timeout_ms ("
                    + 4L * timeoutMs + ")");
        }
        int batch = (int) r.integer("batch", RedisConfig.DEFAULT_BATCH, 1, RedisConfig.MAX_BATCH);
        return new RedisConfig(host, port, database, scheme.equals("rediss"), username, password, timeoutMs, prefix,
                fallback, replicas, leaseTtlMs, batch);
    }

    private int database(String rawPath, String path, int line) throws ConfigException {
        if (rawPath == null || rawPath.isEmpty() || rawPath.equals("/")) {
            return 0;
        }
        String digits = rawPath.substring(1);
        if (digits.isEmpty() || digits.length() > 5 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw error(path, line, "the path must be a database number (redis://host:6379/0)");
        }
        return Integer.parseInt(digits);
    }

    private RedisConfig.Fallback fallback(Section r) throws ConfigException {
        Scalar s = r.scalar("fallback");
        if (s == null) {
            return RedisConfig.Fallback.LOCAL;
        }
        String value = expand(s.text(), r.pathOf("fallback"), r.lineOf("fallback"));
        for (RedisConfig.Fallback f : RedisConfig.Fallback.values()) {
            if (f.configName().equals(value)) {
                return f;
            }
        }
        throw error(r.pathOf("fallback"), r.lineOf("fallback"), "must be local, deny or allow (got '" + value + "')");
    }

    private static String decode(String raw) {
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
