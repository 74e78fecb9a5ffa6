package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.Cli;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.TestGateway;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 to clients with real independent clients: curl with prior knowledge on a plain listener (h2c, opt-in),
 * which keeps serving HTTP/1.1, and nghttp2's h2load for a bounded multiplexed load over TLS.
 */
class Http2EndToEndTest {
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";

    @TempDir
    Path dir;

    private static List<String> curlChat(String url, String... protocol) {
        List<String> c = new java.util.ArrayList<>(List.of("curl", "-sS", "--max-time", "20"));
        c.addAll(List.of(protocol));
        c.addAll(List.of("-w", "\n%{http_version} %{http_code}", "-H", "authorization: Bearer " + TestGateway.KEY,
                "-H", "content-type: application/json", "--data-binary", CHAT, url));
        return c;
    }

    @Test
    void h2cWithPriorKnowledge_onAPlainListener_andHttp11StillServedThere() throws Exception {
        try (TestGateway gw = TestGateway.start("http2: {cleartext: true}\n" + TestGateway.simulatorConfig())) {
            String url = gw.url("/api/v1/chat/completions");
            Cli.Result h2 = Cli.run(curlChat(url, "--http2-prior-knowledge"), null, 30);
            assertThat(h2.out()).as(h2.toString()).contains("\"object\":\"chat.completion\"").endsWith("\n2 200");
            Cli.Result h1 = Cli.run(curlChat(url, "--http1.1"), null, 30);
            assertThat(h1.out()).as(h1.toString()).contains("\"object\":\"chat.completion\"").endsWith("\n1.1 200");
        }
    }

    @Test
    void withoutCleartext_aPlainListenerSpeaksHttp11Only() throws Exception {
        try (TestGateway gw = TestGateway.start(TestGateway.simulatorConfig())) {
            Cli.Result h2 = Cli.run(curlChat(gw.url("/api/v1/chat/completions"), "--http2-prior-knowledge"), null, 30);
            assertThat(h2.exit()).as(h2.toString()).isNotZero();
        }
    }

    @Test
    void h2load_boundedMultiplexedLoadOverTls_everyRequestAnswered200() throws Exception {
        TestCertificates certs = TestCertificates.newAuthority(dir, "h2load");
        Path[] files = certs.writeServer("gateway.test");
        try (TestGateway gw = TestGateway.start(TestCertificates.tlsBlock(files, "")
                + "http2: {max_concurrent_streams: 32}\n" + TestGateway.simulatorConfig())) {
            Path body = Files.writeString(dir.resolve("chat.json"), CHAT);
            // 2 connections, up to 16 streams at once on each, 400 requests in all.
            Cli.Result r = Cli.run(List.of("h2load", "-n", "400", "-c", "2", "-m", "16", "-d", body.toString(),
                    "-H", "authorization: Bearer " + TestGateway.KEY, "-H", "content-type: application/json",
                    gw.url("/api/v1/chat/completions")), null, 120);
            assertThat(r.out()).as(r.toString()).contains("Application protocol: h2")
                    .contains("requests: 400 total, 400 started, 400 done, 400 succeeded, 0 failed, 0 errored")
                    .contains("status codes: 400 2xx, 0 3xx, 0 4xx, 0 5xx");
        }
    }
}
