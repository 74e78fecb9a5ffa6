package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.chatRequest;
import static io.modelgateway.core.simulator.SimTestSupport.json;
import static io.modelgateway.core.simulator.SimTestSupport.messagesRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.config.SimulatorSettings;
import io.netty.handler.codec.http.FullHttpRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SimulatorServerTest {

    private static final String KEY = "sk-sim-test";

    /** What the observer saw, copied on the event loop (the request itself is released after). */
    record Seen(String method, String uri, String authorization, String probe, String body) {
    }

    private static final BlockingQueue<Seen> SEEN = new LinkedBlockingQueue<>();
    private static SimulatorServer open;
    private static SimulatorServer keyed;
    private static HttpClient client;

    @BeforeAll
    static void start() throws InterruptedException {
        open = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, SimulatorServerTest::observe);
        keyed = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, KEY, null);
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    static void stop() {
        open.close();
        keyed.close();
    }

    private static void observe(FullHttpRequest request) {
        SEEN.add(new Seen(request.method().name(), request.uri(), request.headers().get("authorization"),
                request.headers().get("x-probe"), request.content().toString(StandardCharsets.UTF_8)));
    }

    private static HttpRequest.Builder post(SimulatorServer server, String path, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(10))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void health_get_200() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + keyed.port() + "/health")));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(json(r.body()).path("status").asText()).isEqualTo("ok");
    }

    @Test
    void post_nonStreamOnAllThreePaths_jsonWithContentLength() throws Exception {
        HttpResponse<String> chat = send(post(open, "/v1/chat/completions", chatRequest("")));
        HttpResponse<String> embeddings = send(post(open, "/v1/embeddings?api-version=1",
                "{\"model\":\"e\",\"input\":\"hi\",\"dimensions\":8}"));
        HttpResponse<String> messages = send(post(open, "/v1/messages?beta=true", messagesRequest(""))
                .header("anthropic-version", "2023-06-01"));

        for (HttpResponse<String> r : java.util.List.of(chat, embeddings, messages)) {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            assertThat(r.headers().firstValueAsLong("content-length")).hasValue(r.body().getBytes(StandardCharsets.UTF_8).length);
        }
        assertThat(json(chat.body()).path("object").asText()).isEqualTo("chat.completion");
        assertThat(chat.headers().firstValue("x-request-id")).get().asString().startsWith("req_");
        assertThat(json(embeddings.body()).path("data").get(0).path("embedding")).hasSize(8);
        assertThat(json(messages.body()).path("type").asText()).isEqualTo("message");
        assertThat(messages.headers().firstValue("request-id")).isPresent();
    }

    @Test
    void post_streamOnChatAndMessages_completeEventStreams() throws Exception {
        HttpResponse<String> chat = send(post(open, "/v1/chat/completions", chatRequest(",\"stream\":true"))
                .header("x-sim-tps", "1000"));
        HttpResponse<String> messages = send(post(open, "/v1/messages", messagesRequest(",\"stream\":true"))
                .header("x-sim-tps", "1000"));

        assertThat(chat.statusCode()).isEqualTo(200);
        assertThat(chat.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
        assertThat(chat.headers().firstValue("transfer-encoding")).hasValue("chunked");
        assertThat(chat.body()).startsWith("data: {").endsWith("\n\ndata: [DONE]\n\n");
        assertThat(messages.statusCode()).isEqualTo(200);
        assertThat(messages.body()).startsWith("event: message_start\n")
                .endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    }

    @Test
    void post_streamWithPace_eventsSpreadOverTime() throws Exception {
        long start = System.nanoTime();
        HttpResponse<InputStream> r = client.send(post(open, "/v1/chat/completions", chatRequest(",\"stream\":true"))
                .header("x-sim-ttft-ms", "100").header("x-sim-tps", "50").header("x-sim-output-tokens", "5").build(),
                HttpResponse.BodyHandlers.ofInputStream());
        String body;
        try (InputStream in = r.body()) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(body).endsWith("data: [DONE]\n\n");
        assertThat(elapsedMs).isGreaterThanOrEqualTo(100 + 5 * 20 - 10);
    }

    @Test
    void post_nonStreamWithTtft_headersWait() throws Exception {
        long start = System.nanoTime();
        HttpResponse<String> r = send(post(open, "/v1/embeddings", "{\"model\":\"e\",\"input\":\"hi\"}")
                .header("x-sim-ttft-ms", "150"));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(145);
    }

    @Test
    void request_unknownPathOrWrongMethod_404And405InPathStyle() throws Exception {
        HttpResponse<String> unknown = send(post(open, "/v1/completions", "{}"));
        HttpResponse<String> unknownMessages = send(post(open, "/v1/messages/batches", "{}"));
        HttpResponse<String> getChat = send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + open.port() + "/v1/chat/completions")));
        HttpResponse<String> getMessages = send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + open.port() + "/v1/messages")));

        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json(unknown.body()).path("error").path("code").asText()).isEqualTo("not_found");
        assertThat(unknownMessages.statusCode()).isEqualTo(404);
        assertThat(json(unknownMessages.body()).path("error").path("type").asText()).isEqualTo("not_found_error");
        assertThat(getChat.statusCode()).isEqualTo(405);
        assertThat(getChat.headers().firstValue("allow")).hasValue("POST");
        assertThat(json(getChat.body()).path("error").path("code").asText()).isEqualTo("method_not_allowed");
        assertThat(getMessages.statusCode()).isEqualTo(405);
        assertThat(json(getMessages.body()).path("type").asText()).isEqualTo("error");
    }

    @Test
    void request_requiredApiKey_checkedPerStyle() throws Exception {
        HttpResponse<String> missing = send(post(keyed, "/v1/chat/completions", chatRequest("")));
        HttpResponse<String> wrong = send(post(keyed, "/v1/chat/completions", chatRequest(""))
                .header("authorization", "Bearer nope"));
        HttpResponse<String> xApiKeyOnOpenAi = send(post(keyed, "/v1/chat/completions", chatRequest(""))
                .header("x-api-key", KEY));
        HttpResponse<String> bearer = send(post(keyed, "/v1/chat/completions", chatRequest(""))
                .header("authorization", "Bearer " + KEY));
        HttpResponse<String> messagesMissing = send(post(keyed, "/v1/messages", messagesRequest("")));
        HttpResponse<String> messagesKey = send(post(keyed, "/v1/messages", messagesRequest("")).header("x-api-key", KEY));
        HttpResponse<String> messagesBearer = send(post(keyed, "/v1/messages", messagesRequest(""))
                .header("authorization", "Bearer " + KEY));

        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(json(missing.body()).path("error").path("code").asText()).isEqualTo("missing_api_key");
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(json(wrong.body()).path("error").path("code").asText()).isEqualTo("invalid_api_key");
        assertThat(xApiKeyOnOpenAi.statusCode()).isEqualTo(401);
        assertThat(bearer.statusCode()).isEqualTo(200);
        assertThat(messagesMissing.statusCode()).isEqualTo(401);
        assertThat(json(messagesMissing.body()).path("error").path("type").asText()).isEqualTo("authentication_error");
        assertThat(messagesKey.statusCode()).isEqualTo(200);
        assertThat(messagesBearer.statusCode()).isEqualTo(200);
    }

    @Test
    void post_cutAfter_clientSeesIncompleteBody() throws Exception {
        HttpRequest request = post(open, "/v1/chat/completions", chatRequest(",\"stream\":true"))
                .header("x-sim-fault", "cut_after=2").build();

        assertThatThrownBy(() -> client.send(request, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);

        // The bytes themselves, read from a plain socket up to the close: the JDK client may report the end of a
        // cut body before handing over bytes it already received, which made this check racy.
        String body = chatRequest(",\"stream\":true");
        String partial;
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", open.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Type: application/json\r\nx-sim-fault: cut_after=2\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8));
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[4096];
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
            }
            partial = got.toString(StandardCharsets.UTF_8);
        }
        assertThat(partial).startsWith("HTTP/1.1 200").contains("transfer-encoding: chunked")
                .doesNotContain("\r\n0\r\n\r\n"); // no last chunk: the body is incomplete
        assertThat(partial.split("data: ")).hasSize(1 + 3); // role chunk + 2 content chunks
        assertThat(partial).doesNotContain("[DONE]");
    }

    @Test
    void post_nonStreamCut_clientSeesIncompleteBody() {
        HttpRequest request = post(open, "/v1/messages", messagesRequest("")).header("x-sim-fault", "cut_after=1").build();

        assertThatThrownBy(() -> client.send(request, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
    }

    @Test
    void post_errorAfter_streamEndsWithErrorEventAndCleanEnd() throws Exception {
        HttpResponse<String> r = send(post(open, "/v1/messages", messagesRequest(",\"stream\":true"))
                .header("x-sim-fault", "error_after=1"));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).endsWith("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                + "\"message\":\"The simulator injected a stream error (error_after=1)\"}}\n\n");
    }

    @Test
    void observer_seesMethodUriHeadersAndBody() throws Exception {
        SEEN.clear();
        String body = chatRequest(",\"user\":\"observer-probe\"");

        send(post(open, "/v1/chat/completions?x=1", body).header("authorization", "Bearer upstream-key")
                .header("x-probe", "42"));

        Seen seen = SEEN.poll(5, TimeUnit.SECONDS);
        assertThat(seen).isNotNull();
        assertThat(seen.method()).isEqualTo("POST");
        assertThat(seen.uri()).isEqualTo("/v1/chat/completions?x=1");
        assertThat(seen.authorization()).isEqualTo("Bearer upstream-key");
        assertThat(seen.probe()).isEqualTo("42");
        assertThat(seen.body()).isEqualTo(body);
    }

    @Test
    void connection_pipelinedRequests_answeredInOrder() throws Exception {
        String slow = chatRequest(",\"stream\":true");
        String fast = "{\"model\":\"e\",\"input\":\"hi\",\"dimensions\":2}";
        String wire = "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                + "x-sim-tps: 200\r\nx-sim-output-tokens: 5\r\ncontent-length: " + slow.length() + "\r\n\r\n" + slow
                + "POST /v1/embeddings HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n"
                + "content-length: " + fast.length() + "\r\n\r\n" + fast;

        String response;
        try (Socket socket = new Socket("127.0.0.1", open.port())) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(wire.getBytes(StandardCharsets.UTF_8));
            out.flush();
            response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }

        int done = response.indexOf("data: [DONE]");
        int second = response.indexOf("HTTP/1.1 200", 1);
        assertThat(response).startsWith("HTTP/1.1 200");
        assertThat(done).isPositive();
        assertThat(second).isGreaterThan(done);
        JsonNode embeddings = json(response.substring(response.indexOf("{\"object\":\"list\"")));
        assertThat(embeddings.path("data").get(0).path("embedding")).hasSize(2);
    }
}
