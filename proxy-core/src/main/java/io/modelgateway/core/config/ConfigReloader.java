package io.modelgateway.core.config;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Reloads the config file while the gateway runs: when the file changes (polled every
 * {@code reload.interval_ms} while {@code reload.watch} is on) and on SIGHUP (whatever {@code watch} says).
 * A file that loads is handed whole to the consumer (the server's {@code GatewayContext::swap}); one that
 * does not is refused with a WARNING naming the field, and the running config stays. Requests in flight
 * keep the config they started with, so nothing is dropped.
 *
 * <p>Threads: loading does file I/O and hashing, so it runs on this class's own daemon thread
 * ({@code config-reloader}), never on an event loop. A SIGHUP only wakes that thread. {@link #reloadNow()}
 * runs on the caller's thread; one lock serializes it with the watcher, so two loads never interleave and
 * the consumer is called by one thread at a time.
 *
 * <p>Addresses the process has bound ({@code listen}, {@code admin.listen}) cannot move without a restart:
 * a reload that changes them logs a warning and applies everything else with the bound addresses kept.
 * Log lines never contain the file's content, only its name and the loader's messages (which hold no
 * secrets); the reloader keeps a hash of the file, not a copy, for the same reason.
 */
public final class ConfigReloader implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ConfigReloader.class.getName());

    /**
     * How long a changed file must stay the same before it is loaded. Editors save by truncating and
     * writing, or by writing a temp file and renaming; either is over well within this, and loading a
     * half-written file would log a refusal for a change the operator never made.
     */
    static final long SETTLE_MS = 50;
    /** Gives up waiting for a file rewritten continuously (a log written to the wrong path?) and loads it. */
    private static final int MAX_SETTLE_ROUNDS = 20;

    private final Path file;
    private final Map<String, String> env;
    private final String listenOverride;
    private final Consumer<GatewayConfig> apply;
    /** What the process bound at start; every reload keeps these. */
    private final HostAndPort boundListen;
    private final HostAndPort boundAdmin;
    /** The config the listeners started with: its tls, admin.tls and http2 stay until a restart. */
    private final GatewayConfig boundProtocols;

    /** Serializes loads: the watcher thread, SIGHUP (through the watcher) and callers of {@link #reloadNow}. */
    private final Object lock = new Object();
    /** The config last handed to the consumer; written under {@link #lock}, read by the watcher's loop. */
    private volatile GatewayConfig current;
    /** The file as last loaded or refused, so an unchanged file is neither reloaded nor refused again. */
    private Fingerprint seen; // guarded by lock
    /** Polls in a row that could not read the file: a save by rename makes it vanish for an instant. */
    private int unreadablePolls; // guarded by lock

    /** Permits wake the watcher: one per SIGHUP, and one from {@link #close()}. */
    private final Semaphore wakeups = new Semaphore(0);
    private volatile boolean closed;
    /** What else is checked each round (the TLS certificate files), or null. */
    private volatile Runnable alsoEachRound;
    private Thread watcher; // guarded by this
    private Object previousHupHandler; // guarded by this; a sun.misc.SignalHandler once installed
    private volatile boolean hupInstalled;

    /**
     * @param file           the config file the gateway started from
     * @param env            the environment for {@code ${VAR}} references (the same as at start: a running
     *                       process cannot see changes to its own environment)
     * @param listenOverride the {@code --listen} override given at start, or null
     * @param running        the config the server is running, as loaded from {@code file} at start
     * @param apply          receives each new config; called on the reloading thread, must not block long
     */
    public ConfigReloader(Path file, Map<String, String> env, String listenOverride, GatewayConfig running,
            Consumer<GatewayConfig> apply) {
        this.file = Objects.requireNonNull(file, "file");
        this.env = Map.copyOf(env);
        this.listenOverride = listenOverride;
        this.current = Objects.requireNonNull(running, "running");
        this.apply = Objects.requireNonNull(apply, "apply");
        this.boundListen = running.listen();
        this.boundAdmin = running.adminListen();
        this.boundProtocols = running;
    }

    /**
     * Starts watching, and reloads on SIGHUP where the platform has it. The file as it is now is taken to
     * be what {@code running} was loaded from, so call this right after the server starts.
     */
    public void start() {
        startWatcher();
        installHupHandler();
        ReloadConfig r = current.reload();
        LOG.log(Level.INFO, (r.watch() ? "watching " + file + " for changes every " + r.intervalMs() + " ms"
                : "not watching " + file + " (reload.watch is false)")
                + (hupInstalled ? "; SIGHUP reloads it" : ""));
    }

    /** {@link #start()} without the SIGHUP handler: tests run several reloaders in one JVM. */
    synchronized void startWatcher() {
        if (watcher != null || closed) {
            throw new IllegalStateException("already started or closed");
        }
        synchronized (lock) {
            try {
                seen = read().fingerprint();
            } catch (ConfigException e) {
                seen = null; // unreadable now: whatever is there once it can be read counts as a change
            }
        }
        watcher = new Thread(this::watch, "config-reloader");
        watcher.setDaemon(true); // never what keeps the JVM alive
        watcher.start();
    }

    /** The config last applied (the one given at construction until a reload succeeds). */
    public GatewayConfig current() {
        return current;
    }

    /**
     * Runs {@code check} on the watcher thread after each look at the config file (every {@code interval_ms} while
     * {@code reload.watch} is on, and on each SIGHUP): how the server's certificate files are watched with the
     * same rhythm and the same signal. It may block for file I/O; it must not throw.
     */
    public void alsoEachRound(Runnable check) {
        this.alsoEachRound = check;
    }

    /** Whether SIGHUP reaches this reloader (false before {@link #start()} and where signals are missing). */
    public boolean reloadsOnSighup() {
        return hupInstalled;
    }

    /**
     * Loads the file now, changed or not, and applies it if it loads. Blocks for the file I/O; never call
     * it on an event loop.
     *
     * @return true when a new config was handed to the consumer
     */
    public boolean reloadNow() {
        synchronized (lock) {
            Snapshot snapshot;
            try {
                snapshot = read();
            } catch (ConfigException e) {
                refused(e);
                return false;
            }
            unreadablePolls = 0;
            return load(snapshot);
        }
    }

    /** Stops the watcher and gives SIGHUP back to whoever had it. Idempotent; waits briefly for a load in flight. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            uninstallHupHandler();
            t = watcher;
        }
        wakeups.release();
        if (t != null && t != Thread.currentThread()) {
            try {
                // Not interrupted: an interrupt would close the file channel of a read in progress.
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- the watcher thread

    private void watch() {
        while (!closed) {
            ReloadConfig r = current.reload(); // read each round: a reload may change the interval or watch
            boolean woken;
            try {
                if (r.watch()) {
                    woken = wakeups.tryAcquire(r.intervalMs(), TimeUnit.MILLISECONDS);
                } else {
                    wakeups.acquire();
                    woken = true;
                }
            } catch (InterruptedException e) {
                return; // nobody but the JVM interrupts this thread, and then it is going away
            }
            if (closed) {
                return;
            }
            try {
                if (woken) {
                    wakeups.drainPermits(); // several SIGHUPs in a burst need one reload
                    reloadNow();
                } else {
                    pollOnce();
                }
            } catch (RuntimeException e) {
                // A dead watcher would silently end all reloads; log and keep going.
                LOG.log(Level.WARNING, "config reload failed: " + e + "; keeping the running config");
            }
            Runnable extra = alsoEachRound;
            if (extra != null) {
                try {
                    extra.run();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "reload of other files failed: " + e);
                }
            }
        }
    }

    /** One look at the file: loads it if it changed and then held still. Package-private for tests. */
    boolean pollOnce() {
        synchronized (lock) {
            Snapshot now;
            try {
                now = read();
            } catch (ConfigException e) {
                // Quiet the first time: an editor's save by rename removes the file for an instant.
                if (++unreadablePolls == 2) {
                    LOG.log(Level.WARNING, "config watch: " + e.getMessage() + "; keeping the running config");
                }
                return false;
            }
            unreadablePolls = 0;
            if (now.fingerprint().equals(seen)) {
                return false;
            }
            for (int round = 0; round < MAX_SETTLE_ROUNDS; round++) {
                if (!pause(SETTLE_MS)) {
                    return false;
                }
                Snapshot again;
                try {
                    again = read();
                } catch (ConfigException e) {
                    return false; // gone again mid-save: the next poll sees how it ends
                }
                if (again.fingerprint().equals(now.fingerprint())) {
                    break;
                }
                now = again;
            }
            return load(now);
        }
    }

    private boolean pause(long ms) {
        try {
            Thread.sleep(ms);
            return !closed;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    // ---- loading

    /** Loads {@code snapshot} and applies it, or logs why not. Called under {@link #lock}. */
    private boolean load(Snapshot snapshot) {
        seen = snapshot.fingerprint(); // also when refused: the same bytes would only be refused again
        GatewayConfig next;
        try {
            next = ConfigLoader.load(snapshot.content(), file, env, listenOverride);
            if (!next.listen().equals(boundListen)) {
                LOG.log(Level.WARNING, "listen: changed to " + next.listen() + " in " + file
                        + ", which needs a restart; still listening on " + boundListen);
                // Load again as if listen were unchanged: whether development_key is accepted depends on the
                // address actually bound, and a loopback address in the file must not open it on 0.0.0.0.
                next = ConfigLoader.load(snapshot.content(), file, env, boundListen.toString());
            }
            if (!Objects.equals(next.adminListen(), boundAdmin)) {
                LOG.log(Level.WARNING, "admin.listen: changed to " + describe(next.adminListen()) + " in " + file
                        + ", which needs a restart; the admin listener stays " + (boundAdmin == null ? "off"
                        : "on " + boundAdmin));
                next = next.withListeners(next.listen(), boundAdmin);
            }
            if (!Objects.equals(next.tls(), boundProtocols.tls()) || !Objects.equals(next.adminTls(), boundProtocols.adminTls())
                    || !next.http2().equals(boundProtocols.http2())) {
                LOG.log(Level.WARNING, "tls, admin.tls or http2: changed in " + file + ", which needs a restart;"
                        + " the listeners keep what they started with (changed certificate files are reloaded"
                        + " on their own)");
                next = next.withProtocols(boundProtocols.tls(), boundProtocols.adminTls(), boundProtocols.http2());
            }
        } catch (ConfigException e) {
            refused(e);
            return false;
        }
        try {
            apply.accept(next);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "config reload from " + file + " could not be applied ("
                    + e.getClass().getSimpleName() + "); keeping the running config");
            return false;
        }
        current = next;
        LOG.log(Level.INFO, "config reloaded from " + file);
        return true;
    }

    private static String describe(HostAndPort address) {
        return address == null ? "none" : address.toString();
    }

    private static void refused(ConfigException e) {
        LOG.log(Level.WARNING, "config reload refused: " + e.getMessage() + "; keeping the running config");
    }

    /** The file's attributes, then its bytes: a write after the stat shows up as a new mtime next time. */
    private Snapshot read() throws ConfigException {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            byte[] content = Files.readAllBytes(file);
            return new Snapshot(new Fingerprint(attributes.size(), attributes.lastModifiedTime(), sha256(content)),
                    content);
        } catch (NoSuchFileException e) {
            throw new ConfigException(file + ": config file not found");
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot read the config file (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static byte[] sha256(byte[] content) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(content);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * What identifies one version of the file. Size and mtime catch most edits; the content hash catches an
     * edit of the same size within the file system's mtime granularity (a second on some), and a file put
     * back with an old mtime.
     */
    private record Fingerprint(long size, FileTime modified, byte[] sha256) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Fingerprint f && f.size == size && f.modified.equals(modified)
                    && Arrays.equals(f.sha256, sha256);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(sha256);
        }
    }

    /** A fingerprint and the bytes it was taken of; the bytes are dropped once loaded. */
    private record Snapshot(Fingerprint fingerprint, byte[] content) {
    }

    // ---- SIGHUP

    private synchronized void installHupHandler() {
        if (closed) {
            return;
        }
        try {
            Object previous = Hup.install(wakeups::release);
            if (Hup.ignored(previous)) {
                // The process started with SIGHUP ignored (nohup, some supervisors): the JVM then leaves it
                // ignored and never calls a handler, so saying SIGHUP reloads would be a lie.
                LOG.log(Level.INFO, "SIGHUP is ignored in this process (started under nohup?), so it cannot "
                        + "trigger a config reload; edits of " + file + " still do when reload.watch is on");
                return;
            }
            previousHupHandler = previous;
            hupInstalled = true;
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
            // No HUP on this platform (Windows), the JVM reserves it (-Xrs), or jdk.unsupported is left out
            // of a trimmed runtime: editing the file still reloads.
            LOG.log(Level.INFO, "SIGHUP cannot trigger a config reload here (" + e.getClass().getSimpleName()
                    + "); edits of " + file + " still do");
        }
    }

    private synchronized void uninstallHupHandler() {
        if (hupInstalled) {
            hupInstalled = false;
            try {
                Hup.restore(previousHupHandler);
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.DEBUG, "could not restore the previous SIGHUP handler: " + e);
            }
        }
    }

    /**
     * The only place that touches {@code sun.misc.Signal}, in its own class so a runtime without the
     * {@code jdk.unsupported} module fails here, as a catchable {@link LinkageError}, and nowhere else.
     */
    private static final class Hup {
        private static final sun.misc.Signal SIGNAL = new sun.misc.Signal("HUP");

        /** Runs {@code onSignal} on the JVM's signal thread, which must only hand the work on. */
        static Object install(Runnable onSignal) {
            return sun.misc.Signal.handle(SIGNAL, signal -> onSignal.run());
        }

        /** Whether the handler {@link #install} replaced says the signal is ignored (ours then never runs). */
        static boolean ignored(Object previous) {
            return previous == sun.misc.SignalHandler.SIG_IGN;
        }

        static void restore(Object previous) {
            sun.misc.Signal.handle(SIGNAL, (sun.misc.SignalHandler) previous);
        }
    }
}
