package io.modelgateway.core.google;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.types.Content;
import com.google.genai.types.GenerationConfig;
import com.google.genai.types.Tool;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.testing.GoogleFake;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The vertex and gemini provider types end to end: a real gateway on loopback in front of {@link GoogleFake} (itself
 * checked by Google's SDK in {@link GoogleFakeTest}), called in both caller styles, streaming and not. What the
 * gateway sent is read back with Google's own types (google-genai), so a field the translators misname does not
 * survive the round trip.
 */
class GoogleProvidersEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final RecordingObserver records = new RecordingObserver();
    private static GoogleFake fake;
    private static TestGateway gateway;

    @BeforeAll
    static void start() throws Exception {
        fake = GoogleFake.start();
        Path sa = fake.writeServiceAccount(Files.createTempDirectory("vertex-sa"));
        String providers = """
                  gem:
                    type: gemini
                    base_url: %s
                    api_key: %s
                  gcp:
                    type: vertex
                    base_url: %s
                    project: %s
                    location: %s
                    credentials_file: %s
                """.formatted(fake.url(), GoogleFake.API_KEY, fake.url(), GoogleFake.PROJECT, GoogleFake.LOCATION, sa);
        String models = """
                  gem-flash: {deployments: [{provider: gem, model: gemini-2.5-flash}]}
                  vx-pro: {deployments: [{provider: gcp, model: gemini-2.5-pro}]}
                  vx-claude: {deployments: [{provider: gcp, model: "claude-sonnet-4-5@20250929"}]}
                  vx-embed: {type: embedding, supports_dimensions: true,
                             deployments: [{provider: gcp, model: text-embedding-005}]}
                  vx-gemini-embed: {type: embedding, deployments: [{provider: gcp, model: gemini-embedding-001}]}
                  gem-embed: {type: embedding, supports_dimensions: true,
                              deployments: [{provider: gem, model: gemini-embedding-001}]}
                """;
        gateway = TestGateway.start(TestGateway.simulatorConfig(providers, models), records);
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        fake.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        fake.seen.clear();
    }

    private static String chat(String model, boolean stream, String extra) {
        return """
                {"model":"%s","stream":%s,"messages":[{"role":"system","content":"Be brief."},
                 {"role":"user","content":"hello gemini"}]%s}""".formatted(model, stream, extra);
    }

    private static String messages(String model, boolean stream) {
        return """
                {"model":"%s","stream":%s,"max_tokens":100,"system":"Be brief.",
                 "messages":[{"role":"user","content":"hello claude caller"}]}""".formatted(model, stream);
    }

    /** The request the fake got, checked field by field with Google's own types. */
    private static GoogleFake.Seen sentAndReadByGoogleTypes() throws Exception {
        GoogleFake.Seen s = fake.seen.peek();
        assertThat(s).as("the fake got the request").isNotNull();
        for (JsonNode c : s.body().get("contents")) {
            assertThat(JSON.readTree(Content.fromJson(c.toString()).toJson())).isEqualTo(c);
        }
        JsonNode system = s.body().get("systemInstruction");
        if (system != null) {
            assertThat(JSON.readTree(Content.fromJson(system.toString()).toJson())).isEqualTo(system);
        }
        for (JsonNode t : s.body().path("tools")) {
            assertThat(JSON.readTree(Tool.fromJson(t.toString()).toJson())).isEqualTo(t);
        }
        JsonNode config = s.body().get("generationConfig");
        if (config != null) {
            assertThat(JSON.readTree(GenerationConfig.fromJson(config.toString()).toJson())).isEqualTo(config);
        }
        return s;
    }

    private static void assertUsageRecorded(HttpResponse<String> r) throws Exception {
        ExchangeRecord rec = records.of(r);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.inputTokens()).isEqualTo(21);
        assertThat(rec.cachedInputTokens()).isEqualTo(8);
        assertThat(rec.outputTokens()).isEqualTo(12); // 7 candidates + 5 thoughts
        assertThat(rec.reasoningTokens()).isEqualTo(5);
    }

    @Test
    void gemini_chatCaller_nonStream_answerUsageAndTheApiKeyUpstream() throws Exception {
        HttpResponse<String> r = gateway.call("/api/v1/chat/completions", chat("gem-flash", false, ""));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/choices/0/message/content").asText()).isEqualTo("Gemini says: hello gemini");
        assertThat(body.at("/choices/0/finish_reason").asText()).isEqualTo("stop");
        assertThat(body.at("/usage/prompt_tokens").asLong()).isEqualTo(21);
        assertThat(body.at("/usage/prompt_tokens_details/cached_tokens").asLong()).isEqualTo(8);
        assertThat(body.at("/usage/completion_tokens").asLong()).isEqualTo(12);
        assertThat(body.at("/usage/completion_tokens_details/reasoning_tokens").asLong()).isEqualTo(5);
        GoogleFake.Seen s = sentAndReadByGoogleTypes();
        assertThat(s.path()).isEqualTo("/v1beta/models/gemini-2.5-flash:generateContent");
        assertThat(s.apiKey()).isEqualTo(GoogleFake.API_KEY);
        assertThat(s.authorization()).isNull();
        assertThat(s.body().at("/systemInstruction/parts/0/text").asText()).isEqualTo("Be brief.");
        assertThat(r.body()).doesNotContain(GoogleFake.API_KEY);
        assertUsageRecorded(r);
    }

    @Test
    void vertex_chatCaller_stream_deltasDoneAndABearerTokenFromTheServiceAccount() throws Exception {
        HttpResponse<String> r = gateway.call("/api/v1/chat/completions",
                chat("vx-pro", true, ",\"stream_options\":{\"include_usage\":true}"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        StringBuilder text = new StringBuilder();
        JsonNode usage = null;
        for (String line : r.body().split("\n")) {
            if (line.startsWith("data: {")) {
                JsonNode chunk = JSON.readTree(line.substring(6));
                text.append(chunk.at("/choices/0/delta/content").asText(""));
                if (chunk.hasNonNull("usage")) {
                    usage = chunk.get("usage");
                }
            }
        }
        assertThat(text.toString()).isEqualTo("Gemini says: hello gemini");
        assertThat(r.body()).endsWith("data: [DONE]\n\n");
        assertThat(usage).isNotNull();
        assertThat(usage.path("completion_tokens").asLong()).isEqualTo(12);
        GoogleFake.Seen s = sentAndReadByGoogleTypes();
        assertThat(s.path()).isEqualTo("/v1/projects/test-project/locations/us-east5/publishers/google/models/"
                + "gemini-2.5-pro:streamGenerateContent");
        assertThat(s.query()).isEqualTo("alt=sse");
        assertThat(s.authorization()).startsWith("Bearer ya29.fake-");
        assertThat(s.apiKey()).isNull();
        assertUsageRecorded(r);
    }

    @Test
    void vertex_messagesCaller_nonStream_andGemini_messagesCaller_stream() throws Exception {
        HttpResponse<String> r = gateway.call("/api/v1/messages", messages("vx-pro", false));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/content/0/type").asText()).isEqualTo("text");
        assertThat(body.at("/content/0/text").asText()).isEqualTo("Gemini says: hello claude caller");
        assertThat(body.at("/stop_reason").asText()).isEqualTo("end_turn");
        assertThat(body.at("/usage/input_tokens").asLong()).isEqualTo(13); // 21 - 8 read from the cache
        assertThat(body.at("/usage/cache_read_input_tokens").asLong()).isEqualTo(8);
        assertThat(body.at("/usage/output_tokens").asLong()).isEqualTo(12);
        assertThat(sentAndReadByGoogleTypes().body().at("/generationConfig/maxOutputTokens").asInt()).isEqualTo(100);
        assertUsageRecorded(r);

        records.clear();
        fake.seen.clear();
        HttpResponse<String> s = gateway.call("/api/v1/messages", messages("gem-flash", true));
        assertThat(s.statusCode()).as(s.body()).isEqualTo(200);
        List<String> events = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (String line : s.body().split("\n")) {
            if (line.startsWith("event: ")) {
                events.add(line.substring(7));
            } else if (line.startsWith("data: ") && line.contains("\"text_delta\"")) {
                text.append(JSON.readTree(line.substring(6)).at("/delta/text").asText());
            }
        }
        assertThat(events).startsWith("message_start", "content_block_start").endsWith("message_delta",
                "message_stop");
        assertThat(text.toString()).isEqualTo("Gemini says: hello claude caller");
        sentAndReadByGoogleTypes();
        assertUsageRecorded(s);
    }

    @Test
    void tools_chatCallerGetsToolCalls_fromAFunctionCall() throws Exception {
        String tools = """
                ,"tools":[{"type":"function","function":{"name":"get_weather","description":"weather",
                 "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]""";
        HttpResponse<String> r = gateway.call("/api/v1/chat/completions", chat("gem-flash", false, tools));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
        assertThat(body.at("/choices/0/message/tool_calls/0/function/name").asText()).isEqualTo("get_weather");
        assertThat(JSON.readTree(body.at("/choices/0/message/tool_calls/0/function/arguments").asText())
                .path("city").asText()).isEqualTo("Paris");
        GoogleFake.Seen s = sentAndReadByGoogleTypes();
        assertThat(s.body().at("/tools/0/functionDeclarations/0/name").asText()).isEqualTo("get_weather");
    }

    @Test
    void upstream429_isTheCallersRateLimitErrorWithRetryAfter_inBothStyles() throws Exception {
        fake.failNext = 429;
        fake.failCount = 100; // every attempt, retries included
        try {
            HttpResponse<String> r = gateway.call("/api/v1/chat/completions", chat("gem-flash", false, ""));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
            assertThat(r.headers().firstValue("retry-after")).contains("7");
            assertThat(JSON.readTree(r.body()).at("/error/type").asText()).isEqualTo("requests"); // OpenAI's 429 type
            HttpResponse<String> m = gateway.call("/api/v1/messages", messages("vx-pro", false));
            assertThat(m.statusCode()).as(m.body()).isEqualTo(429);
            assertThat(JSON.readTree(m.body()).at("/error/type").asText()).isEqualTo("rate_limit_error");
            assertThat(m.body()).doesNotContain(GoogleFake.API_KEY).doesNotContain("ya29");
            fake.failNext = 503;
            HttpResponse<String> o = gateway.call("/api/v1/messages", messages("gem-flash", false));
            assertThat(o.statusCode()).as(o.body()).isEqualTo(529);
            assertThat(JSON.readTree(o.body()).at("/error/type").asText()).isEqualTo("overloaded_error");
        } finally {
            fake.failCount = 0;
        }
    }

    @Test
    void vertex_manyConcurrentRequests_shareOneTokenGrant() throws Exception {
        // A service account of its own (a new key: no token cached yet), so the first requests find no valid token.
        try (GoogleFake own = GoogleFake.start();
                TestGateway gw = TestGateway.start(TestGateway.simulatorConfig("""
                          gcp2:
                            type: vertex
                            base_url: %s
                            project: %s
                            location: %s
                            credentials_file: %s
                        """.formatted(own.url(), GoogleFake.PROJECT, GoogleFake.LOCATION,
                        own.writeServiceAccount(Files.createTempDirectory("vertex-sa2"))),
                        "  vx2: {deployments: [{provider: gcp2, model: gemini-2.5-pro}]}\n"))) {
            List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                calls.add(gw.http.sendAsync(gw.post("/api/v1/chat/completions", chat("vx2", i % 2 == 0, ""))
                        .header("authorization", "Bearer " + TestGateway.KEY).build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> c : calls) {
                HttpResponse<String> r = c.get();
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            assertThat(own.tokenRequests()).as("one grant for all of them").isEqualTo(1);
            assertThat(own.seen).extracting(GoogleFake.Seen::authorization).containsOnly(
                    own.seen.peek().authorization());
        }
    }

    @Test
    void vertex_tokensNearTheirEnd_areRefreshedWhileRequestsGoOnWithTheValidOne() throws Exception {
        try (GoogleFake own = GoogleFake.start();
                TestGateway gw = TestGateway.start(TestGateway.simulatorConfig("""
                          gcp3:
                            type: vertex
                            base_url: %s
                            project: %s
                            location: %s
                            credentials_file: %s
                        """.formatted(own.url(), GoogleFake.PROJECT, GoogleFake.LOCATION,
                        own.writeServiceAccount(Files.createTempDirectory("vertex-sa3"))),
                        "  vx3: {deployments: [{provider: gcp3, model: gemini-2.5-pro}]}\n"))) {
            // Tokens of 200 s are inside the 300 s refresh window from the start: every use asks for a refresh,
            // only one runs at a time, and the requests meanwhile go out with the token still valid.
            own.tokenSeconds = 200;
            for (int round = 0; round < 5; round++) {
                List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    calls.add(gw.http.sendAsync(gw.post("/api/v1/chat/completions", chat("vx3", false, ""))
                            .header("authorization", "Bearer " + TestGateway.KEY).build(),
                            HttpResponse.BodyHandlers.ofString()));
                }
                for (CompletableFuture<HttpResponse<String>> c : calls) {
                    HttpResponse<String> r = c.get();
                    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                }
            }
            assertThat(own.tokenRequests()).as("refreshed, and never once per request").isBetween(2, 39);
            assertThat(own.seen.stream().map(GoogleFake.Seen::authorization).distinct().count()).isGreaterThan(1);
        }
    }

    @Test
    void vertex_aKeyTheTokenEndpointRefuses_isAClear503WithoutSecrets() throws Exception {
        try (GoogleFake other = GoogleFake.start()) {
            // other's key, but the token_uri of the main fake, which does not know it: the grant is refused.
            Path sa = other.writeServiceAccount(Files.createTempDirectory("vertex-bad"));
            Files.writeString(sa, Files.readString(sa).replace(other.tokenUri(), fake.tokenUri()));
            try (TestGateway gw = TestGateway.start(TestGateway.simulatorConfig("""
                      bad:
                        type: vertex
                        base_url: %s
                        project: %s
                        location: %s
                        credentials_file: %s
                    """.formatted(fake.url(), GoogleFake.PROJECT, GoogleFake.LOCATION, sa),
                    "  vxbad: {deployments: [{provider: bad, model: gemini-2.5-pro}]}\n"))) {
                HttpResponse<String> r = gw.call("/api/v1/chat/completions", chat("vxbad", false, ""));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
                assertThat(JSON.readTree(r.body()).at("/error/message").asText()).contains("access token");
                assertThat(r.body()).doesNotContain("PRIVATE KEY").doesNotContain("ya29");
            }
        }
    }

    @Test
    void claudeOnVertex_messagesCallerNearPassThrough_chatCallerTranslated_streamsToo() throws Exception {
        String claudePath = "/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/"
                + "claude-sonnet-4-5@20250929";
        HttpResponse<String> r = gateway.call("/api/v1/messages", messages("vx-claude", false));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/content/0/text").asText()).isEqualTo("Claude on Vertex says: hello claude caller");
        assertThat(body.at("/usage/cache_read_input_tokens").asLong()).isEqualTo(4);
        GoogleFake.Seen s = fake.seen.peek();
        assertThat(s.path()).isEqualTo(claudePath + ":rawPredict");
        assertThat(s.authorization()).startsWith("Bearer ya29.fake-");
        assertThat(s.body().has("model")).isFalse();
        assertThat(s.body().path("anthropic_version").asText()).isEqualTo("vertex-2023-10-16");
        assertThat(s.body().path("max_tokens").asInt()).isEqualTo(100);
        ExchangeRecord rec = records.of(r);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.inputTokens()).isEqualTo(15);
        assertThat(rec.outputTokens()).isEqualTo(9);

        fake.seen.clear();
        HttpResponse<String> c = gateway.call("/api/v1/chat/completions", chat("vx-claude", true, ""));
        assertThat(c.statusCode()).as(c.body()).isEqualTo(200);
        StringBuilder text = new StringBuilder();
        for (String line : c.body().split("\n")) {
            if (line.startsWith("data: {")) {
                text.append(JSON.readTree(line.substring(6)).at("/choices/0/delta/content").asText(""));
            }
        }
        assertThat(text.toString()).isEqualTo("Claude on Vertex says: hello gemini");
        assertThat(c.body()).endsWith("data: [DONE]\n\n");
        GoogleFake.Seen t = fake.seen.peek();
        assertThat(t.path()).isEqualTo(claudePath + ":streamRawPredict");
        assertThat(t.body().has("model")).isFalse();
        assertThat(t.body().path("anthropic_version").asText()).isEqualTo("vertex-2023-10-16");
        assertThat(t.body().at("/system").toString()).contains("Be brief.");
    }

    // ------------------------------------------------------------------ embeddings (GD-31)

    /** The float32 vector the fake makes for a text, as the gateway must hand it on. */
    private static List<Float> vector(String text, int dims) {
        List<Float> v = new ArrayList<>();
        for (float f : GoogleFake.vector(text, dims)) {
            v.add(f);
        }
        return v;
    }

    private static List<Float> floats(JsonNode array) {
        List<Float> v = new ArrayList<>();
        array.forEach(n -> v.add(n.floatValue()));
        return v;
    }

    /** Standard Base64 of little-endian float32 values (contract 4.4), decoded as a client would. */
    private static List<Float> fromBase64(String b64) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(java.util.Base64.getDecoder().decode(b64))
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        List<Float> v = new ArrayList<>();
        while (b.remaining() >= 4) {
            v.add(b.getFloat());
        }
        return v;
    }

    @Test
    void vertex_embeddings_predictInInputOrder_dimensionsAndTokenCountsAsUsage() throws Exception {
        HttpResponse<String> r = gateway.call("/api/v1/embeddings", """
                {"model":"vx-embed","input":["alpha beta gamma","delta","epsilon zeta"],"dimensions":6,
                 "user":"u-1"}""");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.path("object").asText()).isEqualTo("list");
        assertThat(answer.path("model").asText()).isEqualTo("text-embedding-005");
        JsonNode data = answer.path("data");
        assertThat(data).hasSize(3);
        String[] inputs = {"alpha beta gamma", "delta", "epsilon zeta"};
        for (int i = 0; i < 3; i++) {
            assertThat(data.get(i).path("object").asText()).isEqualTo("embedding");
            assertThat(data.get(i).path("index").asInt()).isEqualTo(i);
            assertThat(floats(data.get(i).path("embedding"))).isEqualTo(vector(inputs[i], 6));
        }
        // Vertex's statistics.token_count per input, summed: 3 + 1 + 2.
        assertThat(answer.path("usage").path("prompt_tokens").asLong()).isEqualTo(6);
        assertThat(answer.path("usage").path("total_tokens").asLong()).isEqualTo(6);
        ExchangeRecord rec = records.of(r);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.inputTokens()).isEqualTo(6);
        assertThat(rec.outputTokens()).isZero();
        GoogleFake.Seen s = fake.seen.peek();
        assertThat(s.path()).isEqualTo("/v1/projects/test-project/locations/us-east5/publishers/google/models/"
                + "text-embedding-005:predict");
        assertThat(s.authorization()).startsWith("Bearer ya29.fake-");
        assertThat(s.body().path("instances").get(1).path("content").asText()).isEqualTo("delta");
        assertThat(s.body().path("parameters").path("outputDimensionality").asInt()).isEqualTo(6);
        assertThat(s.body().has("user")).isFalse();
    }

    @Test
    void gemini_embeddings_base64ByTheGateway_andTheGatewaysOwnCountAsAnEstimate() throws Exception {
        HttpResponse<String> r = gateway.call("/api/v1/embeddings", """
                {"model":"gem-embed","input":["one text","another text here"],"encoding_format":"base64"}""");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        JsonNode data = answer.path("data");
        assertThat(data).hasSize(2);
        assertThat(data.get(0).path("embedding").isTextual()).isTrue();
        assertThat(fromBase64(data.get(0).path("embedding").asText()))
                .isEqualTo(vector("one text", GoogleFake.DEFAULT_DIMENSIONS));
        assertThat(fromBase64(data.get(1).path("embedding").asText()))
                .isEqualTo(vector("another text here", GoogleFake.DEFAULT_DIMENSIONS));
        assertThat(data.get(1).path("index").asInt()).isEqualTo(1);
        long usage = answer.path("usage").path("prompt_tokens").asLong();
        assertThat(usage).as("the gateway's count of 5 words").isBetween(4L, 8L);
        ExchangeRecord rec = records.of(r);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.inputTokens()).isEqualTo(usage);
        GoogleFake.Seen s = fake.seen.peek();
        assertThat(s.path()).isEqualTo("/v1beta/models/gemini-embedding-001:batchEmbedContents");
        assertThat(s.apiKey()).isEqualTo(GoogleFake.API_KEY);
        assertThat(s.body().path("requests").get(0).path("model").asText()).isEqualTo("models/gemini-embedding-001");
        assertThat(s.body().path("requests").get(1).path("content").path("parts").get(0).path("text").asText())
                .isEqualTo("another text here");
    }

    @Test
    void embeddings_refusals_tokenIdsDimensionsAndTheCloudsOwnLimit_inOpenAiStyle() throws Exception {
        HttpResponse<String> ids = gateway.call("/api/v1/embeddings", """
                {"model":"gem-embed","input":[[15339,1917]]}""");
        assertThat(ids.statusCode()).as(ids.body()).isEqualTo(400);
        JsonNode e = JSON.readTree(ids.body()).path("error");
        assertThat(e.path("code").asText()).isEqualTo("unsupported_value");
        assertThat(e.path("param").asText()).isEqualTo("input");
        HttpResponse<String> dims = gateway.call("/api/v1/embeddings", """
                {"model":"vx-gemini-embed","input":"x","dimensions":8}""");
        assertThat(dims.statusCode()).as(dims.body()).isEqualTo(400);
        assertThat(JSON.readTree(dims.body()).path("error").path("param").asText()).isEqualTo("dimensions");
        // Vertex takes one instance per request for gemini-embedding-001: its 400 reaches the caller in its style.
        HttpResponse<String> many = gateway.call("/api/v1/embeddings", """
                {"model":"vx-gemini-embed","input":["a","b"]}""");
        assertThat(many.statusCode()).as(many.body()).isEqualTo(400);
        JsonNode m = JSON.readTree(many.body()).path("error");
        assertThat(m.path("type").asText()).isEqualTo("invalid_request_error");
        assertThat(m.path("message").asText()).contains("instances per request");
        assertThat(fake.seen).hasSize(1); // the refusals before it sent nothing
        HttpResponse<String> one = gateway.call("/api/v1/embeddings", """
                {"model":"vx-gemini-embed","input":"a single one"}""");
        assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
        assertThat(floats(JSON.readTree(one.body()).path("data").get(0).path("embedding")))
                .isEqualTo(vector("a single one", GoogleFake.DEFAULT_DIMENSIONS));
    }

    @Test
    void embeddings_upstream429_isRetryableRateLimitWithRetryAfter() throws Exception {
        fake.failNext = 429;
        fake.failCount = 1;
        HttpResponse<String> r = gateway.call("/api/v1/embeddings", """
                {"model":"gem-embed","input":"hi"}""");
        fake.failCount = 0;
        assertThat(r.statusCode()).as(r.body()).isEqualTo(429);
        assertThat(r.headers().firstValue("retry-after")).contains("7");
        assertThat(JSON.readTree(r.body()).path("error").path("type").asText()).isNotEmpty();
        assertThat(r.body()).doesNotContain(GoogleFake.API_KEY);
    }
}
