package io.modelgateway.core.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Keys held to their limits end to end, in both API styles: exactly N requests per minute then 429s with the
 * headers of contract 2.3, token limits settled from the upstream's real usage, concurrency, the daily
 * budget, limits of a model across keys, and a reload that tightens a limit while a stream runs on.
 */
class LimitsEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CHAT = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}]}";
    static final String MESSAGES = "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi there\"}]}";
    static final String OTHER_KEY = "sk-other-key";

    private TestGateway gw;
    private final RecordingObserver records = new RecordingObserver();

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
    }

    private void start(String keyLimits, String modelLimits) throws Exception {
        gw = TestGateway.start(config(keyLimits, modelLimits), records);
    }

    private static String config(String keyLimits, String modelLimits) {
        return """
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                %s
                  - name: team-b
                    key: sha256:%s
                    models: ["*"]
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1}]
                %s
                  sim-other:
                    deployments: [{provider: sim, model: sim-chat-1}]
                """.formatted(keyLimits, TestGateway.sha256Hex(OTHER_KEY), modelLimits);
    }

    @Test
    void requestsPerMinute_openAiStyle_exactlyNThen429WithHeaders() throws Exception {
        start("    limits: {requests_per_minute: 3}", "");
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = gw.call("/api/v1/chat/completions", CHAT);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "x-ratelimit-limit-requests")).isEqualTo("3");
            assertThat(header(r, "x-ratelimit-remaining-requests")).isEqualTo(Integer.toString(2 - i));
            assertThat(header(r, "x-ratelimit-reset-requests")).matches("(\\d+m)?\\d+(\\.\\d+)?(s|ms)");
        }
        HttpResponse<String> refused = gw.call("/api/v1/chat/completions", CHAT);
        assertThat(refused.statusCode()).isEqualTo(429);
        JsonNode error = JSON.readTree(refused.body()).path("error");
        assertThat(error.path("type").asText()).isEqualTo("requests");
        assertThat(error.path("code").asText()).isEqualTo("rate_limit_exceeded");
        assertThat(error.path("message").asText()).contains("team-a").doesNotContain(TestGateway.KEY);
        assertThat(Long.parseLong(header(refused, "retry-after"))).isBetween(1L, 20L);
        assertThat(Long.parseLong(header(refused, "retry-after-ms"))).isBetween(1L, 20_000L);
        assertThat(header(refused, "x-ratelimit-remaining-requests")).isEqualTo("0");
        assertThat(header(refused, "x-request-id")).startsWith("req_");
        // the other key is not affected
        assertThat(gw.call("/api/v1/chat/completions", CHAT, "authorization", "Bearer " + OTHER_KEY).statusCode())
                .isEqualTo(200);
        awaitEnded(5); // the records of the five calls above (each ends just after its answer is written)
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(429);
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.LIMITED);
        assertThat(rec.limit()).isEqualTo("requests_per_minute");
    }

    @Test
    void requestsPerMinute_anthropicStyle_exactlyNThen429WithHeaders() throws Exception {
        start("    limits: {requests_per_minute: 2}", "");
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> r = gw.call("/api/v1/messages", MESSAGES);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "anthropic-ratelimit-requests-limit")).isEqualTo("2");
            assertThat(header(r, "anthropic-ratelimit-requests-remaining")).isEqualTo(Integer.toString(1 - i));
            Instant reset = Instant.parse(header(r, "anthropic-ratelimit-requests-reset"));
            assertThat(reset).isBetween(Instant.now().minusSeconds(5), Instant.now().plusSeconds(65));
        }
        HttpResponse<String> refused = gw.call("/api/v1/messages", MESSAGES);
        assertThat(refused.statusCode()).isEqualTo(429);
        JsonNode body = JSON.readTree(refused.body());
        assertThat(body.path("type").asText()).isEqualTo("error");
        assertThat(body.at("/error/type").asText()).isEqualTo("rate_limit_error");
        assertThat(body.path("request_id").asText()).isEqualTo(header(refused, "request-id"));
        assertThat(header(refused, "retry-after")).isNotNull();
        assertThat(header(refused, "retry-after-ms")).isNotNull();
        assertThat(header(refused, "anthropic-ratelimit-requests-remaining")).isEqualTo("0");
    }

    @Test
    void tokensPerMinute_settledFromTheUpstreamsRealUsage() throws Exception {
        start("    limits: {tokens_per_minute: 60}", "");
        Long previousRemaining = null;
        long previousUsage = 0;
        int successes = 0;
        HttpResponse<String> r;
        while ((r = gw.call("/api/v1/chat/completions", CHAT)).statusCode() == 200) {
            successes++;
            assertThat(successes).isLessThan(20);
            long remaining = Long.parseLong(header(r, "x-ratelimit-remaining-tokens"));
            assertThat(header(r, "x-ratelimit-limit-tokens")).isEqualTo("60");
            if (previousRemaining != null) {
                // Same request, same reservation: what the headers lost between two requests is exactly what the
                // previous one really used (the bucket refills 1 token per second; the test takes well under 1 s).
                assertThat((double) (previousRemaining - remaining)).isCloseTo(previousUsage, within(1.0));
            }
            JsonNode usage = JSON.readTree(r.body()).path("usage");
            previousUsage = usage.path("total_tokens").asLong();
            previousRemaining = remaining;
            ExchangeRecord rec = records.next();
            assertThat(rec.inputTokens() + rec.outputTokens()).isEqualTo(previousUsage);
        }
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(r.body()).at("/error/type").asText()).isEqualTo("tokens");
        assertThat(successes).as("more requests pass than their reservations alone would allow").isGreaterThan(1);
    }

    /**
     * A token limit is on every token: cache reads and writes (and reasoning) are parts of the input and output a
     * request is charged, so 500 cached tokens a request spend a 1000-token minute in two requests where the
     * uncached input alone (about 10 a request) would allow dozens (contract 8.8).
     */
    @Test
    void tokensPerMinute_chargesCacheReadsAndWrites() throws Exception {
        start("    limits: {tokens_per_minute: 1000}", "");
        int successes = 0;
        HttpResponse<String> r;
        while ((r = gw.call("/api/v1/messages", MESSAGES, "x-sim-cached-tokens", "400",
                "x-sim-cache-write-tokens", "100")).statusCode() == 200) {
            successes++;
            assertThat(successes).as("requests admitted").isLessThan(4);
            ExchangeRecord rec = records.next();
            assertThat(rec.cachedInputTokens()).isEqualTo(400);
            assertThat(rec.cacheWriteTokens()).isEqualTo(100);
            assertThat(rec.totalTokens()).isGreaterThan(500);
        }
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(r.body()).at("/error/type").asText()).isEqualTo("rate_limit_error");
        assertThat(successes).isGreaterThanOrEqualTo(1);
    }

    @Test
    void concurrentRequests_secondRefusedWhileAStreamRuns_thenAdmitted() throws Exception {
        start("    limits: {concurrent_requests: 1}", "");
        HttpRequest slow = gw.post("/api/v1/chat/completions",
                        "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")
                .header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-sim-tps", "50").header("x-sim-output-tokens", "50").build();
        HttpResponse<InputStream> stream = gw.http.send(slow, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        HttpResponse<String> refused = gw.call("/api/v1/chat/completions", CHAT);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(JSON.readTree(refused.body()).at("/error/message").asText()).contains("concurrent");
        String all;
        try (InputStream in = stream.body()) {
            all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(all).endsWith("data: [DONE]\n\n");
        awaitEnded(2); // the stream's record (and the refusal's)
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
    }

    @Test
    void dailyTokens_exhausted_429UntilMidnightAndNoRetry() throws Exception {
        start("    limits: {daily_tokens: 30}", "");
        int successes = 0;
        HttpResponse<String> r;
        while ((r = gw.call("/api/v1/messages", MESSAGES)).statusCode() == 200) {
            successes++;
            assertThat(successes).isLessThan(30);
            records.next();
        }
        assertThat(successes).isPositive();
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(header(r, "x-should-retry")).isEqualTo("false");
        long secondsToMidnight = Duration.between(Instant.now(),
                Instant.now().atZone(java.time.ZoneOffset.UTC).toLocalDate().plusDays(1)
                        .atStartOfDay(java.time.ZoneOffset.UTC).toInstant()).toSeconds();
        assertThat(Long.parseLong(header(r, "retry-after"))).isCloseTo(secondsToMidnight, within(5L));
    }

    @Test
    void modelLimit_sharedAcrossKeys() throws Exception {
        start("", "    limits: {requests_per_minute: 2}");
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        assertThat(gw.call("/api/v1/chat/completions", CHAT, "authorization", "Bearer " + OTHER_KEY).statusCode())
                .isEqualTo(200);
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(429);
        // another model is not limited
        assertThat(gw.call("/api/v1/chat/completions", CHAT.replace("sim-chat", "sim-other")).statusCode())
                .isEqualTo(200);
    }

    @Test
    void keyOnModelLimit_appliesToMatchingModelsOnly() throws Exception {
        start("    model_limits:\n      \"sim-c*\": {requests_per_minute: 1}", "");
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(429);
        assertThat(gw.call("/api/v1/chat/completions", CHAT.replace("sim-chat", "sim-other")).statusCode())
                .isEqualTo(200);
        assertThat(gw.call("/api/v1/chat/completions", CHAT, "authorization", "Bearer " + OTHER_KEY).statusCode())
                .isEqualTo(200);
    }

    @Test
    void reload_tighterLimitAppliesToTheNextRequest_whileAnOpenStreamRunsToItsEnd() throws Exception {
        start("    limits: {requests_per_minute: 100}", "");
        assertThat(gw.call("/api/v1/chat/completions", CHAT).statusCode()).isEqualTo(200);
        HttpRequest slow = gw.post("/api/v1/chat/completions",
                        "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")
                .header("authorization", "Bearer " + TestGateway.KEY)
                .header("x-sim-tps", "40").header("x-sim-output-tokens", "40").build();
        CompletableFuture<HttpResponse<String>> stream = gw.http.sendAsync(slow, HttpResponse.BodyHandlers.ofString());
        Thread.sleep(200); // the stream is under way
        gw.server().context().swap(ConfigLoader.parse(config("    limits: {requests_per_minute: 2}", ""), "test.yaml",
                Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0"));
        HttpResponse<String> refused = gw.call("/api/v1/chat/completions", CHAT);
        assertThat(refused.statusCode()).as("2 used, new limit 2").isEqualTo(429);
        assertThat(header(refused, "x-ratelimit-limit-requests")).isEqualTo("2");
        HttpResponse<String> s = stream.get(10, TimeUnit.SECONDS);
        assertThat(s.statusCode()).isEqualTo(200);
        assertThat(s.body()).endsWith("data: [DONE]\n\n");
        assertThat(s.body().split("\n\n").length).isGreaterThan(40);
    }

    private void awaitEnded(int n) throws InterruptedException {
        for (int i = 0; i < n; i++) {
            records.next();
        }
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    static URI uri(String s) {
        return URI.create(s);
    }
}
