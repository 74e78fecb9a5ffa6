package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each token type end to end (contract 8.8): the simulator reports 1000 input tokens read from the prompt cache,
 * 100 written to it and 8 of its 20 output tokens as reasoning, in its own style's fields; the caller sees them in
 * its style's fields, the same style or translated, stream or not; the exchange record (what the access log, the
 * metrics and the token limits read) holds each type once.
 */
class TokenTypesEndToEndTest {
    private static final long CACHED = 1000;
    private static final long CACHE_WRITE = 100;
    private static final long REASONING = 8;
    private static final long OUTPUT = 20;
    private static final String[] SIM_HEADERS = {"x-sim-cached-tokens", "" + CACHED, "x-sim-cache-write-tokens",
        "" + CACHE_WRITE, "x-sim-reasoning-tokens", "" + REASONING, "x-sim-output-tokens", "" + OUTPUT};

    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> {
        });
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  up-openai: {type: openai, base_url: "%s/v1", api_key: k, forward_headers: ["x-sim-*"]}
                  up-anthropic: {type: anthropic, base_url: "%s", api_key: k, forward_headers: ["x-sim-*"]}
                models:
                  gpt: {deployments: [{provider: up-openai, model: sim-gpt-1}]}
                  claude: {deployments: [{provider: up-anthropic, model: sim-claude-1}]}
                """.formatted(base, base), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    private static JsonNode json(String s) throws Exception {
        return SimulatorEndToEndTest.JSON.readTree(s);
    }

    /** The record holds every type once: input is all input (the cache's parts included), output all output. */
    private static ExchangeRecord assertRecord(HttpResponse<String> r) throws Exception {
        ExchangeRecord rec = records.of(r);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.cachedInputTokens()).isEqualTo(CACHED);
        assertThat(rec.cacheWriteTokens()).isEqualTo(CACHE_WRITE);
        assertThat(rec.uncachedInputTokens()).isPositive();
        assertThat(rec.inputTokens()).isEqualTo(rec.uncachedInputTokens() + CACHED + CACHE_WRITE);
        assertThat(rec.outputTokens()).isEqualTo(OUTPUT);
        assertThat(rec.reasoningTokens()).isEqualTo(REASONING);
        assertThat(rec.totalTokens()).isEqualTo(rec.inputTokens() + OUTPUT);
        return rec;
    }

    /** OpenAI's usage: prompt_tokens includes the cache reads and writes; cached_tokens is the reads. */
    private static void assertChatUsage(JsonNode usage, ExchangeRecord rec) {
        assertThat(usage.path("prompt_tokens").asLong()).as(usage.toString()).isEqualTo(rec.inputTokens());
        assertThat(usage.at("/prompt_tokens_details/cached_tokens").asLong()).isEqualTo(CACHED);
        assertThat(usage.at("/prompt_tokens_details/cache_write_tokens").asLong()).isEqualTo(CACHE_WRITE);
        assertThat(usage.path("completion_tokens").asLong()).isEqualTo(OUTPUT);
        assertThat(usage.at("/completion_tokens_details/reasoning_tokens").asLong()).isEqualTo(REASONING);
        assertThat(usage.path("total_tokens").asLong()).isEqualTo(rec.inputTokens() + OUTPUT);
    }

    /** Anthropic's usage: input_tokens excludes the cache reads and writes, which have their own counters. */
    private static void assertMessagesUsage(JsonNode usage, ExchangeRecord rec) {
        assertThat(usage.path("input_tokens").asLong()).as(usage.toString()).isEqualTo(rec.uncachedInputTokens());
        assertThat(usage.path("cache_read_input_tokens").asLong()).isEqualTo(CACHED);
        assertThat(usage.path("cache_creation_input_tokens").asLong()).isEqualTo(CACHE_WRITE);
        assertThat(usage.path("output_tokens").asLong()).isEqualTo(OUTPUT);
        assertThat(usage.at("/output_tokens_details/thinking_tokens").asLong()).isEqualTo(REASONING);
    }

    /** A messages stream's usage as a client assembles it: message_start's, updated by message_delta's. */
    private static JsonNode messagesStreamUsage(String body) throws Exception {
        ObjectNode usage = SimulatorEndToEndTest.JSON.createObjectNode();
        for (String event : body.split("\n\n")) {
            int data = event.indexOf("data: ");
            if (data < 0) {
                continue;
            }
            JsonNode e = json(event.substring(data + 6));
            switch (e.path("type").asText()) {
                case "message_start" -> usage.setAll((ObjectNode) e.at("/message/usage"));
                case "message_delta" -> usage.setAll((ObjectNode) e.path("usage"));
                default -> {
                }
            }
        }
        return usage;
    }

    private static String chatBody(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"stream_options\":"
                + (stream ? "{\"include_usage\":true}" : "null")
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    }

    private static String messagesBody(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":100,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    }

    private static JsonNode lastUsageChunk(String body) throws Exception {
        List<JsonNode> chunks = SimulatorEndToEndTest.chatChunks(body);
        return chunks.get(chunks.size() - 1).path("usage");
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void chatCaller_openAiProvider(boolean stream) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", chatBody("gpt", stream), SIM_HEADERS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        ExchangeRecord rec = assertRecord(r);
        assertChatUsage(stream ? lastUsageChunk(r.body()) : json(r.body()).path("usage"), rec);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void messagesCaller_anthropicProvider(boolean stream) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", messagesBody("claude", stream), SIM_HEADERS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        ExchangeRecord rec = assertRecord(r);
        assertMessagesUsage(stream ? messagesStreamUsage(r.body()) : json(r.body()).path("usage"), rec);
    }

    /** An Anthropic answer re-expressed as chat: prompt_tokens = input + cache read + cache write. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void chatCaller_anthropicProvider_promptTokensIncludeTheCache(boolean stream) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", chatBody("claude", stream), SIM_HEADERS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        ExchangeRecord rec = assertRecord(r);
        assertChatUsage(stream ? lastUsageChunk(r.body()) : json(r.body()).path("usage"), rec);
    }

    /** A chat answer re-expressed as Anthropic's: input_tokens = prompt_tokens − cache read − cache write. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void messagesCaller_openAiProvider_inputTokensExcludeTheCache(boolean stream) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", messagesBody("gpt", stream), SIM_HEADERS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        ExchangeRecord rec = assertRecord(r);
        assertMessagesUsage(stream ? messagesStreamUsage(r.body()) : json(r.body()).path("usage"), rec);
    }

    @Test
    void metrics_countEachTypeUnderItsLabel() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", messagesBody("claude", false), SIM_HEADERS);
        assertRecord(r);
        String text = gw.get("/metrics").body();
        for (String type : List.of("cached_input", "cache_write", "reasoning")) {
            assertThat(text).contains("model=\"claude\",type=\"" + type + "\"}");
        }
        assertThat(text).contains(
                "gateway_tokens_total{direction=\"input\",key=\"test\",model=\"claude\",type=\"cached_input\"}");
    }
}
