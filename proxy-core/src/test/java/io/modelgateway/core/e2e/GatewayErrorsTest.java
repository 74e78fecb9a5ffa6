package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every error the caller can provoke, in both styles: status, body shape, request-id headers. */
class GatewayErrorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String EMBEDDINGS = "/api/v1/embeddings";
    private static final String CHAT_BODY = "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static final String MSG_BODY = "{\"model\":\"sim-chat\",\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    private static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start("max_body_bytes: 4096\n" + TestGateway.simulatorConfig(
                "  remote-anthropic:\n    type: anthropic\n    base_url: http://127.0.0.1:9\n",
                "  other-style:\n    deployments: [{provider: remote-anthropic, model: claude-x}]\n"));
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    @Test
    void noKey_chat_is401OpenAiStyle() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(CHAT, CHAT_BODY).build(), HttpResponse.BodyHandlers.ofString());
        assertOpenAi(r, 401, "invalid_request_error", "missing_api_key");
        assertThat(r.headers().firstValue("x-request-id")).hasValueSatisfying(id -> assertThat(id).matches("req_[0-9A-Za-z]{24}"));
        assertThat(r.headers().firstValue("request-id")).isEqualTo(r.headers().firstValue("x-request-id"));
    }

    @Test
    void noKey_messages_is401AnthropicStyle() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(MESSAGES, MSG_BODY).header("anthropic-version", "2023-06-01")
                .build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = assertAnthropic(r, 401, "authentication_error");
        assertThat(body.path("request_id").asText()).isEqualTo(r.headers().firstValue("request-id").orElseThrow());
    }

    @Test
    void badKey_bothStyles_is401() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(CHAT, CHAT_BODY).header("authorization", "Bearer sk-wrong")
                .build(), HttpResponse.BodyHandlers.ofString());
        assertOpenAi(r, 401, "invalid_request_error", "invalid_api_key");
        assertThat(r.body()).doesNotContain("sk-wrong");
        r = gw.http.send(gw.post(MESSAGES, MSG_BODY).header("x-api-key", "sk-wrong")
                .header("anthropic-version", "2023-06-01").build(), HttpResponse.BodyHandlers.ofString());
        assertAnthropic(r, 401, "authentication_error");
    }

    @Test
    void conflictingKeys_is401() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(CHAT, CHAT_BODY).header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-api-key", "sk-other").build(), HttpResponse.BodyHandlers.ofString());
        assertOpenAi(r, 401, "invalid_request_error", "invalid_api_key");
    }

    @Test
    void eitherHeaderForm_worksOnEveryEndpoint() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(CHAT, CHAT_BODY).header("x-api-key", TestGateway.KEY).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        r = gw.http.send(gw.post(MESSAGES, MSG_BODY).header("authorization", "Bearer " + TestGateway.KEY)
                .header("anthropic-version", "2026-10-21").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
    }

    @Test
    void missingAnthropicVersion_is400() throws Exception {
        HttpResponse<String> r = gw.http.send(gw.post(MESSAGES, MSG_BODY).header("x-api-key", TestGateway.KEY).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode body = assertAnthropic(r, 400, "invalid_request_error");
        assertThat(body.at("/error/message").asText()).contains("anthropic-version");
    }

    @Test
    void earlierOrMalformedAnthropicVersion_is400() throws Exception {
        for (String v : new String[] {"2023-01-01", "latest", "2024-13"}) {
            HttpResponse<String> r = gw.call(MESSAGES, MSG_BODY, "anthropic-version", v);
            assertAnthropic(r, 400, "invalid_request_error");
        }
    }

    @Test
    void unknownModel_is404InBothStyles() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, CHAT_BODY.replace("sim-chat", "nope"));
        assertOpenAi(r, 404, "invalid_request_error", "model_not_found");
        r = gw.call(MESSAGES, MSG_BODY.replace("sim-chat", "nope"));
        assertAnthropic(r, 404, "not_found_error");
    }

    @Test
    void modelOutsideKeyList_is403() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, CHAT_BODY, "authorization", "Bearer sk-limited");
        assertOpenAi(r, 403, "permission_error", "model_not_allowed");
    }

    @Test
    void malformedJson_is400() throws Exception {
        assertOpenAi(gw.call(CHAT, "{\"model\":"), 400, "invalid_request_error", "invalid_json");
        assertAnthropic(gw.call(MESSAGES, "not json"), 400, "invalid_request_error");
        assertOpenAi(gw.call(EMBEDDINGS, "[1,2]"), 400, "invalid_request_error", "invalid_json");
    }

    @Test
    void missingRequiredFields_is400NamingTheParam() throws Exception {
        JsonNode b = assertOpenAi(gw.call(CHAT, "{\"model\":\"sim-chat\"}"), 400, "invalid_request_error",
                "missing_required_parameter");
        assertThat(b.at("/error/param").asText()).isEqualTo("messages");
        b = assertOpenAi(gw.call(EMBEDDINGS, "{\"model\":\"sim-embed\"}"), 400, "invalid_request_error",
                "missing_required_parameter");
        assertThat(b.at("/error/param").asText()).isEqualTo("input");
        b = assertAnthropic(gw.call(MESSAGES, "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"),
                400, "invalid_request_error");
        assertThat(b.at("/error/message").asText()).contains("max_tokens");
    }

    @Test
    void embeddingModelOnChat_andChatModelOnEmbeddings_are400() throws Exception {
        assertOpenAi(gw.call(CHAT, CHAT_BODY.replace("sim-chat", "sim-embed")), 400, "invalid_request_error",
                "unsupported_model");
        assertOpenAi(gw.call(EMBEDDINGS, "{\"model\":\"sim-chat\",\"input\":\"x\"}"), 400, "invalid_request_error",
                "unsupported_model");
    }

    @Test
    void wrongMethod_is405() throws Exception {
        assertOpenAi(gw.get(CHAT, "authorization", "Bearer " + TestGateway.KEY), 405, "invalid_request_error",
                "method_not_allowed");
        assertAnthropic(gw.get(MESSAGES), 405, "invalid_request_error");
    }

    @Test
    void unknownPath_is404() throws Exception {
        assertOpenAi(gw.get("/api/v1/nothing"), 404, "invalid_request_error", "not_found");
        assertAnthropic(gw.get("/api/v1/messages/batches"), 404, "not_found_error");
    }

    @Test
    void bodyOverLimit_is413AndConnectionCloses() throws Exception {
        String big = "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(8000) + "\"}]}";
        assertOpenAi(gw.call(CHAT, big), 413, "invalid_request_error", "request_too_large");
        assertAnthropic(gw.call(MESSAGES, big), 413, "request_too_large");
    }

    @Test
    void declaredOversizedBody_isRefusedBeforeItIsSent() throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Authorization: Bearer " + TestGateway.KEY + "\r\nContent-Length: 100000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String response = readAll(s.getInputStream());
            assertThat(response).startsWith("HTTP/1.1 413").contains("request_too_large");
        }
    }

    @Test
    void malformedHttp_is400AndClose() throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write("BLAH\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            String response = readAll(s.getInputStream());
            assertThat(response).startsWith("HTTP/1.1 400");
        }
    }

    @Test
    void oversizedHeaders_is431() throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(40000) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(readAll(s.getInputStream())).startsWith("HTTP/1.1 431");
        }
    }

    @Test
    void dimensionsOnAModelWithoutThem_is400() throws Exception {
        JsonNode b = assertOpenAi(gw.call(EMBEDDINGS, "{\"model\":\"sim-embed-fixed\",\"input\":\"x\",\"dimensions\":8}"),
                400, "invalid_request_error", "unsupported_parameter");
        assertThat(b.at("/error/param").asText()).isEqualTo("dimensions");
    }

    @Test
    void healthReadyAndModels_answer() throws Exception {
        assertThat(gw.get("/health").statusCode()).isEqualTo(200);
        assertThat(gw.get("/ready").statusCode()).isEqualTo(200);
        HttpResponse<String> r = gw.get("/api/v1/models", "authorization", "Bearer sk-limited");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode list = JSON.readTree(r.body());
        assertThat(list.path("object").asText()).isEqualTo("list");
        assertThat(list.path("data")).extracting(n -> n.path("id").asText()).containsExactly("sim-embed");
        assertThat(gw.get("/api/v1/models").statusCode()).isEqualTo(401);
    }

    @Test
    void queryString_isIgnored() throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(gw.url(MESSAGES + "?beta=true")))
                .timeout(Duration.ofSeconds(10)).header("x-api-key", TestGateway.KEY)
                .header("anthropic-version", "2023-06-01").POST(HttpRequest.BodyPublishers.ofString(MSG_BODY)).build();
        assertThat(gw.http.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    }

    static JsonNode assertOpenAi(HttpResponse<String> r, int status, String type, String code) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        JsonNode b = JSON.readTree(r.body());
        JsonNode e = b.path("error");
        assertThat(e.has("message") && e.has("type") && e.has("param") && e.has("code")).as(r.body()).isTrue();
        assertThat(e.path("type").asText()).isEqualTo(type);
        assertThat(e.path("code").asText()).isEqualTo(code);
        assertThat(r.headers().firstValue("x-request-id")).isPresent();
        return b;
    }

    static JsonNode assertAnthropic(HttpResponse<String> r, int status, String type) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode b = JSON.readTree(r.body());
        assertThat(b.path("type").asText()).isEqualTo("error");
        assertThat(b.at("/error/type").asText()).as(r.body()).isEqualTo(type);
        assertThat(b.path("request_id").asText()).startsWith("req_");
        return b;
    }

    private static String readAll(InputStream in) throws Exception {
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
}
