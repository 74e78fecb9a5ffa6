package io.modelgateway.core.exchange;

/** How an exchange ended, as the access log and metrics report it. */
public enum Outcome {
    /** The whole answer reached the client (any status the gateway or upstream chose to answer with). */
    DONE("done"),
    /** The client went away before the answer was complete. */
    CANCELLED("cancelled"),
    /** The upstream failed (refused, lost, garbage, timed out) and the caller got the gateway's error for it. */
    UPSTREAM_ERROR("upstream_error"),
    /** Refused by a limit (429). */
    LIMITED("limited"),
    /** Answered with an error by the gateway itself before any upstream was asked (auth, validation, 404…). */
    REJECTED("rejected");

    private final String label;

    Outcome(String label) {
        this.label = label;
    }

    /** The lower-case name used in logs and metric labels. */
    public String label() {
        return label;
    }
}
