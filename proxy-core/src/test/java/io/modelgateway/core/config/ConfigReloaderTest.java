package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reloader on a real temp file: edits reach the consumer, bad edits do not, bound addresses stay.
 * Waits are bounded polls of what the consumer received; the watcher polls every 100 ms here.
 */
class ConfigReloaderTest {

    private static final String GATEWAY_KEY = "sk-reload-test-0123456789";
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", GATEWAY_KEY);
    /** Long enough for a poll, the settle pause and a load on a busy CI machine; only failures wait this long. */
    private static final long WAIT_MS = 10_000;

    @TempDir
    Path dir;
    private Path file;
    private final BlockingQueue<GatewayConfig> applied = new LinkedBlockingQueue<>();
    private final List<String> warnings = new CopyOnWriteArrayList<>();
    private final List<String> infos = new CopyOnWriteArrayList<>();
    private final Logger logger = Logger.getLogger(ConfigReloader.class.getName());
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            (record.getLevel().intValue() >= Level.WARNING.intValue() ? warnings : infos).add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private ConfigReloader reloader;

    @BeforeEach
    void setUp() {
        file = dir.resolve("gateway.yaml");
        logger.addHandler(capture);
        logger.setLevel(Level.ALL);
    }

    @AfterEach
    void tearDown() {
        if (reloader != null) {
            reloader.close();
        }
        logger.removeHandler(capture);
        logger.setLevel(null);
    }

    /**
     * A valid config serving {@code models} (one per line); {@code extra} lines go first, at the top level.
     * The watcher polls every 100 ms unless an extra line sets {@code reload} itself.
     */
    private static String config(String models, String... extra) {
        boolean ownReload = List.of(extra).stream().anyMatch(line -> line.startsWith("reload:"));
        return String.join("\n", extra) + "\n" + (ownReload ? "" : "reload: {interval_ms: 100}\n") + """
                keys:
                  - {name: default, key: '${GATEWAY_KEY}', models: ['*']}
                providers:
                  sim: {type: simulator}
                models:
                """ + models.lines().map(m -> "  " + m + ": {deployments: [{provider: sim}]}\n")
                .reduce("", String::concat);
    }

    private GatewayConfig write(String yaml) throws Exception {
        Files.writeString(file, yaml);
        return ConfigLoader.load(file, ENV, null);
    }

    private ConfigReloader watching(GatewayConfig running) {
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);
        reloader.startWatcher();
        return reloader;
    }

    private GatewayConfig nextApplied() throws InterruptedException {
        GatewayConfig next = applied.poll(WAIT_MS, TimeUnit.MILLISECONDS);
        assertThat(next).as("a config reaches the consumer within %d ms", WAIT_MS).isNotNull();
        return next;
    }

    private void awaitWarning(String start) throws InterruptedException {
        awaitLine(warnings, start);
    }

    private static void awaitLine(List<String> lines, String start) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (lines.stream().noneMatch(w -> w.startsWith(start))) {
            assertThat(System.nanoTime()).as("a log line starting '%s'; got %s", start, lines).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void edit_validChange_consumerGetsTheNewConfig() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        watching(running);

        Files.writeString(file, config("chat-a\nchat-b"));

        GatewayConfig next = nextApplied();
        assertThat(next.models()).containsOnlyKeys("chat-a", "chat-b");
        // Logged on the watcher thread once the consumer has returned.
        awaitLine(infos, "config reloaded from " + file);
        assertThat(reloader.current()).isSameAs(next);
        assertThat(warnings).isEmpty();
    }

    @Test
    void edit_sameSizeAndSameMtime_stillSeenByTheContentHash() throws Exception {
        String noWatch = "reload: {watch: false}"; // this test polls itself, after both steps of the edit
        GatewayConfig running = write(config("chat-a", noWatch));
        FileTime mtime = Files.getLastModifiedTime(file);
        watching(running);

        Files.writeString(file, config("chat-b", noWatch)); // same length as before
        Files.setLastModifiedTime(file, mtime);
        assertThat(Files.size(file)).isEqualTo(config("chat-a", noWatch).length());

        assertThat(reloader.pollOnce()).isTrue();
        assertThat(applied.poll().models()).containsOnlyKeys("chat-b");
        assertThat(reloader.pollOnce()).isFalse();
    }

    @Test
    void edit_invalid_refusedWithTheFieldNamedThenAFixApplies() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        watching(running);

        Files.writeString(file, config("chat-a", "max_body_bytes: 10"));

        awaitWarning("config reload refused: ");
        assertThat(warnings).containsExactly("config reload refused: max_body_bytes: must be between 1024 and"
                + " 2147483647 (" + file + ":1); keeping the running config");
        assertThat(applied).isEmpty();
        assertThat(reloader.current()).isSameAs(running);

        Files.writeString(file, config("chat-a", "max_body_bytes: 2048"));

        assertThat(nextApplied().maxBodyBytes()).isEqualTo(2048);
        assertThat(warnings).hasSize(1); // the refused version was not retried on every poll
    }

    @Test
    void edit_halfWrittenThenComplete_theCompleteFileApplies() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        watching(running);

        String full = config("chat-a\nchat-b\nchat-c");
        Files.writeString(file, full.substring(0, full.indexOf("chat-b") + 4)); // cut inside a model's name
        Files.writeString(file, full);

        // A poll may or may not have caught the half file (refused if so); the last word is the whole file,
        // and once it is in, nothing else arrives.
        GatewayConfig last = nextApplied();
        assertThat(last.models()).containsOnlyKeys("chat-a", "chat-b", "chat-c");
        assertThat(applied.poll(300, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void edit_fileBrieflyMissing_noRefusalAndTheNewFileApplies() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        watching(running);

        Files.delete(file);
        assertThat(reloader.pollOnce()).isFalse();
        Files.writeString(file, config("chat-b"));

        assertThat(nextApplied().models()).containsOnlyKeys("chat-b");
        assertThat(warnings).noneMatch(w -> w.startsWith("config reload refused"));
    }

    @Test
    void edit_listenChanged_restOfTheEditAppliesOnTheBoundAddress() throws Exception {
        GatewayConfig running = write(config("chat-a", "listen: 127.0.0.1:18080"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);

        Files.writeString(file, config("chat-a\nchat-b", "listen: 127.0.0.1:19090"));

        assertThat(reloader.reloadNow()).isTrue();
        GatewayConfig next = applied.poll();
        assertThat(next.listen()).isEqualTo(new HostAndPort("127.0.0.1", 18080));
        assertThat(next.models()).containsOnlyKeys("chat-a", "chat-b");
        assertThat(warnings).containsExactly("listen: changed to 127.0.0.1:19090 in " + file
                + ", which needs a restart; still listening on 127.0.0.1:18080");
    }

    @Test
    void edit_tlsOrHttp2Changed_theListenersKeepWhatTheyStartedWith_restApplies() throws Exception {
        Path crt = Files.writeString(file.resolveSibling("a.crt"), "x");
        Path key = Files.writeString(file.resolveSibling("a.key"), "x");
        GatewayConfig running = write(config("chat-a", "tls: {cert_file: '" + crt + "', key_file: '" + key + "'}"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);

        Files.writeString(file, config("chat-b", "http2: {max_concurrent_streams: 7}"));
        assertThat(reloader.reloadNow()).isTrue();
        GatewayConfig next = applied.poll();
        assertThat(next.tls()).isEqualTo(running.tls());
        assertThat(next.http2()).isEqualTo(Http2Config.DEFAULT);
        assertThat(next.models()).containsOnlyKeys("chat-b");
        assertThat(warnings).containsExactly("tls, admin.tls or http2: changed in " + file + ", which needs a restart;"
                + " the listeners keep what they started with (changed certificate files are reloaded on their own)");
    }

    @Test
    void edit_adminListenChanged_keepsTheBoundAdminAddress() throws Exception {
        GatewayConfig running = write(config("chat-a", "admin: {listen: '127.0.0.1:19091'}"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);

        Files.writeString(file, config("chat-b", "admin: {listen: '127.0.0.1:19092'}"));
        assertThat(reloader.reloadNow()).isTrue();
        GatewayConfig next = applied.poll();
        assertThat(next.adminListen()).isEqualTo(new HostAndPort("127.0.0.1", 19091));
        assertThat(next.models()).containsOnlyKeys("chat-b");
        assertThat(warnings).containsExactly("admin.listen: changed to 127.0.0.1:19092 in " + file
                + ", which needs a restart; the admin listener stays on 127.0.0.1:19091");

        Files.writeString(file, config("chat-c"));
        assertThat(reloader.reloadNow()).isTrue();
        assertThat(applied.poll().adminListen()).isEqualTo(new HostAndPort("127.0.0.1", 19091));
    }

    @Test
    void edit_loopbackListenWithDevelopmentKey_refusedWhileBoundToAllInterfaces() throws Exception {
        GatewayConfig running = write(config("chat-a", "listen: 0.0.0.0:18080"));
        reloader = new ConfigReloader(file, Map.of(), null, running, applied::add);

        // Without keys, development_key would count on 127.0.0.1 — but the socket stays on 0.0.0.0.
        Files.writeString(file, """
                listen: 127.0.0.1:18080
                development_key: sk-dev-local
                providers: {sim: {type: simulator}}
                models: {chat-a: {deployments: [{provider: sim}]}}
                """);

        assertThat(reloader.reloadNow()).isFalse();
        assertThat(applied).isEmpty();
        assertThat(warnings).last().asString().startsWith("config reload refused: keys: no gateway key is configured")
                .contains("not 0.0.0.0:18080").doesNotContain("sk-dev-local");
    }

    @Test
    void reloadNow_unchangedFile_appliesAgain() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);

        assertThat(reloader.reloadNow()).isTrue();
        assertThat(applied.poll().models()).containsOnlyKeys("chat-a");
        assertThat(reloader.current()).isNotSameAs(running);
    }

    @Test
    void reloadNow_missingFile_refusedNamingTheFile() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);
        Files.delete(file);

        assertThat(reloader.reloadNow()).isFalse();
        assertThat(warnings).containsExactly("config reload refused: " + file + ": config file not found;"
                + " keeping the running config");
        assertThat(reloader.current()).isSameAs(running);
    }

    @Test
    void reloadNow_consumerThrows_runningConfigKept() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        reloader = new ConfigReloader(file, ENV, null, running, c -> {
            throw new IllegalStateException("boom");
        });

        assertThat(reloader.reloadNow()).isFalse();
        assertThat(reloader.current()).isSameAs(running);
        assertThat(warnings).containsExactly("config reload from " + file
                + " could not be applied (IllegalStateException); keeping the running config");
    }

    @Test
    void watchOff_editsWaitForAnExplicitReload() throws Exception {
        GatewayConfig running = write(config("chat-a", "reload: {watch: false}"));
        watching(running);

        Files.writeString(file, config("chat-b", "reload: {watch: false}"));
        assertThat(applied.poll(400, TimeUnit.MILLISECONDS)).isNull();

        assertThat(reloader.reloadNow()).isTrue();
        assertThat(applied.poll().models()).containsOnlyKeys("chat-b");
    }

    @Test
    void close_stopsWatching() throws Exception {
        GatewayConfig running = write(config("chat-a"));
        watching(running).close();

        Files.writeString(file, config("chat-b"));
        assertThat(applied.poll(400, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void sighup_reloadsEvenWithWatchOff() throws Exception {
        assumeTrue(!System.getProperty("os.name").startsWith("Windows"), "no SIGHUP on Windows");
        String noWatch = "reload: {watch: false}";
        GatewayConfig running = write(config("chat-a", noWatch));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);
        reloader.start();
        // Only signal once our handler is in: the default action of SIGHUP ends the JVM.
        assumeTrue(reloader.reloadsOnSighup(), "this JVM lets no handler take SIGHUP");

        Files.writeString(file, config("chat-b", noWatch));
        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(ProcessHandle.current().pid())).start();
        assertThat(kill.waitFor(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();

        assertThat(nextApplied().models()).containsOnlyKeys("chat-b");
        reloader.close(); // gives SIGHUP back before the next test
        assertThat(reloader.reloadsOnSighup()).isFalse();
    }

    @Test
    void logLines_neverHoldTheFileContent() throws Exception {
        String secret = "sk-literal-SECRET-in-file";
        GatewayConfig running = write(config("chat-a"));
        reloader = new ConfigReloader(file, ENV, null, running, applied::add);
        Files.writeString(file, config("chat-a", "development_key: " + secret, "listen: [oops"),
                StandardCharsets.UTF_8);

        assertThat(reloader.reloadNow()).isFalse();
        assertThat(warnings).singleElement().asString().startsWith("config reload refused: yaml: invalid YAML")
                .doesNotContain(secret);
    }
}
