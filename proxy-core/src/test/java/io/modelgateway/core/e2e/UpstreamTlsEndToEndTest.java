package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.TestGateway;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code https} upstream end to end: the standalone simulator served over TLS with a certificate from a test CA
 * the JDK does not know. The gateway verifies it by default (the chain against the provider's {@code ca_file}, the
 * host name against the certificate) and only skips that with {@code insecure_skip_verify}.
 */
class UpstreamTlsEndToEndTest {
    static final String UPSTREAM_KEY = "sk-upstream-tls";
    static final String CHAT = "{\"model\":\"up\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
    static final String CHAT_STREAM = "{\"model\":\"up\",\"max_tokens\":5,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    /** Certificate for 127.0.0.1, and one that names another host only; both issued by the test CA. */
    static SimulatorServer upstream;
    static SimulatorServer wrongName;
    static final AtomicInteger reached = new AtomicInteger();
    static final AtomicInteger reachedWrongName = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        certs = TestCertificates.newAuthority(dir, "upstream");
        Path[] good = certs.writeServer("simulator.test");
        upstream = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY,
                r -> reached.incrementAndGet(), SimulatorServer.tlsContext(good[0].toFile(), good[1].toFile()));
        Instant now = Instant.now();
        X509Bundle other = new CertificateBuilder().subject("CN=other.test").addSanDnsName("other.test").ecp256()
                .addExtendedKeyUsageServerAuth().notBefore(now.minus(1, ChronoUnit.HOURS))
                .notAfter(now.plus(1, ChronoUnit.DAYS)).buildIssuedBy(caBundle());
        Path[] bad = certs.write(other, "other");
        wrongName = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY,
                r -> reachedWrongName.incrementAndGet(), SimulatorServer.tlsContext(bad[0].toFile(), bad[1].toFile()));
    }

    private static X509Bundle caBundle() {
        return certs.authority();
    }

    @AfterAll
    static void stop() {
        upstream.close();
        wrongName.close();
    }

    private static TestGateway gateway(int port, String tlsLines) throws Exception {
        String provider = "  up: {type: openai, base_url: \"https://127.0.0.1:" + port + "/v1\", api_key: " + UPSTREAM_KEY
                + tlsLines + "}\n";
        String model = "  up: {deployments: [{provider: up, model: sim-chat-1}]}\n";
        return TestGateway.start(TestGateway.simulatorConfig(provider, model));
    }

    @Test
    void caFile_verifiesTheUpstream_andAnswersAndStreamsAsOverHttp() throws Exception {
        try (TestGateway gw = gateway(upstream.port(), ", ca_file: " + certs.caFile())) {
            int before = reached.get();
            HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).contains("\"object\":\"chat.completion\"");
            HttpResponse<String> s = gw.call("/api/v1/chat/completions", CHAT_STREAM);
            assertThat(s.statusCode()).isEqualTo(200);
            assertThat(s.body()).startsWith("data: {").endsWith("data: [DONE]\n\n");
            assertThat(reached.get() - before).isEqualTo(2);
        }
    }

    @Test
    void verificationIsOnByDefault_anUnknownAuthorityIsRefused_andNothingIsSent() throws Exception {
        try (TestGateway gw = gateway(upstream.port(), "")) {
            int before = reached.get();
            HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT);
            assertThat(r.statusCode()).as(r.body()).isGreaterThanOrEqualTo(500);
            assertThat(r.body()).contains("\"error\":{").doesNotContain("Exception").doesNotContain(UPSTREAM_KEY);
            assertThat(reached.get()).as("requests that reached the upstream").isEqualTo(before);
        }
    }

    @Test
    void aCertificateForAnotherHost_isRefused_evenFromTheTrustedAuthority() throws Exception {
        try (TestGateway gw = gateway(wrongName.port(), ", ca_file: " + certs.caFile())) {
            int before = reachedWrongName.get();
            HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT);
            assertThat(r.statusCode()).as(r.body()).isGreaterThanOrEqualTo(500);
            assertThat(reachedWrongName.get()).isEqualTo(before);
        }
    }

    @Test
    void insecureSkipVerify_acceptsAnyCertificate() throws Exception {
        try (TestGateway gw = gateway(wrongName.port(), ", insecure_skip_verify: true")) {
            int before = reachedWrongName.get();
            HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(reachedWrongName.get()).isEqualTo(before + 1);
        }
    }

    /** Two providers on one origin, one checking and one not: the checking one never reuses the other's connection. */
    @Test
    void aVerifyingProvider_neverReusesAConnectionAnInsecureOneOpened() throws Exception {
        String base = "\"https://127.0.0.1:" + wrongName.port() + "/v1\", api_key: " + UPSTREAM_KEY;
        String providers = "  loose: {type: openai, base_url: " + base + ", insecure_skip_verify: true}\n"
                + "  strict: {type: openai, base_url: " + base + ", ca_file: " + certs.caFile() + "}\n";
        String models = "  loose: {deployments: [{provider: loose, model: sim-chat-1}]}\n"
                + "  strict: {deployments: [{provider: strict, model: sim-chat-1}]}\n";
        try (TestGateway gw = TestGateway.start(TestGateway.simulatorConfig(providers, models))) {
            int before = reachedWrongName.get();
            assertThat(gw.call("/api/v1/chat/completions", CHAT.replace("\"up\"", "\"loose\"")).statusCode())
                    .isEqualTo(200);
            HttpResponse<String> strict = gw.call("/api/v1/chat/completions", CHAT.replace("\"up\"", "\"strict\""));
            assertThat(strict.statusCode()).as(strict.body()).isGreaterThanOrEqualTo(500);
            assertThat(reachedWrongName.get()).isEqualTo(before + 1);
        }
    }
}
