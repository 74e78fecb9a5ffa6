package io.modelgateway.core.config;

import java.util.Locale;

/** How a model's deployments share its traffic; {@code strategy:} in the config, in lower case. */
public enum RoutingStrategy {
    /** Random, in proportion to the deployments' weights. */
    WEIGHTED,
    /**
     * The deployment with the fewest exchanges in flight through this gateway; ties broken by weight. Follows
     * load as it is (slow streams pile up where the upstream is slow) instead of as configured.
     */
    LEAST_INFLIGHT;

    /** The name used in the config file. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The strategy for a config name; null when unknown. */
    public static RoutingStrategy fromConfigName(String name) {
        for (RoutingStrategy s : values()) {
            if (s.configName().equals(name)) {
                return s;
            }
        }
        return null;
    }
}
