package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.core.testing.Cli;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.TestGateway;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Client certificates on the API listener ({@code tls.client_ca_file}), checked with curl as the client: with
 * {@code client_auth: require} the handshake refuses a client without a certificate of the CA; with
 * {@code optional} it lets one in, and a key bound to a certificate subject ({@code client_cert_subject}) is
 * accepted only with that certificate, over HTTP/1.1 and h2.
 */
class ClientCertificateEndToEndTest {
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
    static final String BOUND_KEY = "sk-bound-to-billing";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static TestCertificates otherCa;
    static Path[] server;
    static Path[] billing;
    static Path[] search;
    static Path[] stranger;

    @BeforeAll
    static void certificates() throws Exception {
        certs = TestCertificates.newAuthority(dir, "mTLS e2e");
        server = certs.writeServer("gateway.test");
        billing = certs.write(certs.issueClient("CN=billing,O=Example"), "billing");
        search = certs.write(certs.issueClient("CN=search,O=Example"), "search");
        Path otherDir = Files.createDirectories(dir.resolve("other"));
        otherCa = TestCertificates.newAuthority(otherDir, "Other");
        stranger = otherCa.write(otherCa.issueClient("CN=billing,O=Example"), "stranger");
    }

    static String config(String clientAuth) {
        String keys = """
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                  - name: billing
                    key: sha256:%s
                    models: ["*"]
                    client_cert_subject: "cn=billing, o=Example"
                """.formatted(TestGateway.sha256Hex(BOUND_KEY));
        String simulator = TestGateway.simulatorConfig();
        // The simulator config's own keys are replaced by the two above.
        String rest = simulator.substring(simulator.indexOf("providers:"));
        return "tls:\n  cert_file: " + server[0] + "\n  key_file: " + server[1] + "\n  client_ca_file: "
                + certs.caFile() + "\n" + (clientAuth == null ? "" : "  client_auth: " + clientAuth + "\n")
                + "http2:\n  enabled: true\n" + keys + rest;
    }

    static Cli.Result curl(TestGateway gw, String protocol, Path[] clientCert, String key) throws Exception {
        List<String> c = new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "--cacert",
                certs.caFile().toString(), protocol, "-w", "\n%{http_version} %{http_code}"));
        if (clientCert != null) {
            c.addAll(List.of("--cert", clientCert[0].toString(), "--key", clientCert[1].toString()));
        }
        c.addAll(List.of("-H", "authorization: Bearer " + key, "-H", "content-type: application/json",
                "--data-binary", CHAT, gw.url("/api/v1/chat/completions")));
        return Cli.run(c, null, 30);
    }

    @Test
    void required_noCertificateOrAnotherCasIsRefusedInTheHandshake_theCasCertificateGetsIn() throws Exception {
        try (TestGateway gw = TestGateway.start(config(null))) {
            Cli.Result none = curl(gw, "--http1.1", null, TestGateway.KEY);
            Cli.Result foreign = curl(gw, "--http1.1", stranger, TestGateway.KEY);
            Cli.Result ok = curl(gw, "--http1.1", search, TestGateway.KEY);

            assertThat(none.exit()).as(none.toString()).isNotZero();
            assertThat(none.out()).doesNotContain("chat.completion");
            assertThat(foreign.exit()).as(foreign.toString()).isNotZero();
            assertThat(foreign.out()).doesNotContain("chat.completion");
            assertThat(ok.exit()).as(ok.toString()).isZero();
            assertThat(ok.out()).contains("\"object\":\"chat.completion\"").endsWith("\n1.1 200");
        }
    }

    @Test
    void optional_aBoundKeyNeedsItsOwnCertificate_otherKeysNeedNone() throws Exception {
        try (TestGateway gw = TestGateway.start(config("optional"))) {
            for (String protocol : List.of("--http1.1", "--http2")) {
                String v = protocol.equals("--http2") ? "2" : "1.1";
                Cli.Result plainKey = curl(gw, protocol, null, TestGateway.KEY);
                Cli.Result boundWithout = curl(gw, protocol, null, BOUND_KEY);
                Cli.Result boundWithOther = curl(gw, protocol, search, BOUND_KEY);
                Cli.Result boundWithOwn = curl(gw, protocol, billing, BOUND_KEY);

                assertThat(plainKey.out()).as(protocol).contains("chat.completion").endsWith("\n" + v + " 200");
                assertThat(boundWithout.out()).as(protocol).contains("\"code\":\"invalid_api_key\"")
                        .contains("presented none").endsWith("\n" + v + " 401");
                assertThat(boundWithOther.out()).as(protocol).contains("\"code\":\"invalid_api_key\"")
                        .contains("another client certificate").endsWith("\n" + v + " 401");
                assertThat(boundWithOwn.out()).as(protocol).contains("chat.completion").endsWith("\n" + v + " 200");
            }
        }
    }

    @Test
    void config_aBoundKeyWithoutClientCa_andABadSubject_andABadCaFile_areRefused() throws Exception {
        String noCa = config(null).replace("  client_ca_file: " + certs.caFile() + "\n", "");
        assertThatThrownBy(() -> TestGateway.start(noCa).close()).hasMessageContaining("client_cert_subject")
                .hasMessageContaining("needs tls.client_ca_file");
        String badSubject = config(null).replace("\"cn=billing, o=Example\"", "\"billing\"");
        assertThatThrownBy(() -> TestGateway.start(badSubject).close()).hasMessageContaining("client_cert_subject")
                .hasMessageContaining("not a distinguished name");
        String badMode = config("sometimes");
        assertThatThrownBy(() -> TestGateway.start(badMode).close()).hasMessageContaining("tls.client_auth")
                .hasMessageContaining("require or optional");
        // A leaf is not a CA: nothing it "issues" could be checked.
        String leafAsCa = config(null).replace("client_ca_file: " + certs.caFile(), "client_ca_file: " + search[0]);
        assertThatThrownBy(() -> TestGateway.start(leafAsCa).close()).hasMessageContaining("client_ca_file")
                .hasMessageContaining("not a certificate authority");
    }
}
