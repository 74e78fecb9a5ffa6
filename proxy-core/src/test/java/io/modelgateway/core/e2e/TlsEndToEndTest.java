package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.Cli;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.TestGateway;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the API listener, checked with real clients: curl (HTTP/1.1 and h2 by ALPN, trusting the test CA with
 * {@code --cacert}) and openssl's s_client (protocol versions, ALPN, resumption).
 */
class TlsEndToEndTest {
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
    static final String CHAT_STREAM = "{\"model\":\"sim-chat\",\"max_tokens\":8,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        certs = TestCertificates.newAuthority(dir, "TLS e2e");
        Path[] files = certs.writeServer("gateway.test");
        gw = TestGateway.start(TestCertificates.tlsBlock(files, "") + TestGateway.simulatorConfig());
    }

    @AfterAll
    static void stop() {
        if (gw != null) {
            gw.close();
        }
    }

    static List<String> curl(String... args) {
        List<String> c = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "--cacert",
                certs.caFile().toString()));
        c.addAll(List.of(args));
        return c;
    }

    static Cli.Result curlChat(String protocol, String body) throws Exception {
        return Cli.run(curl(protocol, "-w", "\n%{http_version} %{http_code}", "-H", "authorization: Bearer "
                + TestGateway.KEY, "-H", "content-type: application/json", "--data-binary", "@-",
                gw.url("/api/v1/chat/completions")), body, 30);
    }

    @Test
    void curlOverHttps11_trustsTheTestCa_andGetsTheAnswer() throws Exception {
        Cli.Result r = curlChat("--http1.1", CHAT);
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out()).contains("\"object\":\"chat.completion\"").endsWith("\n1.1 200");
    }

    @Test
    void curlHttp2_negotiatesH2ByAlpn_andGetsTheSameSseAsHttp11() throws Exception {
        Cli.Result h2 = curlChat("--http2", CHAT_STREAM);
        Cli.Result h1 = curlChat("--http1.1", CHAT_STREAM);
        assertThat(h2.exit()).as(h2.toString()).isZero();
        assertThat(h2.out()).endsWith("\n2 200");
        assertThat(h1.out()).endsWith("\n1.1 200");
        String h2Body = h2.out().substring(0, h2.out().lastIndexOf('\n'));
        String h1Body = h1.out().substring(0, h1.out().lastIndexOf('\n'));
        assertThat(h2Body).startsWith("data: {").endsWith("data: [DONE]\n\n");
        // The same grammar event for event; only the ids and timestamps differ between two answers.
        assertThat(normalize(h2Body)).isEqualTo(normalize(h1Body));
    }

    private static String normalize(String sse) {
        return sse.replaceAll("\"id\":\"[^\"]*\"", "\"id\":\"X\"").replaceAll("\"created\":\\d+", "\"created\":0");
    }

    @Test
    void errorsAreTheSameOverH2_aWrongKeyIs401InTheCallersStyle() throws Exception {
        Cli.Result r = Cli.run(curl("--http2", "-w", "\n%{http_version} %{http_code}", "-H",
                "authorization: Bearer sk-wrong", "-H", "content-type: application/json", "--data-binary", CHAT,
                gw.url("/api/v1/chat/completions")), null, 30);
        assertThat(r.out()).contains("\"error\":{").contains("invalid_api_key").endsWith("\n2 401");
    }

    @Test
    void curlWithoutTheCa_refusesTheCertificate() throws Exception {
        Cli.Result r = Cli.run(List.of("curl", "-sS", "--max-time", "20", gw.url("/health")), null, 30);
        assertThat(r.exit()).as(r.toString()).isEqualTo(60); // peer certificate cannot be authenticated
    }

    @Test
    void opensslSClient_tls13And12_alpnH2_andSessionResumption() throws Exception {
        String connect = "127.0.0.1:" + gw.port();
        Cli.Result t13 = Cli.run(List.of("openssl", "s_client", "-connect", connect, "-CAfile",
                certs.caFile().toString(), "-alpn", "h2,http/1.1", "-tls1_3"), "", 20);
        assertThat(t13.out()).as(t13.toString()).contains("New, TLSv1.3").contains("ALPN protocol: h2")
                .contains("Verify return code: 0 (ok)");
        Cli.Result t12 = Cli.run(List.of("openssl", "s_client", "-connect", connect, "-CAfile",
                certs.caFile().toString(), "-alpn", "http/1.1", "-tls1_2"), "", 20);
        assertThat(t12.out()).as(t12.toString()).contains("New, TLSv1.2").contains("ALPN protocol: http/1.1");
        Cli.Result t11 = Cli.run(List.of("openssl", "s_client", "-connect", connect, "-tls1_1", "-brief"), "", 20);
        assertThat(t11.exit()).as("TLS 1.1 is refused").isNotZero();

        // Resumption: the session from a first connection is offered on a second, which reuses it.
        Path session = dir.resolve("session.pem");
        Cli.Result first = Cli.run(List.of("openssl", "s_client", "-connect", connect, "-CAfile",
                certs.caFile().toString(), "-tls1_2", "-sess_out", session.toString()), "", 20);
        assertThat(first.out()).contains("New, TLSv1.2");
        Cli.Result second = Cli.run(List.of("openssl", "s_client", "-connect", connect, "-CAfile",
                certs.caFile().toString(), "-tls1_2", "-sess_in", session.toString()), "", 20);
        assertThat(second.out()).as(second.toString()).contains("Reused, TLSv1.2");
        assertThat(Files.size(session)).isPositive();
    }

    /** A client that trusts only the test CA. */
    static javax.net.ssl.SSLSocket connect(int port) throws Exception {
        java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(certs.caFile())) {
            trust.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in));
        }
        javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ssl.getSocketFactory().createSocket("127.0.0.1", port);
        s.setSoTimeout(10_000);
        s.startHandshake();
        return s;
    }

    static String subject(javax.net.ssl.SSLSocket s) throws Exception {
        return ((java.security.cert.X509Certificate) s.getSession().getPeerCertificates()[0])
                .getSubjectX500Principal().getName();
    }

    /** One GET /health on an open connection; the answer's status line. */
    static String health(javax.net.ssl.SSLSocket s) throws Exception {
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        var in = new java.io.BufferedReader(new java.io.InputStreamReader(s.getInputStream(),
                java.nio.charset.StandardCharsets.US_ASCII));
        String status = in.readLine();
        long length = 0;
        for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Long.parseLong(line.substring(15).trim());
            }
        }
        in.skip(length);
        return status;
    }

    @Test
    void certificateRotation_newConnectionsGetTheNewOne_openOnesStay_aBadPairIsRefused() throws Exception {
        Path rotDir = Files.createDirectories(dir.resolve("rotation"));
        Path[] files = {rotDir.resolve("live.crt"), rotDir.resolve("live.key")};
        Path[] first = certs.write(certs.issueServer("first.test"), "first");
        Files.copy(first[0], files[0]);
        Files.copy(first[1], files[1]);
        try (TestGateway rot = TestGateway.start("admin:\n  listen: 127.0.0.1:0\n"
                + TestCertificates.tlsBlock(files, "  ") + TestCertificates.tlsBlock(files, "")
                + TestGateway.simulatorConfig())) {
            javax.net.ssl.SSLSocket open = connect(rot.port());
            assertThat(subject(open)).isEqualTo("CN=first.test");
            assertThat(health(open)).isEqualTo("HTTP/1.1 200 OK");
            javax.net.ssl.SSLSocket admin = connect(rot.server().adminPort());
            assertThat(subject(admin)).isEqualTo("CN=first.test");
            assertThat(health(admin)).isEqualTo("HTTP/1.1 200 OK");
            admin.close();

            // A rotation: certbot writes the new pair; the reload round looks at the files.
            Path[] second = certs.write(certs.issueServer("second.test"), "second");
            Files.copy(second[0], files[0], java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.copy(second[1], files[1], java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            rot.server().checkCertificates();
            try (javax.net.ssl.SSLSocket next = connect(rot.port())) {
                assertThat(subject(next)).isEqualTo("CN=second.test");
            }
            try (javax.net.ssl.SSLSocket nextAdmin = connect(rot.server().adminPort())) {
                assertThat(subject(nextAdmin)).isEqualTo("CN=second.test");
            }
            assertThat(health(open)).as("the connection opened before the rotation").isEqualTo("HTTP/1.1 200 OK");

            // Half a rotation (a certificate whose key is not written yet), then a file that is no PEM at all:
            // both refused, the second pair stays.
            Path[] third = certs.write(certs.issueServer("third.test"), "third");
            Files.copy(third[0], files[0], java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(rot.server().tls().check()).isFalse();
            Files.writeString(files[1], "garbage");
            assertThat(rot.server().tls().check()).isFalse();
            try (javax.net.ssl.SSLSocket next = connect(rot.port())) {
                assertThat(subject(next)).isEqualTo("CN=second.test");
                assertThat(health(next)).isEqualTo("HTTP/1.1 200 OK");
            }
            open.close();
        }
    }
}
