package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a hostile caller sends in its body and headers, against a scripted upstream on loopback: duplicate JSON keys
 * (the gateway must not check one value while the upstream acts on another) and the Anthropic headers, which reach
 * an upstream only by their own rule.
 */
class HostileClientEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String ONLY_A = "sk-only-model-a";
    private static final String USER = "[{\"role\":\"user\",\"content\":\"hi\"}]";
    private static final String ANTHROPIC_ANSWER = "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
            + "\"model\":\"claude-up\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"stop_reason\":\"end_turn\","
            + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}";
    private static final String CHAT_ANSWER = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,"
            + "\"model\":\"gpt-up\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},"
            + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}";

    private static ScriptedUpstream up;
    private static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        up = new ScriptedUpstream(r -> Script.json(200, r.uri().endsWith("/messages") ? ANTHROPIC_ANSWER : CHAT_ANSWER));
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                  - name: only-a
                    key: sha256:%s
                    models: [model-a, claude-a]
                providers:
                  up-openai:
                    type: openai
                    base_url: %s/v1
                    api_key: sk-provider-openai
                    forward_headers: ["*"]
                  up-anthropic:
                    type: anthropic
                    base_url: %s
                    api_key: sk-provider-anthropic
                    forward_headers: ["anthropic-*"]
                  up-anthropic-drop:
                    type: anthropic
                    base_url: %s
                    anthropic_beta: drop
                  up-anthropic-list:
                    type: anthropic
                    base_url: %s
                    anthropic_beta: [prompt-caching-*, files-api-2025-04-14]
                models:
                  model-a: {deployments: [{provider: up-openai, model: gpt-up}]}
                  model-b: {deployments: [{provider: up-openai, model: gpt-up-b}]}
                  claude-a: {deployments: [{provider: up-anthropic, model: claude-up}]}
                  claude-b: {deployments: [{provider: up-anthropic, model: claude-up-b}]}
                  claude-drop: {deployments: [{provider: up-anthropic-drop, model: claude-up}]}
                  claude-list: {deployments: [{provider: up-anthropic-list, model: claude-up}]}
                """.formatted(TestGateway.sha256Hex(ONLY_A), up.baseUrl(), up.baseUrl(), up.baseUrl(), up.baseUrl()));
    }

    @AfterAll
    static void stop() {
        gw.close();
        up.close();
    }

    @BeforeEach
    void clear() {
        up.received.clear();
    }

    // ---- duplicate keys

    @Test
    void duplicateModel_passThrough_is400AndNothingReachesTheUpstream() throws Exception {
        // The key may use model-a only; the gateway used to authorize the last "model" while the upstream got both.
        HttpResponse<String> r = send(CHAT, "{\"model\":\"model-b\",\"messages\":" + USER + ",\"model\":\"model-a\"}",
                "authorization", "Bearer " + ONLY_A);
        JsonNode error = JSON.readTree(r.body()).path("error");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(error.path("param").asText()).isEqualTo("model");
        assertThat(error.path("code").asText()).isEqualTo("duplicate_key");
        assertThat(error.path("message").asText()).contains("'model'");
        assertThat(up.received).isEmpty();
    }

    @Test
    void duplicateLimitOrStreamKey_onMessages_is400InAnthropicStyle() throws Exception {
        for (String body : new String[] {
                "{\"model\":\"claude-a\",\"max_tokens\":1,\"messages\":" + USER + ",\"max_tokens\":64000}",
                "{\"model\":\"claude-a\",\"stream\":true,\"max_tokens\":5,\"messages\":" + USER + ",\"stream\":false}"}) {
            HttpResponse<String> r = send(MESSAGES, body, "x-api-key", ONLY_A, "anthropic-version", "2023-06-01");
            JsonNode answer = JSON.readTree(r.body());
            assertThat(r.statusCode()).as(body).isEqualTo(400);
            assertThat(answer.path("type").asText()).isEqualTo("error");
            assertThat(answer.path("error").path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(answer.path("error").path("message").asText()).startsWith("Duplicate key '");
        }
        assertThat(up.received).isEmpty();
    }

    @Test
    void duplicateKeyDeepInATranslatedRequest_is400() throws Exception {
        // A chat caller on an Anthropic model: the whole body is read into a tree and rewritten.
        HttpResponse<String> r = send(CHAT, "{\"model\":\"claude-a\",\"messages\":[{\"role\":\"user\",\"content\":"
                + "[{\"type\":\"text\",\"text\":\"allowed\",\"text\":\"other\"}]}]}", "authorization", "Bearer " + ONLY_A);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).path("error").path("param").asText()).isEqualTo("messages[0].content[0].text");
        assertThat(up.received).isEmpty();
    }

    // ---- Anthropic headers

    @Test
    void messagesCaller_versionAndEveryBetaLine_reachAnAnthropicProviderAsSent() throws Exception {
        HttpResponse<String> r = send(MESSAGES, messagesBody("claude-a"), "x-api-key", TestGateway.KEY,
                "anthropic-version", "2026-10-21", "anthropic-beta", "a-2025-01-01,b-2025-02-02",
                "anthropic-beta", "c-2025-03-03");
        assertThat(r.statusCode()).isEqualTo(200);
        ScriptedUpstream.Received got = up.received.get(0);
        assertThat(got.all("anthropic-version")).containsExactly("2026-10-21");
        assertThat(got.all("anthropic-beta")).containsExactly("a-2025-01-01,b-2025-02-02", "c-2025-03-03");
    }

    @Test
    void chatCaller_anthropicHeaders_areNotForwarded_theGatewaySendsItsOwnVersion() throws Exception {
        // forward_headers: ["anthropic-*"] on this provider changes nothing: these headers follow their own rule.
        HttpResponse<String> r = send(CHAT, "{\"model\":\"claude-a\",\"messages\":" + USER + "}",
                "authorization", "Bearer " + TestGateway.KEY, "anthropic-version", "2026-10-21",
                "anthropic-beta", "some-beta", "vendor-version", "2026-10-21");
        assertThat(r.statusCode()).isEqualTo(200);
        ScriptedUpstream.Received got = up.received.get(0);
        assertThat(got.uri()).isEqualTo("/v1/messages");
        assertThat(got.all("anthropic-version")).containsExactly("2023-06-01");
        assertThat(got.headers()).doesNotContainKeys("anthropic-beta", "vendor-version");
    }

    @Test
    void messagesCaller_onAnOpenAiProvider_anthropicHeadersAreDroppedQuietly() throws Exception {
        // forward_headers: ["*"] on this provider: still none of them goes to an OpenAI-type upstream.
        HttpResponse<String> r = send(MESSAGES, messagesBody("model-a"), "x-api-key", TestGateway.KEY,
                "anthropic-version", "2023-06-01", "anthropic-beta", "some-beta", "x-trace", "t-1");
        assertThat(r.statusCode()).isEqualTo(200);
        ScriptedUpstream.Received got = up.received.get(0);
        assertThat(got.uri()).isEqualTo("/v1/chat/completions");
        assertThat(got.headers()).doesNotContainKeys("anthropic-version", "anthropic-beta", "vendor-version")
                .containsEntry("x-trace", "t-1");
    }

    @Test
    void vendorVersion_goesUpstreamAsAnthropicVersion() throws Exception {
        HttpResponse<String> r = send(MESSAGES, messagesBody("claude-a"), "x-api-key", TestGateway.KEY,
                "vendor-version", "2023-06-01");
        assertThat(r.statusCode()).isEqualTo(200);
        ScriptedUpstream.Received got = up.received.get(0);
        assertThat(got.all("anthropic-version")).containsExactly("2023-06-01");
        assertThat(got.headers()).doesNotContainKey("vendor-version");
    }

    @Test
    void anthropicBetaDrop_sendsNoBeta() throws Exception {
        HttpResponse<String> r = send(MESSAGES, messagesBody("claude-drop"), "x-api-key", TestGateway.KEY,
                "anthropic-version", "2023-06-01", "anthropic-beta", "prompt-caching-2024-07-31");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(up.received.get(0).headers()).doesNotContainKey("anthropic-beta")
                .containsEntry("anthropic-version", "2023-06-01");
    }

    @Test
    void anthropicBetaAllowList_keepsOnlyListedValues() throws Exception {
        HttpResponse<String> r = send(MESSAGES, messagesBody("claude-list"), "x-api-key", TestGateway.KEY,
                "anthropic-version", "2023-06-01",
                "anthropic-beta", "prompt-caching-2024-07-31, secret-beta-2099-01-01,files-api-2025-04-14",
                "anthropic-beta", "files-api-2025-04-14",
                "anthropic-beta", "unlisted-2025-01-01");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(up.received.get(0).all("anthropic-beta"))
                .containsExactly("prompt-caching-2024-07-31,files-api-2025-04-14", "files-api-2025-04-14");
    }

    // ---- helpers

    private static String messagesBody(String model) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":16,\"messages\":" + USER + "}";
    }

    /** POST with exactly these headers; a name given twice is sent as two header lines. */
    private static HttpResponse<String> send(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder b = gw.post(path, body);
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return gw.http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
