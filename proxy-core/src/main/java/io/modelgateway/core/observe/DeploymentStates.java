package io.modelgateway.core.observe;

import java.util.List;

/**
 * What the dashboard shows of the deployments' health. Defined here, implemented by the routing (which
 * {@code observe} does not import) and handed to the {@link AdminServer} by the bootstrap.
 */
@FunctionalInterface
public interface DeploymentStates {
    DeploymentStates NONE = now -> List.of();

    /**
     * Every deployment of the config in use, once each (two models routed to the same provider and upstream model
     * share one), at {@code nowNanos} ({@link System#nanoTime()}). Called once a second from the admin loop: it
     * must be thread-safe and must not block.
     */
    List<State> states(long nowNanos);

    /** Where a deployment stands in the rotation. */
    enum Rotation {
        /** Takes traffic. */
        IN_ROTATION("in rotation"),
        /** Failed too often in a row: no traffic until its cool-down ends. */
        COOLING_DOWN("cooling down"),
        /** The cool-down is over: one request at a time probes it, and the first answer brings it back. */
        PROBING("probing");

        private final String label;

        Rotation(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /**
     * One deployment.
     *
     * @param provider            the provider's configured name
     * @param upstreamModel       the model name sent upstream
     * @param models              the configured models routed to it
     * @param rotation            in rotation, cooling down or probing
     * @param inFlight            exchanges in flight to it
     * @param consecutiveFailures failures since its last success
     * @param failures            failures since the gateway started
     * @param lastFailureAgoMillis how long ago it last failed; -1 when it never did
     */
    record State(String provider, String upstreamModel, List<String> models, Rotation rotation, int inFlight,
            int consecutiveFailures, long failures, long lastFailureAgoMillis) {
    }
}
