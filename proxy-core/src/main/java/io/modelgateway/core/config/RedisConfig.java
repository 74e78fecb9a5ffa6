package io.modelgateway.core.config;

import java.util.Objects;

/**
 * The optional top-level {@code redis} block: where the rate-limit state shared by the gateway's replicas is kept,
 * and what a replica does while that Redis cannot answer. Absent (null in {@link GatewayConfig#redis()}), every
 * replica keeps its own counts.
 *
 * @param host         the Redis host (a name or an address; brackets of an IPv6 literal removed)
 * @param port         its port
 * @param database     the logical database ({@code SELECT}), the path of the URL
 * @param tls          {@code rediss://}: TLS, with the JVM's trusted certificates and host name verification
 * @param username     the ACL user of {@code AUTH}, or null (the default user)
 * @param password     the password of {@code AUTH}, or null for none; never printed
 * @param timeoutMs    how long a limit check waits for Redis before the fallback decides it
 * @param keyPrefix    prepended to every Redis key the gateway writes
 * @param fallback     what decides while Redis cannot answer
 * @param replicasHint how many replicas share the limits: with {@link Fallback#LOCAL} each enforces
 *                     {@code limit / replicasHint} on its own while Redis is away
 * @param leaseTtlMs   how long a concurrency slot outlives the replica that held it: slots are leases renewed
 *                     while their exchange runs, so a replica that dies frees its slots within this time
 * @param batch        the most requests' worth one check takes from the shared counts at once, used by the
 *                     replica's next requests without asking Redis; taken only while every limit of the request
 *                     stays far from reached (see {@code SharedLimiter}); 1 checks every request in Redis
 */
public record RedisConfig(String host, int port, int database, boolean tls, String username, String password,
        int timeoutMs, String keyPrefix, Fallback fallback, int replicasHint, int leaseTtlMs, int batch) {

    public static final int DEFAULT_PORT = 6379;
    public static final int DEFAULT_TIMEOUT_MS = 50;
    public static final String DEFAULT_KEY_PREFIX = "mgw:";
    public static final int DEFAULT_REPLICAS_HINT = 2;
    public static final int DEFAULT_LEASE_TTL_MS = 10_000;
    public static final int MIN_LEASE_TTL_MS = 1_000;
    public static final int DEFAULT_BATCH = 64;
    public static final int MAX_BATCH = 1_024;

    /** What a limit check does while Redis cannot answer (down, slow past {@code timeout_ms}, refusing us). */
    public enum Fallback {
        /** Each replica enforces {@code limit / replicas_hint} with its own counts. */
        LOCAL,
        /** Requests that a limit applies to are refused (429). */
        DENY,
        /** Requests are admitted unchecked. */
        ALLOW;

        public String configName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public RedisConfig {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        Objects.requireNonNull(fallback, "fallback");
        if (port < 1 || port > 65535 || database < 0 || timeoutMs < 1 || replicasHint < 1
                || leaseTtlMs < MIN_LEASE_TTL_MS || batch < 1 || batch > MAX_BATCH) {
            throw new IllegalArgumentException("redis settings out of range");
        }
    }

    /** The settings with the default {@code batch}. */
    public RedisConfig(String host, int port, int database, boolean tls, String username, String password,
            int timeoutMs, String keyPrefix, Fallback fallback, int replicasHint, int leaseTtlMs) {
        this(host, port, database, tls, username, password, timeoutMs, keyPrefix, fallback, replicasHint, leaseTtlMs,
                DEFAULT_BATCH);
    }

    /** These settings with another {@code batch}. */
    public RedisConfig withBatch(int batch) {
        return new RedisConfig(host, port, database, tls, username, password, timeoutMs, keyPrefix, fallback,
                replicasHint, leaseTtlMs, batch);
    }

    /**
     * Whether {@code other} talks to another Redis, or to the same one as someone else, or writes other keys:
     * then the connections are made anew. The other settings apply to the next check.
     */
    public boolean sameServer(RedisConfig other) {
        return other != null && host.equals(other.host) && port == other.port && database == other.database
                && tls == other.tls && Objects.equals(username, other.username)
                && Objects.equals(password, other.password) && keyPrefix.equals(other.keyPrefix);
    }

    /** For logs and errors: scheme, host, port and database; never a user or password. */
    public String endpoint() {
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return (tls ? "rediss://" : "redis://") + h + ":" + port + "/" + database;
    }

    @Override
    public String toString() {
        return "RedisConfig[" + endpoint() + (password == null ? "" : ", password set") + ", timeout_ms=" + timeoutMs
                + ", key_prefix=" + keyPrefix + ", fallback=" + fallback.configName() + ", replicas_hint="
                + replicasHint + ", lease_ttl_ms=" + leaseTtlMs + ", batch=" + batch + "]";
    }
}
