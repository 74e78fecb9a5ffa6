package io.modelgateway.bench.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The benchmark upstream's answers, read by an HTTP client of its own (the JDK's): well-framed HTTP/1.1, JSON
 * bodies that parse, streams of SSE events that end properly, in both shapes, on one kept-alive connection.
 */
class BlastUpstreamTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static BlastUpstream upstream;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        upstream = BlastUpstream.start("127.0.0.1", 0, 1, 1);
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    private static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + upstream.port() + path))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json");
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The data of each SSE event, in order. */
    private static List<String> events(String body) {
        List<String> out = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            for (String line : event.split("\n")) {
                if (line.startsWith("data:")) {
                    out.add(line.substring(5).trim());
                }
            }
        }
        return out;
    }

    @Test
    void chat_isOneJsonAnswerWithItsUsage() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"m\",\"messages\":[]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.path("object").asText()).isEqualTo("chat.completion");
        assertThat(answer.path("usage").path("completion_tokens").asInt()).isPositive();
        assertThat(r.body().length()).isBetween(600, 1000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"burst", "paced"})
    void chatStream_is50EventsEndingInDone_inEitherShape(String shape) throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"messages\":[]}",
                "x-sim-shape", shape);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<String> data = events(r.body());
        assertThat(data).hasSize(50).last().isEqualTo("[DONE]");
        for (String d : data.subList(0, 49)) {
            assertThat(JSON.readTree(d).path("object").asText()).isEqualTo("chat.completion.chunk");
        }
        assertThat(JSON.readTree(data.get(48)).path("usage").path("total_tokens").asInt()).isPositive();
    }

    @ParameterizedTest
    @ValueSource(strings = {"burst", "paced"})
    void messagesStream_isTypedEventsEndingInMessageStop(String shape) throws Exception {
        HttpResponse<String> r = post("/v1/messages", "{\"model\":\"m\",\"max_tokens\":9,\"stream\": true,\"messages\":[]}",
                "x-sim-shape", shape);
        assertThat(r.statusCode()).isEqualTo(200);
        List<String> data = events(r.body());
        assertThat(data).hasSize(50);
        assertThat(JSON.readTree(data.get(0)).path("type").asText()).isEqualTo("message_start");
        assertThat(JSON.readTree(data.get(49)).path("type").asText()).isEqualTo("message_stop");
    }

    @Test
    void embeddings_floatAndBase64_areOneVectorOf1536Dimensions() throws Exception {
        HttpResponse<String> floats = post("/v1/embeddings", "{\"model\":\"m\",\"input\":\"a\"}");
        JsonNode vector = JSON.readTree(floats.body()).path("data").path(0).path("embedding");
        assertThat(vector.size()).isEqualTo(1536);
        assertThat(floats.body().length()).isBetween(15_000, 40_000);

        HttpResponse<String> base64 = post("/v1/embeddings", "{\"model\":\"m\",\"input\":\"a\",\"encoding_format\":\"base64\"}");
        String encoded = JSON.readTree(base64.body()).path("data").path(0).path("embedding").asText();
        assertThat(Base64.getDecoder().decode(encoded)).hasSize(1536 * 4);
    }

    /**
     * The bench config's Bedrock model (conf/bench/gateway-bench.yaml) through a real gateway to this upstream: the
     * InvokeModel stream in event-stream frames comes out as the same 50 Anthropic events, so the lead's end-to-end
     * figure for Bedrock measures signing and decoding on a working path.
     */
    @ParameterizedTest
    @ValueSource(strings = {"burst", "paced"})
    void bedrockStream_throughTheBenchConfig_isTheMessagesEvents(String shape) throws Exception {
        java.nio.file.Path conf = java.nio.file.Path.of(System.getProperty("basedir", "."))
                .resolve("../conf/bench/gateway-bench.yaml");
        io.modelgateway.core.config.GatewayConfig config = io.modelgateway.core.config.ConfigLoader.load(conf,
                java.util.Map.of("GATEWAY_KEY", "sk-bench-0123456789", "BENCH_SIM_PORT",
                        Integer.toString(upstream.port())), "127.0.0.1:0");
        io.modelgateway.core.server.GatewayServer gateway = io.modelgateway.core.server.GatewayServer.start(config, 1);
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port()
                            + "/api/v1/messages")).timeout(Duration.ofSeconds(10))
                    .header("content-type", "application/json").header("x-api-key", "sk-bench-0123456789")
                    .header("anthropic-version", "2023-06-01").header("x-sim-shape", shape)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"sim-bedrock-claude\",\"max_tokens\":9,"
                            + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build();
            HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());

            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            List<String> data = events(r.body());
            assertThat(data).hasSize(50);
            assertThat(JSON.readTree(data.get(0)).path("type").asText()).isEqualTo("message_start");
            assertThat(JSON.readTree(data.get(49)).path("type").asText()).isEqualTo("message_stop");
        } finally {
            gateway.close();
        }
    }

    @Test
    void pacedTicks_keepAFixedRate_andALateTickIsNotMadeUpAtOnce() {
        long gap = 1_000_000;
        // on time, or a little late: one gap after the last was due, so lateness does not add up over a stream
        assertThat(BlastUpstream.nextDue(10_000_000, gap, 10_000_000)).isEqualTo(11_000_000);
        assertThat(BlastUpstream.nextDue(10_000_000, gap, 10_300_000)).isEqualTo(11_000_000);
        // past half a gap late: half a gap from now, never a tick right after the late one
        assertThat(BlastUpstream.nextDue(10_000_000, gap, 10_700_000)).isEqualTo(11_200_000);
        assertThat(BlastUpstream.nextDue(10_000_000, gap, 14_000_000)).isEqualTo(14_500_000);
    }

    @Test
    void unknownPath_is404_andTheConnectionServesOn() throws Exception {
        assertThat(post("/v1/nothing", "{}").statusCode()).isEqualTo(404);
        assertThat(post("/v1/chat/completions", "{}").statusCode()).isEqualTo(200);
    }
}
