package io.modelgateway.core.config;

/**
 * When a deployment of a provider is taken out of rotation: after {@code failures} failures in a row it gets
 * no traffic for {@code seconds}, then one probe request at a time until one succeeds.
 *
 * <p>Set per provider, not per model: a deployment is a provider and an upstream model, its health is shared by
 * every configured model routed to it, and how fast an upstream recovers (its rate-limit window, its restarts) is
 * a property of the provider, not of the name callers use. One place also means one answer to "when does this
 * deployment come back", whichever model asked.
 *
 * @param failures consecutive failures that open the cool-down; 0 means never ({@link #OFF})
 * @param seconds  how long the deployment is skipped before a probe may go through
 */
public record CooldownConfig(int failures, int seconds) {
    public static final int MAX_FAILURES = 1000;
    public static final int MAX_SECONDS = 3600;
    public static final CooldownConfig DEFAULT = new CooldownConfig(3, 30);
    /** Deployments of this provider are never skipped. */
    public static final CooldownConfig OFF = new CooldownConfig(0, 0);

    public CooldownConfig {
        if (failures < 0 || failures > MAX_FAILURES || seconds < 0 || seconds > MAX_SECONDS
                || (failures == 0) != (seconds == 0)) {
            throw new IllegalArgumentException("failures 1.." + MAX_FAILURES + " and seconds 1.." + MAX_SECONDS
                    + ", or both 0 (off)");
        }
    }

    public boolean enabled() {
        return failures > 0;
    }

    public long nanos() {
        return seconds * 1_000_000_000L;
    }
}
