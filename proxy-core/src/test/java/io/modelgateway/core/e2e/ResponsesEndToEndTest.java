package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Responses API through the whole gateway (contract 12): natively on the in-process simulator, passed through to
 * an openai provider with the Responses API, translated for a chat-only openai provider and for an anthropic one (the
 * standalone simulator behind the three). What the caller's usage says and what the exchange record (the access log,
 * metrics and token limits) holds, type by type; which upstream path each deployment used; errors mid-stream.
 */
class ResponsesEndToEndTest {
    private static final long CACHED = 1000;
    private static final long CACHE_WRITE = 100;
    private static final long REASONING = 8;
    private static final long OUTPUT = 20;
    private static final String[] SIM_HEADERS = {"x-sim-cached-tokens", "" + CACHED, "x-sim-cache-write-tokens",
        "" + CACHE_WRITE, "x-sim-reasoning-tokens", "" + REASONING, "x-sim-output-tokens", "" + OUTPUT};

    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    private static final ConcurrentLinkedQueue<String> upstreamPaths = new ConcurrentLinkedQueue<>();
    private static final ConcurrentLinkedQueue<String> upstreamBodies = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null,
                req -> {
                    upstreamPaths.add(req.uri());
                    upstreamBodies.add(req.content().toString(java.nio.charset.StandardCharsets.UTF_8));
                });
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start(TestGateway.simulatorConfig("""
                  up-responses: {type: openai, base_url: "%s/v1", api_key: k, forward_headers: ["x-sim-*"]}
                  up-chat: {type: openai, base_url: "%s/v1", api_key: k, forward_headers: ["x-sim-*"],
                            responses_api: false}
                  up-anthropic: {type: anthropic, base_url: "%s", api_key: k, forward_headers: ["x-sim-*"]}
                  sim-503: {type: simulator, cooldown: off, simulator: {fault: "status=503"}}
                """.formatted(base, base, base), """
                  pass: {deployments: [{provider: up-responses, model: sim-gpt-1}]}
                  chat: {deployments: [{provider: up-chat, model: sim-gpt-2}]}
                  claude: {deployments: [{provider: up-anthropic, model: sim-claude-1}]}
                  failing: {retries: {max: 1, backoff_ms: 1}, fallbacks: [claude],
                            deployments: [{provider: sim-503, model: sim-chat-1}]}
                """), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    private static String body(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream + ",\"max_output_tokens\":100,"
                + "\"input\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
    }

    /** The events of a typed stream: each {@code data:} payload. */
    private static List<JsonNode> events(String body) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String event : body.split("\n\n")) {
            int data = event.indexOf("data: ");
            if (data >= 0) {
                out.add(SimulatorEndToEndTest.JSON.readTree(event.substring(data + 6)));
            }
        }
        return out;
    }

    /**
     * Each token type once in the record, and the caller's Responses usage in its own terms: {@code input_tokens} all
     * input (cache reads and writes included), {@code cached_tokens} the reads, reasoning inside the output. The
     * Responses API has no field for cache writes: where the provider speaks it (native, pass-through) the writes the
     * simulator was asked for are not reported, so none are recorded; translated from chat or Anthropic they are.
     */
    @ParameterizedTest(name = "{0} stream={1}")
    @CsvSource({"sim-chat,false,false", "sim-chat,true,false", "pass,false,false", "pass,true,false",
        "chat,false,true", "chat,true,true", "claude,false,true", "claude,true,true"})
    void tokenTypes_callerUsageAndRecord(String model, boolean stream, boolean writesReported) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/responses", body(model, stream), SIM_HEADERS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode response;
        if (stream) {
            List<JsonNode> events = events(r.body());
            for (int i = 0; i < events.size(); i++) {
                assertThat(events.get(i).path("sequence_number").asLong()).isEqualTo(i);
            }
            response = events.get(events.size() - 1).path("response");
            assertThat(events.get(events.size() - 1).path("type").asText()).isEqualTo("response.completed");
        } else {
            response = SimulatorEndToEndTest.JSON.readTree(r.body());
        }
        ExchangeRecord rec = records.of(r);
        assertThat(rec.endpointLabel()).isEqualTo("responses");
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.cachedInputTokens()).isEqualTo(CACHED);
        assertThat(rec.cacheWriteTokens()).isEqualTo(writesReported ? CACHE_WRITE : 0);
        assertThat(rec.uncachedInputTokens()).isPositive();
        assertThat(rec.outputTokens()).isEqualTo(OUTPUT);
        assertThat(rec.reasoningTokens()).isEqualTo(REASONING);

        JsonNode usage = response.path("usage");
        assertThat(usage.path("input_tokens").asLong()).as(usage.toString()).isEqualTo(rec.inputTokens());
        assertThat(usage.at("/input_tokens_details/cached_tokens").asLong()).isEqualTo(CACHED);
        assertThat(usage.path("output_tokens").asLong()).isEqualTo(OUTPUT);
        assertThat(usage.at("/output_tokens_details/reasoning_tokens").asLong()).isEqualTo(REASONING);
        assertThat(usage.path("total_tokens").asLong()).isEqualTo(rec.inputTokens() + OUTPUT);
    }

    /** Which upstream endpoint each deployment used: the provider's own /responses only with the Responses API. */
    @Test
    void routing_passThroughOnlyToAProviderWithTheResponsesApi() throws Exception {
        for (String[] c : new String[][] {{"pass", "/v1/responses"}, {"chat", "/v1/chat/completions"},
            {"claude", "/v1/messages"}}) {
            upstreamPaths.clear();
            HttpResponse<String> r = gw.call("/api/v1/responses", body(c[0], false));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(upstreamPaths).as(c[0]).containsExactly(c[1]);
        }
    }

    /**
     * A stream that ends with the provider's error: passed through, the provider's own {@code error} event reaches the
     * caller; translated, the caller gets {@code response.failed} with the output so far. Either way the exchange is
     * an upstream error in the record, however cleanly the HTTP response ended.
     */
    @ParameterizedTest
    @CsvSource({"sim-chat,error", "pass,error", "chat,response.failed", "claude,response.failed"})
    void streamEndingInError_isAnUpstreamError(String model, String lastType) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/responses", body(model, true), "x-sim-fault", "error_after=3");
        assertThat(r.statusCode()).isEqualTo(200);
        List<JsonNode> events = events(r.body());
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("type").asText()).as(r.body()).isEqualTo(lastType);
        assertThat(last.path("sequence_number").asLong()).isEqualTo(events.size() - 1);
        assertThat(records.of(r).outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
    }

    /**
     * GD-28 on a passed-through stream: the gateway ends it itself (a malformed event from the provider) with
     * {@code response.failed}, numbered right after the events it relayed, so the SDKs' sequence checks hold.
     */
    @Test
    void passThroughStream_endedByTheGateway_withResponseFailedNumberedInSequence() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/responses", body("pass", true), "x-sim-fault", "malformed=3");
        assertThat(r.statusCode()).isEqualTo(200);
        List<JsonNode> events = events(r.body());
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("type").asText()).as(r.body()).isEqualTo("response.failed");
        assertThat(last.path("sequence_number").asLong()).isEqualTo(events.size() - 1);
        assertThat(last.at("/response/status").asText()).isEqualTo("failed");
        assertThat(last.at("/response/error/code").asText()).isEqualTo("server_error");
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).path("sequence_number").asLong()).isEqualTo(i);
        }
        assertThat(records.of(r).outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
    }

    /**
     * Retries and fallbacks as for the other endpoints: a deployment that answers 503 is retried, then the request
     * falls back to a model on an Anthropic provider, translated for that attempt; the caller gets one response.
     */
    @Test
    void retriedThenFallsBackAcrossStyles_oneResponseForTheCaller() throws Exception {
        upstreamPaths.clear();
        HttpResponse<String> r = gw.call("/api/v1/responses", body("failing", true));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<JsonNode> events = events(r.body());
        assertThat(events.get(events.size() - 1).path("type").asText()).isEqualTo("response.completed");
        assertThat(upstreamPaths).containsExactly("/v1/messages");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.attempts()).isEqualTo(3);
    }

    /**
     * GD-29 end to end: Anthropic thinking comes back as a reasoning item whose {@code encrypted_content} carries the
     * block's signature; sent back with the function call and its output (as the Agents SDK and Codex do), it reaches
     * the provider as the same signed thinking block before the tool use.
     */
    @Test
    void reasoningItem_sentBack_reachesAnthropicAsTheSignedThinkingBlock() throws Exception {
        String tools = ",\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"parameters\":{\"type\":"
                + "\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}]";
        HttpResponse<String> first = gw.call("/api/v1/responses", "{\"model\":\"claude\",\"input\":\"Weather in Oslo?\","
                + "\"reasoning\":{\"effort\":\"low\"},\"max_output_tokens\":4000" + tools + "}");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        JsonNode output = SimulatorEndToEndTest.JSON.readTree(first.body()).path("output");
        JsonNode reasoning = output.get(0);
        assertThat(reasoning.path("type").asText()).as(output.toString()).isEqualTo("reasoning");
        String encrypted = reasoning.path("encrypted_content").asText();
        assertThat(encrypted).startsWith("mgw1:thinking:");
        JsonNode call = output.get(output.size() - 1);
        assertThat(call.path("type").asText()).isEqualTo("function_call");

        upstreamBodies.clear();
        HttpResponse<String> second = gw.call("/api/v1/responses", "{\"model\":\"claude\",\"input\":["
                + "{\"role\":\"user\",\"content\":\"Weather in Oslo?\"}," + reasoning + "," + call
                + ",{\"type\":\"function_call_output\",\"call_id\":\"" + call.path("call_id").asText()
                + "\",\"output\":\"cold\"}],\"reasoning\":{\"effort\":\"low\"},\"max_output_tokens\":4000" + tools + "}");
        assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
        JsonNode sent = SimulatorEndToEndTest.JSON.readTree(upstreamBodies.peek());
        JsonNode assistant = sent.path("messages").get(1);
        assertThat(assistant.path("role").asText()).isEqualTo("assistant");
        assertThat(assistant.at("/content/0/type").asText()).isEqualTo("thinking");
        assertThat(assistant.at("/content/0/signature").asText())
                .isEqualTo(encrypted.substring("mgw1:thinking:".length()));
        assertThat(assistant.at("/content/0/thinking").asText())
                .isEqualTo(reasoning.at("/summary/0/text").asText());
        assertThat(assistant.at("/content/1/type").asText()).isEqualTo("tool_use");
        assertThat(assistant.at("/content/1/id").asText()).isEqualTo(call.path("call_id").asText());
    }

    @Test
    void previousResponseId_refusedBeforeAnythingIsSentWhereNoResponsesAreKept() throws Exception {
        for (String model : new String[] {"sim-chat", "chat", "claude"}) {
            upstreamPaths.clear();
            HttpResponse<String> r = gw.call("/api/v1/responses", "{\"model\":\"" + model
                    + "\",\"input\":\"go on\",\"previous_response_id\":\"resp_1\"}");
            assertThat(r.statusCode()).as(model).isEqualTo(400);
            JsonNode error = SimulatorEndToEndTest.JSON.readTree(r.body()).path("error");
            assertThat(error.path("param").asText()).isEqualTo("previous_response_id");
            assertThat(error.path("code").asText()).isEqualTo("unsupported_parameter");
            assertThat(upstreamPaths).as(model).isEmpty();
        }
        upstreamPaths.clear();
        HttpResponse<String> passed = gw.call("/api/v1/responses",
                "{\"model\":\"pass\",\"input\":\"go on\",\"previous_response_id\":\"resp_1\"}");
        assertThat(upstreamPaths).containsExactly("/v1/responses");
        assertThat(passed.body()).contains("previous_response_not_found");
    }

    @Test
    void inputTokens_passedToTheResponsesApi_refusedElsewhere_neverAccounted() throws Exception {
        String body = "{\"model\":\"pass\",\"input\":\"count these words\"}";
        HttpResponse<String> r = gw.call("/api/v1/responses/input_tokens", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode json = SimulatorEndToEndTest.JSON.readTree(r.body());
        assertThat(json.path("object").asText()).isEqualTo("response.input_tokens");
        assertThat(json.path("input_tokens").asLong()).isPositive();
        ExchangeRecord rec = records.of(r);
        assertThat(rec.endpointLabel()).isEqualTo("responses_input_tokens");
        assertThat(rec.totalTokens()).isZero();
        for (String model : new String[] {"chat", "claude"}) {
            HttpResponse<String> refused = gw.call("/api/v1/responses/input_tokens",
                    "{\"model\":\"" + model + "\",\"input\":\"x\"}");
            assertThat(refused.statusCode()).isEqualTo(400);
            assertThat(SimulatorEndToEndTest.JSON.readTree(refused.body()).at("/error/code").asText())
                    .isEqualTo("unsupported_model");
        }
    }
}
