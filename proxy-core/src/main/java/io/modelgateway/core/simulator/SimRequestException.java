package io.modelgateway.core.simulator;

/**
 * A request the simulator refuses, thrown while reading it and turned into the endpoint style's
 * error body by {@link SimulatorEngine}. Carries no stack trace: it is control flow, not a bug.
 */
final class SimRequestException extends RuntimeException {

    private final int status;
    private final String param;
    private final String code;

    SimRequestException(int status, String message, String param, String code) {
        super(message, null, false, false);
        this.status = status;
        this.param = param;
        this.code = code;
    }

    static SimRequestException invalid(String message, String param, String code) {
        return new SimRequestException(400, message, param, code);
    }

    int status() {
        return status;
    }

    /** OpenAI {@code param}; null when no single field is at fault. */
    String param() {
        return param;
    }

    /** OpenAI {@code code}; null lets the status decide. */
    String code() {
        return code;
    }
}
