package io.modelgateway.core.config;

/**
 * The config cannot be used. The message is the whole story for the operator — it starts with the
 * field path (or the file name when the file itself is the problem) and names file and line — so
 * no stack trace is recorded.
 */
public final class ConfigException extends Exception {

    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message, null, false, false);
    }
}
