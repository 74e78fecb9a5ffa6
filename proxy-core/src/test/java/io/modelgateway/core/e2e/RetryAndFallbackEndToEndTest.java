package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import io.modelgateway.core.testing.TestGateway;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Retries and fallbacks turn an upstream failure before the first byte into a success for the caller, and never
 * replay an answer that had begun. With the in-process simulator, and with the standalone simulator over real
 * sockets through provider types {@code openai} and {@code anthropic}: each failing deployment is a provider whose
 * fixed {@code headers} inject the fault ({@code x-sim-fault}) and name it ({@code x-deployment}), so the
 * simulator's observer counts exactly which upstream requests went out. Every test checks what the caller got,
 * the exchange's record, and that the gateway goes on serving.
 */
class RetryAndFallbackEndToEndTest {
    private static final String CHAT = "/api/v1/chat/completions";
    private static final String MESSAGES = "/api/v1/messages";
    private static final String EMBEDDINGS = "/api/v1/embeddings";
    private static final String UPSTREAM_KEY = "sk-upstream-retry-key";
    private static final String HELLO = "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]";

    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    /** The x-deployment header of every request the standalone simulator received, in order. */
    private static final List<String> upstream = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY,
                req -> upstream.add(String.valueOf(req.headers().get("x-deployment"))));
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort(); // nothing listens there once closed: connections are refused
        }
        String b = "http://127.0.0.1:" + sim.port();
        String k = UPSTREAM_KEY;
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                  sim-503: {type: simulator, cooldown: off, simulator: {fault: "status=503"}}
                  oa-good: {type: openai, base_url: "%1$s/v1", api_key: %2$s, headers: {x-deployment: oa-good}}
                  oa-503: {type: openai, base_url: "%1$s/v1", api_key: %2$s, cooldown: off,
                           headers: {x-deployment: oa-503, x-sim-fault: "status=503,retry_after=1"}}
                  oa-503b: {type: openai, base_url: "%1$s/v1", api_key: %2$s, cooldown: off,
                            headers: {x-deployment: oa-503b, x-sim-fault: "status=503,retry_after=1"}}
                  oa-400: {type: openai, base_url: "%1$s/v1", api_key: %2$s,
                           headers: {x-deployment: oa-400, x-sim-fault: "status=400"}}
                  oa-cut: {type: openai, base_url: "%1$s/v1", api_key: %2$s, cooldown: off,
                           headers: {x-deployment: oa-cut, x-sim-fault: "cut_after=3"}}
                  oa-down: {type: openai, base_url: "http://127.0.0.1:%3$d/v1", cooldown: off}
                  an-good: {type: anthropic, base_url: "%1$s", api_key: %2$s, headers: {x-deployment: an-good}}
                  an-529: {type: anthropic, base_url: "%1$s", api_key: %2$s, cooldown: off,
                           headers: {x-deployment: an-529, x-sim-fault: "status=529,retry_after=1"}}
                  an-529b: {type: anthropic, base_url: "%1$s", api_key: %2$s, cooldown: off,
                            headers: {x-deployment: an-529b, x-sim-fault: "status=529,retry_after=1"}}
                  an-cut: {type: anthropic, base_url: "%1$s", api_key: %2$s, cooldown: off,
                           headers: {x-deployment: an-cut, x-sim-fault: "cut_after=3"}}
                models:
                  sim-flaky:
                    deployments: [{provider: sim-503, model: sim-bad-1, weight: 1000}, {provider: sim, model: sim-good-1}]
                  sim-embed-flaky:
                    type: embedding
                    deployments: [{provider: sim-503, model: emb-bad-1, weight: 1000}, {provider: sim, model: emb-good-1}]
                  sim-pair:
                    retries: {max: 2, backoff_ms: 1, max_backoff_ms: 10}
                    fallbacks: [sim-backup]
                    deployments: [{provider: sim, model: sim-a}, {provider: sim, model: sim-b}]
                  sim-primary:
                    retries: {max: 0}
                    fallbacks: [sim-backup]
                    deployments: [{provider: sim-503, model: sim-bad-1}]
                  sim-backup: {deployments: [{provider: sim, model: sim-backup-1}]}
                  oa-flaky:
                    deployments: [{provider: oa-503, model: sim-chat-1, weight: 1000}, {provider: oa-good, model: sim-chat-1}]
                  oa-all-bad:
                    retries: {max: 2, backoff_ms: 10, max_backoff_ms: 2000}
                    deployments: [{provider: oa-503, model: sim-chat-1}, {provider: oa-503b, model: sim-chat-1}]
                  oa-primary:
                    retries: {max: 1, backoff_ms: 10}
                    fallbacks: [oa-backup]
                    deployments: [{provider: oa-503, model: sim-chat-1}, {provider: oa-503b, model: sim-chat-1}]
                  oa-backup: {deployments: [{provider: oa-good, model: sim-chat-2}]}
                  oa-bad-request: {fallbacks: [oa-backup], deployments: [{provider: oa-400, model: sim-chat-1}]}
                  oa-cut: {fallbacks: [oa-backup], deployments: [{provider: oa-cut, model: sim-chat-1}]}
                  oa-down:
                    retries: {max: 1, backoff_ms: 10}
                    fallbacks: [oa-backup]
                    deployments: [{provider: oa-down, model: sim-chat-1}]
                  an-flaky:
                    deployments: [{provider: an-529, model: sim-claude-1, weight: 1000}, {provider: an-good, model: sim-claude-1}]
                  an-all-bad:
                    retries: {max: 2, backoff_ms: 10, max_backoff_ms: 2000}
                    deployments: [{provider: an-529, model: sim-claude-1}, {provider: an-529b, model: sim-claude-1}]
                  an-cut: {fallbacks: [an-backup], deployments: [{provider: an-cut, model: sim-claude-1}]}
                  an-backup: {deployments: [{provider: an-good, model: sim-claude-2}]}
                """.formatted(b, k, deadPort), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        upstream.clear();
    }

    private static String body(String path, String model, boolean stream) {
        return "{\"model\":\"" + model + "\"" + (stream ? ",\"stream\":true" : "")
                + (path.equals(MESSAGES) ? ",\"max_tokens\":32" : "") + "," + HELLO + "}";
    }

    /** The gateway still answers a plain request (and its record is taken, so the next test starts clean). */
    private static void assertStillServing() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "sim-backup", false));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(records.next().outcome()).isEqualTo(Outcome.DONE);
    }

    private static long count(String deployment) {
        return upstream.stream().filter(deployment::equals).count();
    }

    // ------------------------------------------------------------------ in-process simulator

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions,false", "/api/v1/chat/completions,true", "/api/v1/messages,false",
            "/api/v1/messages,true"})
    void inProcess_failingDeployment_isRetriedOnTheGoodOne(String path, boolean stream) throws Exception {
        HttpResponse<String> r = gw.call(path, body(path, "sim-flaky", stream));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("sim-good-1").doesNotContain("sim-bad-1");
        if (stream) {
            assertThat(r.body()).endsWith(path.equals(CHAT) ? "data: [DONE]\n\n"
                    : "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        }
        ExchangeRecord rec = records.next();
        assertThat(rec.provider()).isEqualTo("sim");
        assertThat(rec.deployment()).isEqualTo("sim-good-1");
        assertThat(rec.attempts()).isBetween(1, 2); // the failing one first, nearly always (weight 1000 : 1)
        assertThat(rec.status()).isEqualTo(200);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.outputTokens()).isPositive();
        assertStillServing();
    }

    @Test
    void inProcess_embeddings_failingDeployment_isRetriedOnTheGoodOne() throws Exception {
        HttpResponse<String> r = gw.call(EMBEDDINGS, "{\"model\":\"sim-embed-flaky\",\"input\":[\"a\",\"b\"]}");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).path("data")).hasSize(2);
        ExchangeRecord rec = records.next();
        assertThat(rec.deployment()).isEqualTo("emb-good-1");
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.inputTokens()).isPositive();
        assertStillServing();
    }

    @Test
    void inProcess_everyAttemptFails_lastFailureAnswered_afterMaxPlusOneAttempts() throws Exception {
        // The fault comes with the request, so every attempt fails, the fallback's too: 3 + 3 attempts.
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "sim-pair", false), "x-sim-fault", "status=503");

        assertThat(r.statusCode()).isEqualTo(503);
        JsonNode error = SimulatorEndToEndTest.JSON.readTree(r.body()).path("error");
        assertThat(error.path("message").asText()).isEqualTo("Overloaded (simulated)");
        assertThat(error.path("code").asText()).isEqualTo("overloaded");
        assertThat(r.headers().firstValue("retry-after")).hasValue("1");
        assertThat(r.headers().firstValue("retry-after-ms")).hasValue("1000");
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(3 + 3);
        assertThat(rec.retriedFailures()).as("every failure but the one answered").hasSize(5)
                .allSatisfy(f -> assertThat(f[1]).isEqualTo("503"));
        assertThat(rec.deployment()).isEqualTo("sim-backup-1");
        assertThat(rec.status()).isEqualTo(503);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.NONE);
        assertStillServing();
    }

    @Test
    void inProcess_fallbackModel_servesWhenThePrimaryFails() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body(MESSAGES, "sim-primary", false));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).path("model").asText()).isEqualTo("sim-backup-1");
        ExchangeRecord rec = records.next();
        assertThat(rec.model()).as("the model the caller asked for").isEqualTo("sim-primary");
        assertThat(rec.deployment()).as("the deployment that served it").isEqualTo("sim-backup-1");
        assertThat(rec.attempts()).isEqualTo(2);
        assertThat(rec.retriedFailures()).as("the primary's failure, hidden from the caller").hasSize(1);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertStillServing();
    }

    @Test
    void inProcess_badRequestStatus_isAnsweredAsItIs() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "sim-pair", false), "x-sim-fault", "status=400");

        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("invalid_request_error");
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(1);
        assertThat(rec.status()).isEqualTo(400);
        assertStillServing();
    }

    @Test
    void inProcess_streamCutMidway_isNotReplayed() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "sim-pair", true), "x-sim-fault", "cut_after=3");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("data: {\"error\":{\"message\":\"Upstream connection lost\"")
                .doesNotContain("[DONE]");
        assertThat(r.body().split("\"role\":\"assistant\"", -1)).as("one beginning, never a second").hasSize(2);
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(1);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
        assertStillServing();
    }

    // ------------------------------------------------------------------ standalone simulator, openai / anthropic

    @ParameterizedTest
    @CsvSource({"oa-flaky,/api/v1/chat/completions,oa-503,oa-good", "an-flaky,/api/v1/messages,an-529,an-good",
            "an-flaky,/api/v1/chat/completions,an-529,an-good", "oa-flaky,/api/v1/messages,oa-503,oa-good"})
    void failingDeployment_isRetriedOnTheGoodOne(String model, String path, String bad, String good) throws Exception {
        HttpResponse<String> r = gw.call(path, body(path, model, true));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
        ExchangeRecord rec = records.next();
        assertThat(rec.provider()).isEqualTo(good);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(count(good)).isEqualTo(1);
        assertThat(count(bad)).isEqualTo(rec.attempts() - 1);
        assertThat(upstream).hasSize(rec.attempts());
        assertStillServing();
    }

    @ParameterizedTest
    @CsvSource({"oa-all-bad,/api/v1/chat/completions,503,overloaded",
            "an-all-bad,/api/v1/messages,529,overloaded_error",
            "oa-all-bad,/api/v1/messages,529,overloaded_error",
            "an-all-bad,/api/v1/chat/completions,503,overloaded"})
    void everyDeploymentFails_lastFailureRelayed_afterExactlyMaxPlusOneAttempts(String model, String path, int status,
            String errorType) throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> r = gw.call(path, body(path, model, true));
        double seconds = (System.nanoTime() - t0) / 1e9;

        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json"); // GD-24
        JsonNode error = SimulatorEndToEndTest.JSON.readTree(r.body()).path("error");
        assertThat(path.equals(MESSAGES) ? error.path("type").asText() : error.path("code").asText())
                .isEqualTo(errorType);
        assertThat(error.path("message").asText()).isEqualTo("Overloaded (simulated)");
        assertThat(r.headers().firstValue("retry-after")).hasValue("1");
        assertThat(r.headers().firstValue("retry-after-ms")).hasValue("1000");
        // Two deployments, max 2: one, the other at once, then the first again after its Retry-After.
        assertThat(upstream).hasSize(3);
        assertThat(upstream.get(0)).isNotEqualTo(upstream.get(1));
        assertThat(upstream.get(2)).isEqualTo(upstream.get(0));
        assertThat(seconds).isGreaterThanOrEqualTo(0.9);
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(3);
        assertThat(rec.status()).isEqualTo(status);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertStillServing();
    }

    @Test
    void fallbackModel_isUsedAfterThePrimarysDeploymentsFail() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "oa-primary", false));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).path("model").asText()).isEqualTo("sim-chat-2");
        assertThat(upstream).hasSize(3);
        assertThat(upstream.subList(0, 2)).containsExactlyInAnyOrder("oa-503", "oa-503b");
        assertThat(upstream.get(2)).isEqualTo("oa-good");
        ExchangeRecord rec = records.next();
        assertThat(rec.model()).isEqualTo("oa-primary");
        assertThat(rec.provider()).isEqualTo("oa-good");
        assertThat(rec.deployment()).isEqualTo("sim-chat-2");
        assertThat(rec.attempts()).isEqualTo(3);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertStillServing();
    }

    @Test
    void upstream400_isRelayed_neitherRetriedNorFallenBackFrom() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body(CHAT, "oa-bad-request", false));

        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).at("/error/message").asText())
                .isEqualTo("Simulated error with status 400");
        assertThat(upstream).containsExactly("oa-400");
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(1);
        assertThat(rec.status()).isEqualTo(400);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertStillServing();
    }

    @ParameterizedTest
    @CsvSource({"oa-cut,/api/v1/chat/completions", "an-cut,/api/v1/messages"})
    void streamCutMidway_isNotReplayed(String model, String path) throws Exception {
        HttpResponse<String> r = gw.call(path, body(path, model, true));

        assertThat(r.statusCode()).isEqualTo(200);
        if (path.equals(CHAT)) {
            assertThat(r.body()).startsWith("data: {")
                    .contains("data: {\"error\":{\"message\":\"Upstream connection lost\"").doesNotContain("[DONE]");
            assertThat(r.body().split("\"role\":\"assistant\"", -1)).hasSize(2);
        } else {
            assertThat(r.body()).startsWith("event: message_start\n").endsWith("event: error\ndata: {\"type\":\"error\","
                    + "\"error\":{\"type\":\"api_error\",\"message\":\"Upstream connection lost\"}}\n\n")
                    .doesNotContain("message_stop");
            assertThat(r.body().split("event: message_start", -1)).hasSize(2);
        }
        assertThat(upstream).as("the upstream saw exactly one request").containsExactly(model);
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(1);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertStillServing();
    }

    @Test
    void connectionRefused_isRetried_thenTheFallbackAnswers() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body(MESSAGES, "oa-down", false));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(SimulatorEndToEndTest.JSON.readTree(r.body()).path("type").asText()).isEqualTo("message");
        assertThat(upstream).containsExactly("oa-good");
        ExchangeRecord rec = records.next();
        assertThat(rec.attempts()).isEqualTo(3);
        assertThat(rec.provider()).isEqualTo("oa-good");
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertStillServing();
    }

    // ------------------------------------------------------------------ Retry-After, scripted upstream

    private static String scriptedConfig(ScriptedUpstream up) {
        return """
                keys: [{name: test, key: "${GATEWAY_KEY}", models: ["*"]}]
                providers:
                  up: {type: openai, base_url: "%s/v1", cooldown: off}
                models:
                  m: {deployments: [{provider: up, model: up-1}]}
                """.formatted(up.baseUrl());
    }

    private static final String OK_JSON = "{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"up-1\","
            + "\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}";
    private static final String RATE_LIMITED = "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\","
            + "\"param\":null,\"code\":\"rate_limit_exceeded\"}}";

    @Test
    void upstream429_retryAfterIsHonoured_thenTheSameDeploymentAnswers() throws Exception {
        AtomicInteger n = new AtomicInteger();
        RecordingObserver seen = new RecordingObserver();
        try (ScriptedUpstream up = new ScriptedUpstream(req -> n.getAndIncrement() == 0
                ? new Script(429, Map.of("content-type", "application/json", "retry-after", "1"),
                        List.of(RATE_LIMITED.getBytes()), 0, -1)
                : Script.json(200, OK_JSON));
                TestGateway g = TestGateway.start(scriptedConfig(up), seen)) {
            long t0 = System.nanoTime();
            HttpResponse<String> r = g.call(CHAT, body(CHAT, "m", false));
            double seconds = (System.nanoTime() - t0) / 1e9;

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(OK_JSON);
            assertThat(seconds).isGreaterThanOrEqualTo(0.9);
            assertThat(up.received).hasSize(2);
            // The 429's body was read to its end, so its connection went back to the pool and served the retry.
            assertThat(up.connections.get()).isEqualTo(1);
            ExchangeRecord rec = seen.next();
            assertThat(rec.attempts()).isEqualTo(2);
            assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
            assertThat(rec.inputTokens()).isEqualTo(3);
            assertThat(rec.upstreamLatencyNanos()).as("timed on the attempt that answered").isBetween(0L, 900_000_000L);
            assertThat(g.call(CHAT, body(CHAT, "m", false)).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void streamLostAfterItsHeadButBeforeItsFirstEvent_isRetried_andTheCallerSeesOneWholeStream() throws Exception {
        String[] events = {"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
                "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", "data: [DONE]\n\n"};
        AtomicInteger n = new AtomicInteger();
        RecordingObserver seen = new RecordingObserver();
        try (ScriptedUpstream up = new ScriptedUpstream(req -> n.getAndIncrement() == 0
                ? Script.sse(0, events).cutAfter(0) // a 200 head, then the connection dies: nothing to relay yet
                : Script.sse(0, events));
                TestGateway g = TestGateway.start(scriptedConfig(up), seen)) {
            HttpResponse<String> r = g.call(CHAT, body(CHAT, "m", true));

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(String.join("", events));
            assertThat(up.received).hasSize(2);
            ExchangeRecord rec = seen.next();
            assertThat(rec.attempts()).isEqualTo(2);
            assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
            assertThat(g.call(CHAT, body(CHAT, "m", true)).body()).isEqualTo(String.join("", events));
        }
    }

    @Test
    void upstream429_retryAfterLongerThanTheCap_isRelayedAtOnce() throws Exception {
        try (ScriptedUpstream up = new ScriptedUpstream(req -> new Script(429,
                Map.of("content-type", "application/json", "retry-after", "30"), List.of(RATE_LIMITED.getBytes()), 0, -1));
                TestGateway g = TestGateway.start(scriptedConfig(up), records)) {
            long t0 = System.nanoTime();
            HttpResponse<String> r = g.call(CHAT, body(CHAT, "m", false));
            double seconds = (System.nanoTime() - t0) / 1e9;

            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.body()).isEqualTo(RATE_LIMITED);
            assertThat(r.headers().firstValue("retry-after")).hasValue("30");
            assertThat(r.headers().firstValue("retry-after-ms")).hasValue("30000");
            assertThat(seconds).isLessThan(1.5);
            assertThat(up.received).hasSize(1);
            ExchangeRecord rec = records.next();
            assertThat(rec.attempts()).isEqualTo(1);
            assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        }
    }
}
