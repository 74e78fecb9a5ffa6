package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.usage.InputTokenCounter;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway contract Claude Code relies on, over real sockets to the standalone simulator: {@code HEAD /},
 * {@code /v1/messages?beta=true} with {@code anthropic-beta} and {@code anthropic-version} forwarded byte for byte,
 * and {@code /v1/messages/count_tokens} (passed to an Anthropic provider, counted by the gateway for an OpenAI-style
 * one, never accounted as generation); and the count in a translated stream's {@code message_start} (contract 8.9).
 */
class ClaudeCodeContractEndToEndTest {
    /** OpenAI's API reference counts this conversation as 19 prompt tokens. */
    private static final String REFERENCE = "{\"model\":\"%s\",\"system\":\"You are a helpful assistant.\","
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";
    private static final String BETAS = "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14";

    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    private static final List<Map<String, String>> seen = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> seen.add(Map.of(
                ":path", req.uri(),
                ":body", req.content().toString(StandardCharsets.UTF_8),
                "anthropic-beta", String.join("\n", req.headers().getAll("anthropic-beta")),
                "anthropic-version", String.valueOf(req.headers().get("anthropic-version")))));
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  up-openai: {type: openai, base_url: "%s/v1", api_key: k}
                  up-anthropic: {type: anthropic, base_url: "%s", api_key: k}
                  sim: {type: simulator}
                models:
                  gpt: {deployments: [{provider: up-openai, model: sim-gpt-1}]}
                  claude: {deployments: [{provider: up-anthropic, model: sim-claude-1}]}
                  local: {deployments: [{provider: sim, model: sim-local}]}
                """.formatted(base, base), records);
        // An openai provider is configured: the gateway loads its tokenizer at start, on a thread of its own.
        Eventually.until(Duration.ofSeconds(120), InputTokenCounter::ready);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    private static JsonNode json(String s) throws Exception {
        return SimulatorEndToEndTest.JSON.readTree(s);
    }

    private static HttpResponse<String> countTokens(String model, String... headers) throws Exception {
        return gw.call("/api/v1/messages/count_tokens", REFERENCE.formatted(model), headers);
    }

    @Test
    void headProbe_ofTheBaseUrl_is200WithNoBody() throws Exception {
        for (String path : List.of("/", "/api")) {
            HttpResponse<String> r = gw.http.send(HttpRequest.newBuilder(URI.create(gw.url(path)))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            assertThat(r.body()).isEmpty();
        }
    }

    @Test
    void betaQuery_routesByPath_andTheAnthropicHeadersReachTheProviderAsSent() throws Exception {
        seen.clear();
        HttpResponse<String> r = gw.call("/api/v1/messages?beta=true", "{\"model\":\"claude\",\"max_tokens\":5,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", "anthropic-beta", BETAS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(json(r.body()).path("type").asText()).isEqualTo("message");
        Map<String, String> up = seen.get(seen.size() - 1);
        assertThat(up.get(":path")).isEqualTo("/v1/messages");
        assertThat(up.get("anthropic-beta")).isEqualTo(BETAS);
        assertThat(up.get("anthropic-version")).isEqualTo("2023-06-01");
    }

    /** Prompt caching keeps working through the gateway: cache_control and the system prompt arrive as sent. */
    @Test
    void cacheControlAndSystem_reachTheAnthropicProviderUnchanged() throws Exception {
        seen.clear();
        String body = "{\"model\":\"claude\",\"max_tokens\":5,\"system\":[{\"type\":\"text\",\"text\":\"Long "
                + "instructions.\",\"cache_control\":{\"type\":\"ephemeral\"}}],\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"hello\",\"cache_control\":{\"type\":\"ephemeral\","
                + "\"ttl\":\"1h\"}}]}]}";
        HttpResponse<String> r = gw.call("/api/v1/messages?beta=true", body, "anthropic-beta", BETAS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(seen.get(seen.size() - 1).get(":body"))
                .isEqualTo(body.replace("\"model\":\"claude\"", "\"model\":\"sim-claude-1\""));
    }

    @Test
    void countTokens_anthropicProvider_isPassedThrough_andNotAccountedAsGeneration() throws Exception {
        seen.clear();
        HttpResponse<String> r = countTokens("claude", "anthropic-beta", BETAS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        long n = json(r.body()).path("input_tokens").asLong();
        assertThat(n).isPositive();
        Map<String, String> up = seen.get(seen.size() - 1);
        assertThat(up.get(":path")).isEqualTo("/v1/messages/count_tokens");
        assertThat(up.get("anthropic-beta")).isEqualTo(BETAS);
        assertNotGeneration(records.of(r));

        // The same body as a messages request: the simulator's input count is the one count_tokens gave.
        HttpResponse<String> m = gw.call("/api/v1/messages", REFERENCE.formatted("claude")
                .replace("{\"model\":\"claude\",", "{\"model\":\"claude\",\"max_tokens\":5,"));
        assertThat(json(m.body()).at("/usage/input_tokens").asLong()).isEqualTo(n);
    }

    @Test
    void countTokens_openAiProvider_isCountedByTheGatewaysTokenizer() throws Exception {
        seen.clear();
        HttpResponse<String> r = countTokens("gpt");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(json(r.body())).isEqualTo(json("{\"input_tokens\":19}"));
        assertThat(seen).isEmpty(); // OpenAI has no such endpoint: nothing was sent upstream
        assertNotGeneration(records.of(r));
    }

    @Test
    void countTokens_simulatorProvider_answers() throws Exception {
        HttpResponse<String> r = countTokens("local");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(json(r.body()).path("input_tokens").asLong()).isPositive();
        assertNotGeneration(records.of(r));
    }

    @Test
    void countTokens_badBody_isAnAnthropicStyle400() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages/count_tokens", "{\"model\":\"gpt\"}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(json(r.body()).path("type").asText()).isEqualTo("error");
        assertThat(json(r.body()).at("/error/type").asText()).isEqualTo("invalid_request_error");
    }

    /**
     * A messages stream translated from an OpenAI-style upstream: message_start carries the count count_tokens gives
     * for the same body (LangChain's ChatAnthropic reads the input count only there), message_delta the upstream's.
     */
    @Test
    void translatedStream_messageStartCarriesTheGatewaysInputCount() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", REFERENCE.formatted("gpt")
                .replace("{\"model\":\"gpt\",", "{\"model\":\"gpt\",\"max_tokens\":5,\"stream\":true,"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String start = r.body().substring(0, r.body().indexOf("\n\n"));
        assertThat(start).startsWith("event: message_start\n");
        JsonNode usage = json(start.substring(start.indexOf("data: ") + 6)).at("/message/usage");
        assertThat(usage.path("input_tokens").asLong()).isEqualTo(19);
        assertThat(r.body()).contains("event: message_delta");
    }

    @Test
    void modelsList_withAnthropicVersion_isInAnthropicsShape() throws Exception {
        JsonNode list = json(gw.get("/api/v1/models", "x-api-key", TestGateway.KEY, "anthropic-version", "2023-06-01")
                .body());
        assertThat(list.has("object")).isFalse();
        assertThat(list.path("has_more").asBoolean(true)).isFalse();
        assertThat(list.path("first_id").asText()).isEqualTo(list.at("/data/0/id").asText());
        assertThat(list.path("last_id").asText()).isEqualTo(list.at("/data/" + (list.path("data").size() - 1) + "/id")
                .asText());
        JsonNode first = list.at("/data/0");
        assertThat(first.path("type").asText()).isEqualTo("model");
        assertThat(first.path("display_name").asText()).isNotEmpty();
        assertThat(java.time.Instant.parse(first.path("created_at").asText())).isNotNull();

        JsonNode openAi = json(gw.get("/api/v1/models", "authorization", "Bearer " + TestGateway.KEY).body());
        assertThat(openAi.path("object").asText()).isEqualTo("list");
    }

    private static void assertNotGeneration(ExchangeRecord rec) {
        assertThat(rec.endpointLabel()).isEqualTo("count_tokens");
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.status()).isEqualTo(200);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.NONE);
        assertThat(rec.totalTokens()).isZero();
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
