package io.modelgateway.core.config;

/**
 * How {@link ConfigReloader} notices edits of the config file. SIGHUP reloads whatever these say, so an
 * operator who turns the watcher off (e.g. on a file system where polling is costly) can still reload.
 *
 * @param watch      poll the file for changes
 * @param intervalMs time between two polls; also bounds how long an edit waits before it applies
 */
public record ReloadConfig(boolean watch, int intervalMs) {

    public static final int MIN_INTERVAL_MS = 100;
    public static final int MAX_INTERVAL_MS = 60_000;
    public static final ReloadConfig DEFAULT = new ReloadConfig(true, 1000);

    public ReloadConfig {
        if (intervalMs < MIN_INTERVAL_MS || intervalMs > MAX_INTERVAL_MS) {
            throw new IllegalArgumentException("interval_ms must be " + MIN_INTERVAL_MS + ".." + MAX_INTERVAL_MS);
        }
    }
}
