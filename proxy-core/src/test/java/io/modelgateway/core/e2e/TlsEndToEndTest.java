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
}
