package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class RedisConfigTest {
    private static final String SECRET = "s3cr3t-Pa55";
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-test-gateway-0123456789",
            "REDIS_PASSWORD", SECRET, "ODD_PASSWORD", "p@ss/word:1");

    /** The keys block is lines 1-4, so the redis block's first line given here is line 5. */
    private static String config(String... redisLines) {
        return String.join("\n", List.of("keys:", "  - name: default", "    key: ${GATEWAY_KEY}",
                "    models: [\"*\"]")) + "\n" + String.join("\n", redisLines) + "\n";
    }

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private static void assertError(String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class).hasMessage(message)
                .message().doesNotContain(SECRET);
    }

    @Test
    void redis_absent_isNull() throws Exception {
        assertThat(parse(config()).redis()).isNull();
    }

    @Test
    void redis_urlOnly_takesTheDefaults() throws Exception {
        RedisConfig r = parse(config("redis:", "  url: redis://127.0.0.1:6379/0")).redis();

        assertThat(r).isEqualTo(new RedisConfig("127.0.0.1", 6379, 0, false, null, null, 50, "mgw:",
                RedisConfig.Fallback.LOCAL, 2, 10_000));
    }

    @Test
    void redis_everyField_isRead() throws Exception {
        RedisConfig r = parse(config(
                "redis:",
                "  url: rediss://gateway:${REDIS_PASSWORD}@redis.internal:6380/3",
                "  timeout_ms: 80",
                "  key_prefix: \"team1:\"",
                "  fallback: deny",
                "  replicas_hint: 4",
                "  lease_ttl_ms: 5000")).redis();

        assertThat(r.host()).isEqualTo("redis.internal");
        assertThat(r.port()).isEqualTo(6380);
        assertThat(r.database()).isEqualTo(3);
        assertThat(r.tls()).isTrue();
        assertThat(r.username()).isEqualTo("gateway");
        assertThat(r.password()).isEqualTo(SECRET);
        assertThat(r.timeoutMs()).isEqualTo(80);
        assertThat(r.keyPrefix()).isEqualTo("team1:");
        assertThat(r.fallback()).isEqualTo(RedisConfig.Fallback.DENY);
        assertThat(r.replicasHint()).isEqualTo(4);
        assertThat(r.leaseTtlMs()).isEqualTo(5000);
        assertThat(r.toString()).doesNotContain(SECRET).contains("rediss://redis.internal:6380/3");
        assertThat(r.endpoint()).isEqualTo("rediss://redis.internal:6380/3");
    }

    @Test
    void redis_present_loadsWithoutAWarning() throws Exception {
        List<String> warnings = new ArrayList<>();
        RedisConfig r = withWarnings(warnings, () -> parse(config("redis:", "  url: redis://127.0.0.1:6379/0")))
                .redis();

        // The block is in use (the request path asks Redis): nothing to warn an operator about.
        assertThat(r.endpoint()).isEqualTo("redis://127.0.0.1:6379/0");
        assertThat(warnings).isEmpty();
    }

    @Test
    void redis_passwordInUrlFromEnv_isPercentDecodedAndNotWarnedAbout() throws Exception {
        List<String> warnings = new ArrayList<>();
        RedisConfig r = withWarnings(warnings, () -> parse(config("redis:",
                "  url: redis://:${REDIS_PASSWORD}@[::1]/0"))).redis();

        assertThat(r.password()).isEqualTo(SECRET);
        assertThat(r.username()).isNull();
        assertThat(r.host()).isEqualTo("::1");
        assertThat(r.port()).isEqualTo(6379);
        assertThat(r.endpoint()).isEqualTo("redis://[::1]:6379/0");
        assertThat(warnings).isEmpty();
    }

    @Test
    void redis_passwordField_overridesTheUrl_andAUserInfoWithoutColonIsAPassword() throws Exception {
        RedisConfig fromField = parse(config("redis:", "  url: redis://:other@127.0.0.1/0",
                "  password: ${REDIS_PASSWORD}")).redis();
        RedisConfig passwordOnly = parse(config("redis:", "  url: redis://${REDIS_PASSWORD}@127.0.0.1/0")).redis();

        assertThat(fromField.password()).isEqualTo(SECRET);
        assertThat(passwordOnly.password()).isEqualTo(SECRET);
        assertThat(passwordOnly.username()).isNull();
    }

    @Test
    void redis_literalPassword_isWarnedAboutWithoutShowingIt() throws Exception {
        List<String> warnings = new ArrayList<>();
        withWarnings(warnings, () -> parse(config("redis:", "  url: redis://:hunter2@127.0.0.1:6379/0")));

        assertThat(warnings).singleElement().asString()
                .isEqualTo("redis.url: the Redis password is written in the config file; prefer an environment"
                        + " reference such as redis://:${REDIS_PASSWORD}@host:6379/0 or redis.password (test.yaml:6)")
                .doesNotContain("hunter2");
    }

    @Test
    void redis_passwordWithUrlCharactersInUrl_isRefusedWithoutShowingIt() {
        assertError(config("redis:", "  url: redis://:${ODD_PASSWORD}@127.0.0.1:6379/0"),
                "redis.url: is not a valid URL (percent-encode special characters of a password in it, or give"
                        + " the password in redis.password) (test.yaml:6)");
    }

    @Test
    void redis_badFields_areNamedWithTheirLine() {
        assertError(config("redis:", "  timeout_ms: 50"), "redis.url: is required (test.yaml:6)");
        assertError(config("redis:", "  url: http://127.0.0.1:6379"),
                "redis.url: must start with redis:// or rediss:// (TLS) (test.yaml:6)");
        assertError(config("redis:", "  url: redis://127.0.0.1:6379/zero"),
                "redis.url: the path must be a database number (redis://host:6379/0) (test.yaml:6)");
        assertError(config("redis:", "  url: redis://127.0.0.1:6379/0?x=1"),
                "redis.url: must not have a query or a fragment (test.yaml:6)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  fallback: lcoal"),
                "redis.fallback: must be local, deny or allow (got 'lcoal') (test.yaml:7)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  timeout_ms: 0"),
                "redis.timeout_ms: must be between 1 and 60000 (test.yaml:7)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  replicas_hint: 0"),
                "redis.replicas_hint: must be between 1 and 1000 (test.yaml:7)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  key_prefix: a b"),
                "redis.key_prefix: must be at most 64 characters without spaces or control characters (test.yaml:7)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  timeout_ms: 1000", "  lease_ttl_ms: 2000"),
                "redis.lease_ttl_ms: must be at least 4 times timeout_ms (4000) (test.yaml:8)");
        assertError(config("redis:", "  url: redis://127.0.0.1", "  timeout: 50"),
                "redis.timeout: unknown field (did you mean timeout_ms?); allowed: url, password, timeout_ms,"
                        + " key_prefix, fallback, replicas_hint, lease_ttl_ms, batch (test.yaml:7)");
        assertError(config("redis: redis://127.0.0.1"), "redis: must be a mapping of fields, not a string (test.yaml:5)");
        assertError(config("redis:", "  url: redis://user:@127.0.0.1:6379/0"),
                "redis.url: names a user but no password (test.yaml:6)");
    }

    @Test
    void redis_sameServer_comparesWhereTheCountsLive() {
        RedisConfig a = new RedisConfig("h", 6379, 0, false, null, "p", 50, "mgw:", RedisConfig.Fallback.LOCAL, 2,
                10_000);

        assertThat(a.sameServer(new RedisConfig("h", 6379, 0, false, null, "p", 90, "mgw:",
                RedisConfig.Fallback.DENY, 3, 20_000))).isTrue();
        assertThat(a.sameServer(new RedisConfig("h", 6379, 1, false, null, "p", 50, "mgw:",
                RedisConfig.Fallback.LOCAL, 2, 10_000))).isFalse();
        assertThat(a.sameServer(new RedisConfig("h", 6379, 0, false, null, "p", 50, "other:",
                RedisConfig.Fallback.LOCAL, 2, 10_000))).isFalse();
    }

    private interface Parse {
        GatewayConfig run() throws ConfigException;
    }

    private static GatewayConfig withWarnings(List<String> lines, Parse parse) throws ConfigException {
        Logger logger = Logger.getLogger(ConfigLoader.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel() == java.util.logging.Level.WARNING && record.getMessage().startsWith("redis")) {
                    lines.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            return parse.run();
        } finally {
            logger.removeHandler(capture);
        }
    }
}
