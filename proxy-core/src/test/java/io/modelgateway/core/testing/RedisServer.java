package io.modelgateway.core.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} (Debian's package) for the tests of the shared limits: installed by
 * {@code scripts/redis-server install} when missing (as root; CI machines start without it), started on a free
 * loopback port with no persistence, stopped (or killed, to play a crash) by its pid. Start and stop are bounded;
 * a server that does not answer {@code PING} in time fails the test with its log.
 *
 * <p>{@link #command} talks RESP over a plain blocking socket, for what a test does to Redis behind the gateway's
 * back ({@code FLUSHALL}, {@code CLIENT PAUSE}, reading a key).
 */
public final class RedisServer implements AutoCloseable {
    private static final long START_MILLIS = 15_000;
    private static final long INSTALL_MINUTES = 10;

    private final Path dir;
    private final int port;
    private final List<String> extra;
    private Process process;

    private RedisServer(Path dir, int port, List<String> extra) {
        this.dir = dir;
        this.port = port;
        this.extra = extra;
    }

    /**
     * Installs redis-server if needed and starts one on a free port of 127.0.0.1.
     *
     * @param extra more settings, e.g. {@code --requirepass}, {@code secret}
     */
    public static RedisServer start(String... extra) throws IOException, InterruptedException {
        String bin = binary();
        Path dir = Files.createTempDirectory("redis-test");
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            RedisServer server = new RedisServer(dir, freePort(), List.of(extra));
            try {
                server.launch(bin);
                return server;
            } catch (IOException e) {
                last = e; // another process took the port between our probe and Redis's bind: try another one
            }
        }
        throw last;
    }

    /** A loopback port nothing listens on (for a Redis that is never there). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String binary() throws IOException, InterruptedException {
        for (String candidate : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        Path script = repositoryRoot().resolve("scripts/redis-server");
        Process install = new ProcessBuilder(script.toString(), "install").redirectErrorStream(false)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        byte[] out = install.getInputStream().readAllBytes();
        if (!install.waitFor(INSTALL_MINUTES, TimeUnit.MINUTES)) {
            install.destroyForcibly();
            throw new IllegalStateException("installing redis-server took more than " + INSTALL_MINUTES + " minutes");
        }
        String path = new String(out, StandardCharsets.UTF_8).strip();
        if (install.exitValue() != 0 || path.isEmpty()) {
            throw new IllegalStateException("redis-server is missing and scripts/redis-server install failed (exit "
                    + install.exitValue() + "); install it: apt-get install -y redis-server");
        }
        return path;
    }

    private static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("scripts/redis-server"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("cannot find scripts/redis-server above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    private void launch(String bin) throws IOException, InterruptedException {
        Path log = dir.resolve("redis-" + port + ".log");
        List<String> command = new ArrayList<>(List.of(bin, "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir.toString(),
                "--logfile", log.toString()));
        command.addAll(extra);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis-" + port + ".out").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_MILLIS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("redis-server exited at start: " + tail(log));
            }
            try {
                Object pong = command("PING");
                if ("PONG".equals(pong) || String.valueOf(pong).startsWith("NOAUTH")) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(20);
        }
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        throw new IllegalStateException("redis-server did not answer PING within " + START_MILLIS + " ms: "
                + tail(log));
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    public boolean running() {
        return process != null && process.isAlive();
    }

    /**
     * SIGSTOP: the server keeps its connections open and answers nothing, as a Redis stuck on a slow disk or a
     * long script would, until {@link #thaw}.
     */
    public void freeze() throws IOException, InterruptedException {
        signal("-STOP");
    }

    /** SIGCONT: a frozen server answers again, everything it was sent meanwhile in order. */
    public void thaw() throws IOException, InterruptedException {
        if (running()) {
            signal("-CONT");
        }
    }

    private void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill " + signal + " " + process.pid() + " failed");
        }
    }

    /** SIGKILL, as a crash: no goodbye to the clients. Waits until it is gone. */
    public void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts it again on the same port (after {@link #kill}); empty, as it keeps nothing on disk. */
    public void restart() throws IOException, InterruptedException {
        kill();
        launch(binary());
    }

    /** SIGTERM, then SIGKILL after 5 s. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }

    /**
     * Sends one command on a new connection and returns the reply: a String (simple or bulk string, or
     * {@code "ERR ..."} for an error), a Long, null, or a List of those.
     */
    public Object command(String... parts) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            req.write(("*" + parts.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String p : parts) {
                byte[] b = p.getBytes(StandardCharsets.UTF_8);
                req.write(("$" + b.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
                req.write(b);
                req.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            }
            out.write(req.toByteArray());
            out.flush();
            return read(new BufferedInputStream(s.getInputStream()));
        }
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
            case '-':
                return line;
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(n);
                line(in);
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new UncheckedIOException(new IOException("not a RESP reply: " + (char) type + line));
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed mid-reply");
            }
            b.write(c);
        }
        in.read(); // \n
        return b.toString(StandardCharsets.UTF_8);
    }
}
