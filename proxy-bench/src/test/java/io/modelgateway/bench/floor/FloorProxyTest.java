package io.modelgateway.bench.floor;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.bench.upstream.BlastUpstream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The floors carry the benchmark's answers unchanged: the JDK's HTTP client reads each answer through the floor and
 * straight from the blast upstream, and the bodies are the same, request after request on one kept-alive connection
 * (so the pairing of a client connection with its upstream connection survives more than one exchange).
 */
class FloorProxyTest {
    private static BlastUpstream upstream;
    private static FloorProxy relay;
    private static FloorProxy http;
    private static FloorProxy codecs;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        upstream = BlastUpstream.start("127.0.0.1", 0, 1, 1);
        InetSocketAddress up = new InetSocketAddress("127.0.0.1", upstream.port());
        relay = FloorProxy.start(FloorProxy.Mode.RELAY, "127.0.0.1", 0, up);
        http = FloorProxy.start(FloorProxy.Mode.HTTP, "127.0.0.1", 0, up);
        codecs = FloorProxy.start(FloorProxy.Mode.CODECS, "127.0.0.1", 0, up);
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        relay.close();
        http.close();
        codecs.close();
        upstream.close();
    }

    private static HttpResponse<String> post(int port, String path, String body, String shape) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json").header("x-sim-shape", shape).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @ParameterizedTest
    @CsvSource({
        "relay, /v1/chat/completions, '{\"model\":\"m\",\"messages\":[]}', burst",
        "relay, /v1/chat/completions, '{\"model\":\"m\",\"stream\":true,\"messages\":[]}', paced",
        "relay, /v1/embeddings, '{\"model\":\"e\",\"input\":\"x\"}', burst",
        "http, /v1/chat/completions, '{\"model\":\"m\",\"messages\":[]}', burst",
        "http, /v1/chat/completions, '{\"model\":\"m\",\"stream\":true,\"messages\":[]}', burst",
        "http, /v1/chat/completions, '{\"model\":\"m\",\"stream\":true,\"messages\":[]}', paced",
        "http, /v1/messages, '{\"model\":\"c\",\"stream\":true,\"messages\":[]}', paced",
        "http, /v1/embeddings, '{\"model\":\"e\",\"input\":\"x\",\"encoding_format\":\"base64\"}', burst",
        "codecs, /v1/chat/completions, '{\"model\":\"m\",\"messages\":[]}', burst",
        "codecs, /v1/chat/completions, '{\"model\":\"m\",\"stream\":true,\"messages\":[]}', burst",
        "codecs, /v1/messages, '{\"model\":\"c\",\"stream\":true,\"messages\":[]}', paced",
        "codecs, /v1/embeddings, '{\"model\":\"e\",\"input\":\"x\"}', burst",
    })
    void answers_areTheUpstreamsOwn(String mode, String path, String body, String shape) throws Exception {
        FloorProxy floor = switch (mode) {
            case "relay" -> relay;
            case "http" -> http;
            default -> codecs;
        };
        HttpResponse<String> direct = post(upstream.port(), path, body, shape);
        assertThat(direct.statusCode()).isEqualTo(200);
        assertThat(direct.body()).hasSizeGreaterThan(500);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> through = post(floor.port(), path, body, shape);
            assertThat(through.statusCode()).isEqualTo(200);
            assertThat(through.headers().firstValue("content-type")).isEqualTo(direct.headers().firstValue("content-type"));
            assertThat(through.body()).isEqualTo(direct.body());
        }
    }
}
