package io.modelgateway.core.release;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release tarball as an operator gets it: {@code scripts/package} builds it from the jar Maven just made
 * (this runs in the integration-test phase, after package), the tarball is unpacked into a temporary
 * directory, and its own launcher starts the gateway in an environment with no java on {@code PATH} and no
 * {@code JAVA_HOME}. It must answer on the bundled runtime, reach an https upstream, reload on SIGHUP and
 * exit 0 on SIGTERM; and its systemd unit must pass {@code systemd-analyze verify}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ReleasePackageIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String DEV_KEY = "sk-gateway-dev";
    private static final char[] PASSWORD = "changeit".toCharArray();
    private static final String CHAT = "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    static Path tmp;
    static Path release;
    static String version;

    @BeforeAll
    static void packAndUnpack() throws Exception {
        Path jar = ROOT.resolve("proxy-core/target/model-gateway.jar");
        assertThat(jar).as("the shaded jar of the package phase").isRegularFile();
        Path out = Files.createDirectories(tmp.resolve("out"));
        long t0 = System.nanoTime();
        Run pack = run(Duration.ofMinutes(8), Map.of(), ROOT.resolve("scripts/package").toString(),
                "--jar", jar.toString(), "--out", out.toString());
        assertThat(pack.status).as("scripts/package:\n%s", pack.output).isZero();
        Path tarball = Path.of(pack.lastLine());
        String name = tarball.getFileName().toString();
        assertThat(name).matches("model-gateway-.+-linux-x64\\.tar\\.gz");
        version = name.substring("model-gateway-".length(), name.length() - "-linux-x64.tar.gz".length());
        long packed = System.nanoTime();

        Path unpacked = Files.createDirectories(tmp.resolve("unpacked"));
        Run tar = run(Duration.ofMinutes(2), Map.of(), "tar", "-xzf", tarball.toString(), "-C", unpacked.toString());
        assertThat(tar.status).as("tar:\n%s", tar.output).isZero();
        release = unpacked.resolve("model-gateway-" + version);
        System.out.printf("release: %s, %.1f MiB; unpacked %.1f MiB; packaged in %.1f s, unpacked in %.1f s%n",
                name, Files.size(tarball) / 1048576.0, treeBytes(release) / 1048576.0, (packed - t0) / 1e9,
                (System.nanoTime() - packed) / 1e9);
    }

    @Test
    void tarball_holdsTheLauncherConfigUnitAndATrimmedRuntime() throws Exception {
        assertThat(Files.getPosixFilePermissions(release.resolve("bin/model-gateway")))
                .contains(PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_READ);
        assertThat(release.resolve("bin/model-gateway-simulator")).isExecutable();
        assertThat(release.resolve("lib/model-gateway.jar")).isRegularFile();
        assertThat(release.resolve("conf/gateway.yaml")).hasSameBinaryContentAs(ROOT.resolve("conf/gateway.yaml"));
        assertThat(release.resolve("conf/examples/openai.yaml")).isRegularFile();
        assertThat(release.resolve("systemd/model-gateway.service")).isRegularFile();
        assertThat(Files.readString(release.resolve("INSTALL")))
                .contains("model-gateway-" + version + "-linux-x64.tar.gz").doesNotContain("@VERSION@");

        // jlink's own record of what it linked: what the gateway needs, and no compiler, shell or desktop tools.
        String modules = Files.readAllLines(release.resolve("runtime/release")).stream()
                .filter(l -> l.startsWith("MODULES=")).findFirst().orElseThrow();
        assertThat(modules).contains(" jdk.unsupported", " java.management", " jdk.naming.dns")
                .doesNotContain("jdk.compiler", "jdk.jshell", "java.rmi", "jdk.httpserver", "jdk.jlink");
        assertThat(release.resolve("runtime/bin/javac")).doesNotExist();
    }

    /**
     * Start to first answer, on the shipped config: the figure the README gives. Then SIGTERM, as systemctl
     * stop sends it.
     */
    @Test
    void unpackedRelease_withNoJavaAround_answersOnItsOwnRuntime_andExitsZeroOnSigterm() throws Exception {
        int port = freePort();
        long t0 = System.nanoTime();
        Gateway gw = Gateway.start(Map.of(), "--config", release.resolve("conf/gateway.yaml").toString(),
                "--listen", "127.0.0.1:" + port);
        try {
            HttpResponse<String> first = gw.firstAnswer(port, String.format(CHAT, "sim-chat"));
            long elapsed = System.nanoTime() - t0;
            assertThat(first.statusCode()).as(gw.output()).isEqualTo(200);
            assertThat(first.body()).contains("\"object\":\"chat.completion\"")
                    .containsPattern("\"content\":\"[a-z]+ [^\"]+\"");
            System.out.printf("release: first answer %.0f ms after launching bin/model-gateway%n", elapsed / 1e6);

            // The process the launcher became is the bundled runtime's java.
            Path exe = Files.readSymbolicLink(Path.of("/proc", Long.toString(gw.process.pid()), "exe"));
            assertThat(exe).isEqualTo(release.resolve("runtime/bin/java").toRealPath());
            // That runtime is the launchers' default JDK (25 where it is installed, as on the machines the suite
            // runs on), and the launcher gave it the options of its release: compact object headers from 25 on.
            int major = runtimeMajor();
            if (Files.isExecutable(Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/jlink"))) {
                assertThat(major).as("the bundled runtime's release").isEqualTo(25);
            }
            String cmdline = Files.readString(Path.of("/proc", Long.toString(gw.process.pid()), "cmdline"))
                    .replace('\0', ' ');
            if (major >= 25) {
                assertThat(cmdline).contains(" -XX:+UseCompactObjectHeaders ", " --sun-misc-unsafe-memory-access=allow ");
            } else {
                assertThat(cmdline).doesNotContain("UseCompactObjectHeaders", "unsafe-memory-access");
            }

            assertThat(gw.stop()).as(gw.output()).isZero();
        } finally {
            gw.kill();
        }
    }

    /**
     * The modules a trimmed runtime could miss and only a run shows: TLS to an upstream whose certificate an
     * EC key signed (jdk.crypto.ec on JDK 17), and SIGHUP (sun.misc.Signal, jdk.unsupported) reloading a
     * config that is not watched, so only the signal can have brought the new model in.
     */
    @Test
    void unpackedRelease_reachesAnHttpsUpstream_afterASighupReload() throws Exception {
        Path pki = Files.createDirectories(tmp.resolve("pki"));
        makeCertificates(pki);
        HttpsServer upstream = httpsUpstream(pki);
        Path config = tmp.resolve("tls-gateway.yaml");
        String base = """
                listen: 127.0.0.1:0
                access_log: off
                reload: {watch: false}
                development_key: sk-gateway-dev
                providers:
                  sim: {type: simulator}
                %s
                models:
                  sim-chat:
                    deployments: [{provider: sim}]
                %s
                """;
        Files.writeString(config, String.format(base, "", ""));
        int port = freePort();
        // The gateway trusts the test's certificate authority instead of the bundled list.
        Map<String, String> env = Map.of("GATEWAY_JAVA_OPTS", "-XX:+UseSerialGC -Djavax.net.ssl.trustStore="
                + pki.resolve("ca.p12") + " -Djavax.net.ssl.trustStorePassword=changeit");
        Gateway gw = Gateway.start(env, "--config", config.toString(), "--listen", "127.0.0.1:" + port);
        try {
            assertThat(gw.firstAnswer(port, String.format(CHAT, "sim-chat")).statusCode()).as(gw.output())
                    .isEqualTo(200);
            assertThat(chat(port, "tls-chat").statusCode()).isEqualTo(404);

            Files.writeString(config, String.format(base,
                    "  tls:\n    type: openai\n    base_url: https://127.0.0.1:" + upstream.getAddress().getPort()
                            + "/v1\n    api_key: ${UPSTREAM_KEY:-sk-upstream}\n",
                    "  tls-chat:\n    deployments: [{provider: tls, model: upstream-model}]\n"));
            gw.awaitReady();
            Run hup = run(Duration.ofSeconds(10), Map.of(), "kill", "-HUP", Long.toString(gw.process.pid()));
            assertThat(hup.status).isZero();

            HttpResponse<String> viaTls = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                viaTls = chat(port, "tls-chat");
                if (viaTls.statusCode() != 404) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(viaTls.statusCode()).as("%s\n%s", viaTls.body(), gw.output()).isEqualTo(200);
            assertThat(viaTls.body()).contains("answered over TLS");

            assertThat(gw.stop()).as(gw.output()).isZero();
        } finally {
            gw.kill();
            upstream.stop(0);
        }
    }

    /**
     * TLS and HTTP/2 on the listener with the trimmed runtime: curl gets h2 by ALPN and HTTP/1.1 over HTTPS from the
     * unpacked gateway, its certificate from a test CA.
     */
    @Test
    void unpackedRelease_servesHttpsAndH2ToCurl() throws Exception {
        Path pki = Files.createDirectories(tmp.resolve("listener-pki"));
        io.modelgateway.core.testing.TestCertificates certs =
                io.modelgateway.core.testing.TestCertificates.newAuthority(pki, "release");
        Path[] files = certs.writeServer("release.test");
        Path config = tmp.resolve("https-gateway.yaml");
        Files.writeString(config, """
                listen: 127.0.0.1:0
                access_log: off
                development_key: sk-gateway-dev
                tls: {cert_file: %s, key_file: %s}
                providers:
                  sim: {type: simulator}
                models:
                  sim-chat:
                    deployments: [{provider: sim}]
                """.formatted(files[0], files[1]));
        int port = freePort();
        Gateway gw = Gateway.start(Map.of("GATEWAY_JAVA_OPTS", "-XX:+UseSerialGC"), "--config", config.toString(),
                "--listen", "127.0.0.1:" + port);
        try {
            List<String> curl = List.of("curl", "-sS", "--max-time", "10", "--cacert", certs.caFile().toString(),
                    "-w", "\n%{http_version} %{http_code}", "-H", "authorization: Bearer " + DEV_KEY, "-H",
                    "content-type: application/json", "--data-binary", String.format(CHAT, "sim-chat"));
            io.modelgateway.core.testing.Cli.Result h2 = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                List<String> c = new ArrayList<>(curl);
                c.addAll(List.of("--http2", "https://127.0.0.1:" + port + "/api/v1/chat/completions"));
                h2 = io.modelgateway.core.testing.Cli.run(c, null, 30);
                if (h2.exit() != 7) { // 7: not listening yet
                    break;
                }
                assertThat(gw.process.isAlive()).as("the gateway exited:\n%s", gw.output()).isTrue();
                Thread.sleep(100);
            }
            assertThat(h2.out()).as("%s\n%s", h2, gw.output()).contains("chat.completion").endsWith("\n2 200");
            List<String> c = new ArrayList<>(curl);
            c.addAll(List.of("--http1.1", "https://127.0.0.1:" + port + "/api/v1/chat/completions"));
            assertThat(io.modelgateway.core.testing.Cli.run(c, null, 30).out()).endsWith("\n1.1 200");
            assertThat(gw.output()).contains("gateway listening on https://");
            assertThat(gw.stop()).as(gw.output()).isZero();
        } finally {
            gw.kill();
        }
    }

    @Test
    void systemdUnit_passesSystemdAnalyzeVerify() throws Exception {
        // The unit names /opt/model-gateway, which verify checks for an executable ExecStart: a copy pointing at
        // the unpacked release stands in for the installed one. systemd-analyze reads unit files without a
        // running systemd; scripts/package installed it when it was missing.
        String unit = Files.readString(release.resolve("systemd/model-gateway.service"));
        assertThat(unit).contains(
                "ExecStart=/opt/model-gateway/bin/model-gateway --config /etc/model-gateway/gateway.yaml");
        Path copy = Files.createDirectories(tmp.resolve("unit")).resolve("model-gateway.service");
        Files.writeString(copy, unit.replace("/opt/model-gateway", release.toString()));

        Run verify = run(Duration.ofMinutes(1), Map.of(), "systemd-analyze", "verify", "--man=no", copy.toString());
        assertThat(verify.status).as(verify.output).isZero();
        assertThat(verify.output).as("warnings about the unit").doesNotContain("model-gateway.service");

        // And the sandboxing stays: systemd's exposure score (0 locked down, 10 not at all; the threshold is in
        // tenths) is 1.2 as shipped.
        Run security = run(Duration.ofMinutes(1), Map.of(), "systemd-analyze", "security", "--offline=yes",
                "--threshold=15", copy.toString());
        assertThat(security.status).as(security.output).isZero();
    }

    // ---- the gateway as the launcher runs it ----------------------------------------------------------------

    /** The feature release of the bundled runtime, from the {@code JAVA_VERSION} line of its {@code release} file. */
    private static int runtimeMajor() throws IOException {
        String line = Files.readAllLines(release.resolve("runtime/release")).stream()
                .filter(l -> l.startsWith("JAVA_VERSION=")).findFirst().orElseThrow();
        String v = line.substring(line.indexOf('"') + 1);
        int end = 0;
        while (end < v.length() && Character.isDigit(v.charAt(end))) {
            end++;
        }
        return Integer.parseInt(v.substring(0, end));
    }

    private static final class Gateway {
        static final Pattern READY = Pattern.compile("(?m)^gateway listening on https?://");
        final Process process;
        final StringBuffer log = new StringBuffer();

        private Gateway(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (InputStream in = process.getInputStream()) {
                    byte[] buf = new byte[8192];
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        log.append(new String(buf, 0, n, StandardCharsets.UTF_8));
                    }
                } catch (IOException ignored) {
                    // the process is gone
                }
            }, "release-gateway-output");
            reader.setDaemon(true);
            reader.start();
        }

        /**
         * bin/model-gateway in an environment holding only a PATH with nothing in it (so no java and no
         * JAVA_HOME) and {@code extra}.
         */
        static Gateway start(Map<String, String> extra, String... args) throws IOException {
            Path emptyBin = Files.createDirectories(tmp.resolve("empty-bin"));
            List<String> command = new ArrayList<>();
            // SIGHUP at its default, as systemd starts the service: a suite run under nohup would otherwise hand
            // the gateway SIGHUP ignored, and an ignored signal cannot be handled (the reload test needs it).
            command.add("/usr/bin/env");
            command.add("--default-signal=HUP");
            command.add(release.resolve("bin/model-gateway").toString());
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).directory(tmp.toFile());
            pb.environment().clear();
            pb.environment().put("PATH", emptyBin.toString());
            pb.environment().putAll(extra);
            return new Gateway(pb.start());
        }

        /** Sends the chat request until the port takes it (60 s at most). */
        HttpResponse<String> firstAnswer(int port, String body) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                try {
                    return send(port, body);
                } catch (ConnectException e) {
                    assertThat(process.isAlive()).as("the gateway exited:\n%s", output()).isTrue();
                    assertThat(System.nanoTime()).as("no answer within 60 s:\n%s", output()).isLessThan(deadline);
                    Thread.sleep(10);
                }
            }
        }

        /** SIGTERM, then the exit status. */
        int stop() throws InterruptedException {
            awaitReady();
            process.destroy();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("stopped within 60 s:\n%s", output()).isTrue();
            return process.exitValue();
        }

        /**
         * Until the gateway printed the line that says its signal handlers are in place (it answers a little
         * before), 60 s at most.
         */
        void awaitReady() throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!READY.matcher(log).find()) {
                assertThat(process.isAlive()).as("the gateway exited:\n%s", output()).isTrue();
                assertThat(System.nanoTime()).as("not ready within 60 s:\n%s", output()).isLessThan(deadline);
                Thread.sleep(10);
            }
        }

        void kill() {
            process.destroyForcibly();
        }

        String output() {
            return "gateway output:\n" + log;
        }
    }

    private static HttpResponse<String> chat(int port, String model) throws Exception {
        return send(port, String.format(CHAT, model));
    }

    private static HttpResponse<String> send(int port, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/chat/completions"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + DEV_KEY)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    // ---- an https upstream whose certificate a test CA signed with an EC key --------------------------------

    /**
     * keytool makes an EC certificate authority ({@code ca.p12}, also the gateway's trust store: a key entry's
     * certificate is a trust anchor there) and a server key whose certificate for 127.0.0.1 the authority signs
     * ({@code server.p12}, {@code server.pem}).
     */
    private static void makeCertificates(Path dir) throws Exception {
        keytool(dir, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=release test CA", "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12");
        keytool(dir, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=127.0.0.1", "-validity", "2", "-keystore", "server.p12");
        keytool(dir, "-certreq", "-alias", "server", "-keystore", "server.p12", "-file", "server.csr");
        keytool(dir, "-gencert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-infile", "server.csr",
                "-outfile", "server.pem", "-ext", "san=ip:127.0.0.1", "-ext", "eku=serverAuth", "-validity", "2");
    }

    private static void keytool(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        command.addAll(List.of(args));
        command.addAll(List.of("-storepass", "changeit", "-storetype", "PKCS12"));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("keytool %s:\n%s", args[0], output).isZero();
    }

    private static KeyStore load(Path file) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }

    /**
     * Answers every POST like an OpenAI-style chat completion, over TLS with the server key and the chain of its
     * signed certificate and the authority's.
     */
    private static HttpsServer httpsUpstream(Path pki) throws Exception {
        KeyStore serverKey = load(pki.resolve("server.p12"));
        Certificate signed;
        try (InputStream in = Files.newInputStream(pki.resolve("server.pem"))) {
            signed = CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("server", serverKey.getKey("server", PASSWORD), PASSWORD,
                new Certificate[] {signed, load(pki.resolve("ca.p12")).getCertificate("ca")});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        byte[] answer = ("{\"id\":\"chatcmpl-tls\",\"object\":\"chat.completion\",\"created\":1,"
                + "\"model\":\"upstream-model\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"answered over TLS\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3,\"total_tokens\":5}}")
                .getBytes(StandardCharsets.UTF_8);
        server.createContext("/v1/chat/completions", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        server.start();
        return server;
    }

    // ---- helpers ------------------------------------------------------------------------------------------

    private record Run(int status, String output) {
        String lastLine() {
            String[] lines = output.strip().split("\n");
            return lines[lines.length - 1];
        }
    }

    private static Run run(Duration limit, Map<String, String> env, String... command) throws Exception {
        Path log = Files.createTempFile(tmp, "run", ".log");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " took over " + limit + ":\n" + Files.readString(log));
        }
        return new Run(p.exitValue(), Files.readString(log));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static long treeBytes(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }).sum();
        }
    }
}
