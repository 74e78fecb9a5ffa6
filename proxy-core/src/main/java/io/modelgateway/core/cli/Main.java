package io.modelgateway.core.cli;

import io.modelgateway.core.config.ConfigException;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.ConfigReloader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.server.GatewayServer;
import io.modelgateway.core.simulator.SimulatorServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;

/**
 * Command line: {@code gateway [--config FILE] [--listen HOST:PORT]} runs the gateway in the foreground,
 * reloading the config file when it changes or on SIGHUP; {@code hash-key} prints the {@code sha256:} form
 * of a gateway key; {@code simulator [--listen HOST:PORT] …} runs the standalone simulator. SIGTERM and
 * Ctrl-C stop cleanly.
 */
public final class Main {
    static final String USAGE = """
            usage: gateway [--config FILE] [--listen HOST:PORT]
                     runs the gateway; FILE (default conf/gateway.yaml) is reloaded when it changes
                     (see reload: in the file) and on SIGHUP. --listen replaces listen: from the file.
                   gateway hash-key [--key-env VAR]
                     prints sha256:<hex> of a gateway key read from stdin (one line) or from VAR,
                     for the key: field of the config
                   simulator [--listen HOST:PORT] [--api-key KEY] [--ttft-ms N] [--tps N]
                             [--output-tokens N] [--fault SPEC]""";

    private Main() {
    }

    /**
     * Netty's leak detector, left at its default level, records a stack trace for one buffer in 128; profiled under
     * load that was about 2 % of the gateway's CPU. Unless the JVM was started with a leak detection level or a
     * sampling interval of its own, one buffer in this many is tracked instead: a leak on any path a request takes
     * is still reported within seconds under load, at an eighth of the cost. (The tests run at PARANOID, every
     * buffer tracked; {@code scripts/soak} names its level.) Must run before any Netty buffer class is loaded.
     */
    static final int LEAK_SAMPLING_INTERVAL = 1024;

    public static void leakSamplingDefault() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null
                && System.getProperty("io.netty.leakDetection.samplingInterval") == null) {
            System.setProperty("io.netty.leakDetection.samplingInterval", Integer.toString(LEAK_SAMPLING_INTERVAL));
        }
    }

    public static void main(String[] args) throws Exception {
        leakSamplingDefault();
        if (args.length > 0 && args[0].equals("hash-key")) {
            System.exit(HashKeyCommand.run(Arrays.copyOfRange(args, 1, args.length), System.in, System.out,
                    System.err, System.getenv()));
            return;
        }
        if (args.length > 0 && args[0].equals("simulator")) {
            SimulatorServer.main(Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("gateway")) {
            args = Arrays.copyOfRange(args, 1, args.length);
        }
        String config = "conf/gateway.yaml";
        String listen = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--config" -> config = value(args, ++i, "--config");
                case "--listen" -> listen = value(args, ++i, "--listen");
                case "-h", "--help" -> {
                    System.out.println(USAGE);
                    return;
                }
                default -> usage("unknown argument: " + args[i]);
            }
        }
        Path file = Path.of(config);
        if (!Files.isRegularFile(file)) {
            usage("config file not found: " + file.toAbsolutePath());
        }
        GatewayConfig cfg;
        try {
            cfg = ConfigLoader.load(file, System.getenv(), listen);
        } catch (ConfigException e) {
            System.err.println("gateway: invalid config: " + e.getMessage());
            System.exit(2);
            return;
        }
        GatewayServer server;
        try {
            server = GatewayServer.start(cfg);
        } catch (IllegalStateException e) {
            // TLS files that make no certificate and key (the message names the block and the files, no key material)
            System.err.println("gateway: cannot start: " + e.getMessage());
            System.exit(2);
            return;
        }
        // Started after the bind, so the file it fingerprints is the one the running config came from.
        // The same --listen override applies to every reload, as it did at start.
        ConfigReloader reloader = new ConfigReloader(file, System.getenv(), listen, cfg, server.context()::swap);
        reloader.alsoEachRound(server::checkCertificates); // certificate rotation: same rhythm, same SIGHUP
        reloader.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            reloader.close(); // first, so no reload lands in a server that is closing
            server.close();
            stopped.countDown();
        }, "gateway-shutdown"));
        exitZeroOnSigterm();
        // Last: whoever waits for this line may send SIGHUP or SIGTERM at once, and both are handled by now.
        System.out.println("gateway listening on " + server.scheme() + "://" + server.hostPort() + " (config " + file + ")");
        stopped.await();
    }

    /**
     * Makes SIGTERM end the process with status 0 instead of the JVM's 143 (128 + 15): it is how a service
     * manager stops a healthy gateway, and systemd counts 143 as a failure. {@code System.exit} runs the
     * shutdown hook above, so the stop drains exactly as before. Where the handler cannot be installed (a JVM
     * run with {@code -Xrs}, a runtime without {@code jdk.unsupported}) the JVM's own handling stays.
     */
    private static void exitZeroOnSigterm() {
        try {
            Term.install();
        } catch (IllegalArgumentException | UnsupportedOperationException | LinkageError e) {
            System.err.println("gateway: SIGTERM will exit with status 143 (" + e + ")");
        }
    }

    /** The only use of {@code sun.misc.Signal} here, in its own class so that its absence is a catchable error. */
    private static final class Term {
        static void install() {
            // Runs on the JVM's signal thread, which may block in exit while the hooks drain, as the JVM's own
            // handler does.
            sun.misc.Signal.handle(new sun.misc.Signal("TERM"), signal -> System.exit(0));
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            usage(flag + " needs a value");
        }
        return args[i];
    }

    private static void usage(String message) {
        System.err.println("gateway: " + message + " (try --help)");
        System.exit(2);
    }
}
