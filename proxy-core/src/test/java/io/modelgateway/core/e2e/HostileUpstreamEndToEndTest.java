package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.FailingAllocator;
import io.modelgateway.core.testing.RawUpstream;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.ScriptedUpstream.Received;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.answer.CollectedBudget;
import io.netty.channel.Channel;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A hostile upstream on loopback ({@link RawUpstream}, raw bytes), used as an OpenAI-type provider {@code oa} and an
 * Anthropic-type provider {@code an}, in the fault-matrix style: each case asserts what the caller sees, the
 * exchange record, that the upstream connection was dropped where it must be, and that the gateway keeps serving.
 * The upstream picks its misbehaviour from the forwarded {@code x-hostile} header.
 *
 * <p>Limits of this gateway: error bodies 8 KiB, stream events 64 KiB, collected answers 64 KiB each and 100 KiB for
 * all of them; upstream timeouts of 10 s, so that a case answered in well under that was not answered by a timer.
 */
class HostileUpstreamEndToEndTest {
    static final String CHAT = "/api/v1/chat/completions";
    static final String MESSAGES = "/api/v1/messages";
    static final ObjectMapper JSON = new ObjectMapper();

    static final String OPENAI_KEY = "sk-provider-openai-Zq81xYw2Vb";
    /** Not shaped like any known key: only the configured value finds it. */
    static final String ANTHROPIC_KEY = "provider-anthropic-secret-Kp93";
    static final String EXTRA_SECRET = "tok-hidden-99887766";
    static final String AWS_KEY = "AKIAIOSFODNN7EXAMPLE";

    private static RawUpstream up;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    /** Attempts seen per request id (retries carry the same id). */
    private static final Map<String, Integer> attempts = new ConcurrentHashMap<>();
    /** Completed by a test to let a waiting upstream go on. */
    private static volatile CompletableFuture<Void> go = new CompletableFuture<>();

    @BeforeAll
    static void start() throws Exception {
        up = new RawUpstream(HostileUpstreamEndToEndTest::respond);
        String timeouts = "timeouts: {first_byte_ms: 10000, stream_idle_ms: 10000, total_ms: 60000}";
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                upstream_limits:
                  max_error_body_bytes: 8192
                  max_sse_event_bytes: 65536
                  max_collected_bytes: 65536
                  collected_budget_bytes: 102400
                providers:
                  oa: {type: openai, base_url: "%1$s/v1", api_key: "%2$s", forward_headers: ["x-hostile"], cooldown: off,
                       %4$s}
                  an: {type: anthropic, base_url: "%1$s", api_key: "%3$s", headers: {x-secret-token: "%5$s"},
                       forward_headers: ["x-hostile"], cooldown: off, %4$s}
                models:
                  oa: {retries: {max: 0}, deployments: [{provider: oa, model: up-oa}]}
                  an: {retries: {max: 0}, deployments: [{provider: an, model: up-an}]}
                  oa-retry: {retries: {max: 1, backoff_ms: 1}, deployments: [{provider: oa, model: up-oa-1},
                                                                            {provider: oa, model: up-oa-2}]}
                """.formatted(up.baseUrl(), OPENAI_KEY, ANTHROPIC_KEY, timeouts, EXTRA_SECRET), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        up.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        go = new CompletableFuture<>();
    }

    // ------------------------------------------------------------------ 1. error bodies: redacted and bounded

    /**
     * The upstream echoes every credential it was sent (plainly, JSON-escaped, split across two chunks) plus an AWS
     * key. Same style: the upstream's status and error shape, with a correct Content-Length; across styles: the
     * status of the table. Either way no secret, for stream and non-stream requests.
     */
    @ParameterizedTest
    @CsvSource({
        "/api/v1/chat/completions, oa, 400, 400, false", "/api/v1/chat/completions, oa, 429, 429, true",
        "/api/v1/chat/completions, oa, 500, 500, false", "/api/v1/messages, an, 400, 400, true",
        "/api/v1/messages, an, 429, 429, false", "/api/v1/messages, an, 500, 500, true",
        "/api/v1/chat/completions, an, 400, 400, false", "/api/v1/chat/completions, an, 429, 429, true",
        "/api/v1/chat/completions, an, 500, 502, false", "/api/v1/messages, oa, 400, 400, true",
        "/api/v1/messages, oa, 429, 429, false", "/api/v1/messages, oa, 500, 502, true",
    })
    void errorEchoingTheCredentials_reachesTheCallerWithoutThem(String path, String model, int upstream, int status,
            boolean stream) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, stream), "x-hostile", "echo:" + upstream);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertNoSecret(r.body());
        assertThat(r.body()).contains("[redacted]");
        JsonNode json = JSON.readTree(r.body());
        if (path.equals(MESSAGES)) {
            assertThat(json.path("type").asText()).isEqualTo("error");
        } else {
            assertThat(json.path("error").path("type").asText()).isNotEmpty();
        }
        boolean sameStyle = model.equals(path.equals(CHAT) ? "oa" : "an");
        if (sameStyle) {
            // The upstream's own body, redacted: its fields and an exact Content-Length
            assertThat(r.headers().firstValue("content-length")).hasValue(
                    String.valueOf(r.body().getBytes(StandardCharsets.UTF_8).length));
            assertThat(r.body()).contains(path.equals(CHAT) ? "\"code\":\"invalid_api_key\"" : "\"type\":\"error\"");
        }
        if (upstream == 429) {
            assertThat(r.headers().firstValue("retry-after")).hasValue("7");
        }
        ExchangeRecord rec = records.of(r);
        assertThat(rec.status()).isEqualTo(status);
        assertStillServing(path);
    }

    /** An error event mid-stream may echo the credential just the same: redacted, in both styles and across them. */
    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/chat/completions, an",
        "/api/v1/messages, oa"})
    void errorEventMidStreamEchoingTheCredentials_reachesTheCallerWithoutThem(String path, String model)
            throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-hostile", "error-event");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains(path.equals(CHAT) ? "\"content\":\"hi\"" : "\"text\":\"hi\"")
                .contains(path.equals(CHAT) ? "data: {\"error\":" : "event: error").contains("[redacted]");
        assertNoSecret(r.body());
        records.of(r);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, 500, 502, server_error", "/api/v1/messages, an, 429, 429, rate_limit_error",
        "/api/v1/chat/completions, an, 400, 400, invalid_request_error"})
    void errorBodyPastTheLimit_isNotRelayed_theCallerGetsTheStatusOfItsClass_andTheConnectionIsClosed(String path,
            String model, int upstream, int status, String type) throws Exception {
        int closedBefore = up.closed.get();
        long writtenBefore = up.written.get();
        HttpResponse<String> r = gw.call(path, body(model, false), "x-hostile", "big-error:" + upstream);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode json = JSON.readTree(r.body());
        assertThat(json.at("/error/type").asText()).isEqualTo(type);
        assertThat(json.at("/error/message").asText()).contains("HTTP " + upstream).contains("larger than 8192 bytes");
        if (upstream == 429) {
            assertThat(r.headers().firstValue("retry-after")).hasValue("7");
        }
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(reasons(rec.protocolErrors())).containsExactly("error_body_too_large");
        // The upstream's endless body was cut off: its connection closed, and little of it was ever read.
        Eventually.until(Duration.ofSeconds(5), () -> up.closed.get() > closedBefore);
        assertThat(up.written.get() - writtenBefore).isLessThan(16L << 20);
        assertStillServing(path);
    }

    /** Our credentials refused, with a body that never ends: the caller's 502 does not wait for its end. */
    @Test
    void credentialsRefusedWithAnEndlessBody_502_connectionClosed() throws Exception {
        int closedBefore = up.closed.get();
        HttpResponse<String> r = gw.call(CHAT, body("oa", false), "x-hostile", "big-error:401");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
        assertThat(JSON.readTree(r.body()).at("/error/message").asText())
                .isEqualTo("The upstream provider refused the gateway's credentials.");
        Eventually.until(Duration.ofSeconds(5), () -> up.closed.get() > closedBefore);
        assertStillServing(CHAT);
    }

    /**
     * A retryable error whose body never ends: the retry goes ahead at once, and the failed attempt's connection,
     * which would be read to the end of its body to be pooled again, is closed once the body passes the limit.
     */
    @Test
    void retriedErrorWithAnEndlessBody_isNotDrainedForever() throws Exception {
        int closedBefore = up.closed.get();
        long writtenBefore = up.written.get();
        HttpResponse<String> r = gw.call(CHAT, body("oa-retry", false), "x-hostile", "big-retryable");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(records.of(r).attempts()).isEqualTo(2);
        Eventually.until(Duration.ofSeconds(5), () -> up.closed.get() > closedBefore);
        assertThat(up.written.get() - writtenBefore).isLessThan(16L << 20);
        assertStillServing(CHAT);
    }

    // ------------------------------------------------------------------ 2. stream events: bounded

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, server_error", "/api/v1/messages, an, api_error",
        "/api/v1/messages, oa, api_error"})
    void streamEventThatNeverEnds_beforeAnyEvent_502_upstreamClosed_counted(String path, String model, String type)
            throws Exception {
        int closedBefore = up.closed.get();
        long writtenBefore = up.written.get();
        HttpResponse<String> r = gw.call(path, body(model, true), "x-hostile", "sse-flood");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
        JsonNode json = JSON.readTree(r.body());
        assertThat(json.at("/error/type").asText()).isEqualTo(type);
        assertThat(json.at("/error/message").asText())
                .isEqualTo("The upstream provider sent a stream event larger than 65536 bytes.");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(reasons(rec.protocolErrors())).containsExactly("sse_event_too_large");
        Eventually.until(Duration.ofSeconds(5), () -> up.closed.get() > closedBefore);
        assertThat(up.written.get() - writtenBefore).as("bytes the flood got out before the gateway closed it")
                .isLessThan(16L << 20);
        assertThat(gw.server().metrics().scrapeText()).contains(
                "gateway_upstream_protocol_errors_total{provider=\"" + model + "\",reason=\"sse_event_too_large\"}");
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an"})
    void streamEventThatNeverEnds_afterEvents_theStyleErrorEvent_noTerminator(String path, String model)
            throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-hostile", "sse-flood-late");
        assertThat(r.statusCode()).isEqualTo(200);
        String message = "The upstream provider sent a stream event larger than 65536 bytes.";
        if (path.equals(MESSAGES)) {
            assertThat(r.body()).startsWith("event: message_start").doesNotContain("message_stop")
                    .endsWith("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\""
                            + message + "\"}}\n\n");
        } else {
            assertThat(r.body()).contains("\"content\":\"hi\"").doesNotContain("[DONE]")
                    .endsWith("data: {\"error\":{\"message\":\"" + message + "\",\"type\":\"server_error\","
                            + "\"param\":null,\"code\":\"upstream_error\"}}\n\n");
        }
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(reasons(rec.protocolErrors())).containsExactly("sse_event_too_large");
        assertStillServing(path);
    }

    /**
     * A buffer that cannot be allocated while the upstream's stream is read (here: the composite the scanner needs for
     * an event split across reads) ends the exchange with an honest error event, not "connection lost".
     */
    @Test
    void allocationFailureReadingTheUpstream_endsTheStreamAsOverloaded_notAsALostUpstream() throws Exception {
        FailingAllocator alloc = new FailingAllocator(FailingAllocator.Fail.NONE);
        try (Socket s = rawRequest(CHAT, body("oa", true), alloc, "x-hostile", "oom-read")) {
            Eventually.until(Duration.ofSeconds(5), () -> received("oom-read"));
            alloc.fail(FailingAllocator.Fail.COMPOSITE);
            go.complete(null); // the upstream sends one event and half of the next
            String all = readToTheEnd(s.getInputStream(), t -> t.endsWith("\r\n0\r\n\r\n"));
            assertThat(all).startsWith("HTTP/1.1 200").contains("\"content\":\"hi\"").doesNotContain("[DONE]")
                    .doesNotContain("Upstream connection lost")
                    .contains("data: {\"error\":{\"message\":\"The gateway is short of memory for this answer; retry "
                            + "shortly.\",\"type\":\"server_error\",\"param\":null,\"code\":\"overloaded\"}}");
            ExchangeRecord rec = recordOf(requestId(all));
            assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
            assertThat(reasons(rec.memoryRefusals())).containsExactly("allocation_failed");
        }
        assertStillServing(CHAT);
    }

    /**
     * A buffer the gateway cannot allocate while writing the stream to the client: the exchange ends there (counted,
     * the client connection closed), instead of carrying on as if the writes had gone out. The upstream's next event
     * is larger than the event loop's reused buffer for a read's chunks, so that a buffer must be made for it.
     */
    @Test
    void allocationFailureWritingToTheClient_endsTheExchange_andClosesTheClientConnection() throws Exception {
        FailingAllocator alloc = new FailingAllocator(FailingAllocator.Fail.NONE);
        try (Socket s = rawRequest(CHAT, body("oa", true), alloc, "x-hostile", "oom-write")) {
            InputStream in = s.getInputStream();
            String first = readToTheEnd(in, t -> t.contains("\"content\":\"hi\"}"));
            alloc.fail(FailingAllocator.Fail.BUFFERS);
            go.complete(null); // the upstream sends the rest of its stream
            String rest = readToTheEnd(in, t -> false); // to the end of the connection
            assertThat(first + rest).doesNotContain("[DONE]").doesNotContain("\r\n0\r\n\r\n");
            ExchangeRecord rec = recordOf(requestId(first));
            assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
            assertThat(reasons(rec.memoryRefusals())).containsExactly("allocation_failed");
        }
        assertStillServing(CHAT);
    }

    // ------------------------------------------------------------------ 3. interim answers

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, false", "/api/v1/chat/completions, oa, true",
        "/api/v1/messages, an, false", "/api/v1/messages, an, true"})
    void interimAnswers_100And103_areSkipped_theFinalAnswerArrives(String path, String model, boolean stream)
            throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, stream), "x-hostile", "interim");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains(path.equals(CHAT) ? "\"content\":\"hi\"" : "\"text\":\"hi\"")
                .contains(stream ? (path.equals(CHAT) ? "[DONE]" : "message_stop") : "");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.status()).isEqualTo(200);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertStillServing(path);
    }

    // ------------------------------------------------------------------ 3, 4. protocol failures: at once, retryable

    @ParameterizedTest
    @ValueSource(strings = {"switch", "cl-te", "bare-cr", "bad-status"})
    void protocolFailureBeforeTheAnswer_is502AtOnce_andTheConnectionIsNotReused(String scenario) throws Exception {
        int closedBefore = up.closed.get();
        long started = System.nanoTime();
        HttpResponse<String> r = gw.call(CHAT, body("oa", false), "x-hostile", scenario);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered without waiting for a timeout")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
        assertThat(JSON.readTree(r.body()).at("/error/message").asText()).isEqualTo(scenario.equals("switch")
                ? "The upstream provider switched protocols (HTTP 101) instead of answering."
                : "The upstream provider sent a malformed HTTP response.");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(reasons(rec.protocolErrors()))
                .containsExactly(scenario.equals("switch") ? "switching_protocols" : "malformed_head");
        Eventually.until(Duration.ofSeconds(5), () -> up.closed.get() > closedBefore);
        assertStillServing(CHAT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"switch", "cl-te", "bad-status"})
    void protocolFailureBeforeTheAnswer_isRetriedOnTheNextDeployment(String scenario) throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("oa-retry", false), "x-hostile", scenario);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        ExchangeRecord rec = records.of(r);
        assertThat(rec.attempts()).isEqualTo(2);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.retriedFailures()).extracting(f -> f[1]).containsExactly("protocol_error");
    }

    @Test
    void malformedChunkMidStream_theStyleErrorEvent_noTerminator() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("oa", true), "x-hostile", "bad-chunk");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"content\":\"hi\"").doesNotContain("[DONE]")
                .endsWith("data: {\"error\":{\"message\":\"The upstream provider sent a malformed HTTP response.\","
                        + "\"type\":\"server_error\",\"param\":null,\"code\":\"upstream_error\"}}\n\n");
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(reasons(rec.protocolErrors())).containsExactly("malformed_body");
        assertStillServing(CHAT);
    }

    // ------------------------------------------------------------------ 5. collected answers: capped, budgeted

    @Test
    void translatedAnswerPastTheCap_502_andTheBudgetIsGivenBack() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body("oa", false), "x-hostile", "big-answer");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(502);
        assertThat(JSON.readTree(r.body()).at("/error/message").asText())
                .isEqualTo("The upstream provider's answer is larger than 65536 bytes, too large to translate.");
        assertThat(reasons(records.of(r).protocolErrors())).containsExactly("answer_too_large");
        assertBudgetEmpty();
        assertStillServing(MESSAGES);
    }

    /**
     * Two translated answers of 60 KiB held at once pass the 100 KiB process budget: the second is refused as
     * overloaded (529 on messages, with Retry-After) while the first completes; the budget is empty afterwards.
     */
    @Test
    void collectedBudgetExhausted_529WithRetryAfter_theHolderCompletes_budgetEmptyAfter() throws Exception {
        CompletableFuture<HttpResponse<String>> first = gw.http.sendAsync(gw.post(MESSAGES, body("oa", false))
                .header("x-api-key", TestGateway.KEY).header("anthropic-version", "2023-06-01")
                .header("x-hostile", "hold").build(), HttpResponse.BodyHandlers.ofString());
        Eventually.until(Duration.ofSeconds(5), () -> budget().held() >= 60 * 1024);
        HttpResponse<String> second = gw.call(MESSAGES, body("oa", false), "x-hostile", "hold");
        assertThat(second.statusCode()).as(second.body()).isEqualTo(529);
        assertThat(second.headers().firstValue("retry-after")).isPresent();
        assertThat(JSON.readTree(second.body()).at("/error/type").asText()).isEqualTo("overloaded_error");
        assertThat(reasons(records.of(second).memoryRefusals())).containsExactly("collected_budget");
        go.complete(null);
        HttpResponse<String> r = first.get();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).at("/content/0/text").asText()).hasSize(60 * 1024);
        assertBudgetEmpty();
    }

    @Test
    void clientLeavesWhileAnAnswerIsCollected_theBudgetIsGivenBack() throws Exception {
        try (Socket s = rawRequest(MESSAGES, body("oa", false), null, "x-hostile", "hold")) {
            Eventually.until(Duration.ofSeconds(5), () -> budget().held() >= 60 * 1024);
        }
        assertThat(records.next().outcome()).isEqualTo(Outcome.CANCELLED);
        assertBudgetEmpty();
    }

    @Test
    void translatedAnswerCutAndRetried_theAbandonedAttemptGivesItsBudgetBack() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body("oa-retry", false), "x-hostile", "cut-translated");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(records.of(r).attempts()).isEqualTo(2);
        assertBudgetEmpty();
    }

    // ------------------------------------------------------------------ the upstream

    /** Answers one request as its {@code x-hostile} header says (on the upstream's event loop). */
    private static void respond(Received r, Channel ch) {
        String scenario = r.headers().getOrDefault("x-hostile", "ok");
        int attempt = attempts.merge(r.headers().getOrDefault("x-request-id", "?"), 1, Integer::sum);
        boolean anthropic = r.uri().endsWith("/v1/messages");
        boolean stream = r.body().contains("\"stream\":true");
        String arg = scenario.contains(":") ? scenario.substring(scenario.indexOf(':') + 1) : "";
        switch (scenario.contains(":") ? scenario.substring(0, scenario.indexOf(':')) : scenario) {
            case "echo" -> {
                // Every credential it was sent, plainly and with JSON escapes, cut between two chunks mid-key.
                String credential = r.headers().getOrDefault("authorization", r.headers().get("x-api-key"));
                String message = echo(r);
                String body = anthropic
                        ? "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"" + message + "\"}}"
                        : "{\"error\":{\"message\":\"" + message + "\",\"type\":\"invalid_request_error\",\"param\":null,"
                                + "\"code\":\"invalid_api_key\"}}";
                int cut = body.indexOf(credential) + credential.length() / 2;
                up.send(ch, head(Integer.parseInt(arg), "application/json", "retry-after: 7\r\n") + RawUpstream.chunk(
                        body.substring(0, cut)));
                up.sendLater(ch, RawUpstream.chunk(body.substring(cut)) + "0\r\n\r\n", 20);
            }
            case "error-event" -> {
                String message = echo(r);
                String error = anthropic
                        ? "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\""
                                + message + "\"}}\n\n"
                        : "data: {\"error\":{\"message\":\"" + message + "\",\"type\":\"server_error\",\"param\":null,"
                                + "\"code\":null}}\n\n";
                up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(firstEvents(anthropic) + error)
                        + "0\r\n\r\n");
            }
            case "big-error" -> {
                up.send(ch, head(Integer.parseInt(arg), "application/json", "retry-after: 7\r\n")
                        + RawUpstream.chunk("{\"error\":{\"message\":\""));
                up.flood(ch, RawUpstream.chunk("x".repeat(65536)).getBytes(StandardCharsets.ISO_8859_1));
            }
            case "big-retryable" -> {
                if (attempt > 1) {
                    answer(ch, anthropic, stream);
                    return;
                }
                up.send(ch, head(503, "application/json", "") + RawUpstream.chunk("{\"error\":{\"message\":\""));
                up.flood(ch, RawUpstream.chunk("x".repeat(65536)).getBytes(StandardCharsets.ISO_8859_1));
            }
            case "sse-flood" -> {
                up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk("data: {\"x\":\""));
                up.flood(ch, RawUpstream.chunk("a".repeat(65536)).getBytes(StandardCharsets.ISO_8859_1));
            }
            case "sse-flood-late" -> {
                up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(firstEvents(anthropic))
                        + RawUpstream.chunk(anthropic ? "event: content_block_delta\ndata: {\"x\":\"" : "data: {\"x\":\""));
                up.flood(ch, RawUpstream.chunk("a".repeat(65536)).getBytes(StandardCharsets.ISO_8859_1));
            }
            case "oom-read" -> go.thenRun(() -> ch.eventLoop().execute(() -> {
                String events = firstEvents(false) + "data: {\"choices\":[{\"ind"; // the next one cut in two
                up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(events));
            }));
            case "oom-write" -> {
                up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(firstEvents(false)));
                go.thenRun(() -> ch.eventLoop().execute(() -> up.send(ch,
                        RawUpstream.chunk(largeEvent() + lastEvents(false)) + "0\r\n\r\n")));
            }
            case "interim" -> {
                up.send(ch, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n");
                ch.eventLoop().schedule(() -> answer(ch, anthropic, stream), 20, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            case "switch", "cl-te", "bare-cr", "bad-status" -> {
                if (attempt > 1) {
                    answer(ch, anthropic, stream);
                    return;
                }
                up.send(ch, switch (scenario) {
                    case "switch" -> "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n";
                    case "cl-te" -> "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
                            + "transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
                    case "bare-cr" -> "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-bad: a\rb\r\n"
                            + "content-length: 2\r\n\r\n{}";
                    default -> "HTTP/1.1 abc OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                });
            }
            case "bad-chunk" -> up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(firstEvents(false))
                    + "zz\r\ngarbage\r\n");
            case "big-answer" -> sendJson(ch, openAiAnswer("y".repeat(100 * 1024)));
            case "hold" -> {
                String all = openAiAnswer("h".repeat(60 * 1024));
                int cut = 60 * 1024;
                up.send(ch, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                        + all.length() + "\r\n\r\n" + all.substring(0, cut));
                go.thenRun(() -> ch.eventLoop().execute(() -> up.send(ch, all.substring(cut))));
            }
            case "cut-translated" -> {
                if (attempt > 1) {
                    answer(ch, false, false);
                    return;
                }
                String all = openAiAnswer("c".repeat(40 * 1024));
                up.send(ch, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                        + all.length() + "\r\n\r\n" + all.substring(0, 30 * 1024)).addListener(f -> ch.close());
            }
            default -> answer(ch, anthropic, stream);
        }
    }

    /** A message holding every credential the request carried, plainly and JSON-escaped, and an AWS key. */
    private static String echo(Received r) {
        String credential = r.headers().getOrDefault("authorization", r.headers().get("x-api-key"));
        return "Incorrect API key provided: " + credential + ". Escaped: " + escape(credential) + ". Extra: "
                + r.headers().getOrDefault("x-secret-token", "none") + ". Cloud: " + AWS_KEY;
    }

    private static String head(int status, String contentType, String extra) {
        return "HTTP/1.1 " + status + " Status\r\ncontent-type: " + contentType + "\r\n" + extra
                + "transfer-encoding: chunked\r\n\r\n";
    }

    /** A well-formed answer in the upstream's style. */
    private static void answer(Channel ch, boolean anthropic, boolean stream) {
        if (stream) {
            up.send(ch, head(200, "text/event-stream", "") + RawUpstream.chunk(firstEvents(anthropic)
                    + lastEvents(anthropic)) + "0\r\n\r\n");
        } else {
            sendJson(ch, anthropic
                    ? "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[{\"type\":"
                            + "\"text\",\"text\":\"hi\"}],\"stop_reason\":\"end_turn\",\"stop_sequence\":null,"
                            + "\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}"
                    : openAiAnswer("hi"));
        }
    }

    private static void sendJson(Channel ch, String json) {
        up.send(ch, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + json.length()
                + "\r\n\r\n" + json);
    }

    private static String openAiAnswer(String content) {
        return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
                + "\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},\"finish_reason\":\"stop\"}],"
                + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}";
    }

    private static String firstEvents(boolean anthropic) {
        return anthropic
                ? "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                        + "\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,"
                        + "\"output_tokens\":0}}}\n\n"
                        + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                        + "{\"type\":\"text\",\"text\":\"\"}}\n\n"
                        + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                        + "{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
                : "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
                        + "\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
    }

    private static String lastEvents(boolean anthropic) {
        return anthropic
                ? "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
                        + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
                        + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n"
                        + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
                : "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
                        + "\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,"
                        + "\"total_tokens\":4}}\n\ndata: [DONE]\n\n";
    }

    /** A chat chunk of some 12 KB: more than one of the gateway's reused buffers for a read's chunks holds. */
    private static String largeEvent() {
        return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,"
                + "\"delta\":{\"content\":\"" + "abc ".repeat(3_000) + "\"},\"finish_reason\":null}]}\n\n";
    }

    /** Every character of {@code s} as a JSON unicode escape. */
    private static String escape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(String.format("\\u%04x", (int) c));
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ helpers

    static String body(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":40,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hostile\"}]}";
    }

    private static void assertNoSecret(String body) {
        for (String secret : List.of(OPENAI_KEY, "Zq81xYw2Vb", ANTHROPIC_KEY, "secret-Kp93", EXTRA_SECRET, "99887766",
                AWS_KEY)) {
            assertThat(body).as("the caller's answer").doesNotContain(secret);
        }
        assertThat(body).doesNotContain("\\u0073\\u006b"); // the escaped form of "sk"
    }

    private static List<String> reasons(List<String[]> pairs) {
        return pairs.stream().map(p -> p[1]).toList();
    }

    private static boolean received(String scenario) {
        return up.received.stream().anyMatch(r -> scenario.equals(r.headers().get("x-hostile")));
    }

    private static CollectedBudget budget() {
        return gw.server().context().collectedBudget();
    }

    private static void assertBudgetEmpty() throws InterruptedException {
        Eventually.until(Duration.ofSeconds(5), () -> budget().held() == 0);
    }

    /** The gateway still answers a plain request in that style. */
    private static void assertStillServing(String path) throws Exception {
        HttpResponse<String> ok = gw.call(path, body(path.equals(CHAT) ? "oa" : "an", false));
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(records.of(ok).outcome()).isEqualTo(Outcome.DONE);
        assertBudgetEmpty();
    }

    private static ExchangeRecord recordOf(String requestId) throws Exception {
        while (true) {
            ExchangeRecord r = records.next();
            if (r.requestId().equals(requestId)) {
                return r;
            }
        }
    }

    private static String requestId(String response) {
        int at = response.indexOf("x-request-id: ") + 14;
        return response.substring(at, response.indexOf('\r', at));
    }

    /**
     * An HTTP/1.1 request on a raw socket. With {@code alloc}, the gateway's side of the connection is given that
     * allocator before the request is sent.
     */
    private static Socket rawRequest(String path, String body, FailingAllocator alloc, String... headers)
            throws Exception {
        Socket s = new Socket("127.0.0.1", gw.port());
        s.setSoTimeout(15_000);
        if (alloc != null) {
            int clientPort = s.getLocalPort();
            Eventually.until(Duration.ofSeconds(5), () -> gw.server().context().connections().stream()
                    .anyMatch(ch -> ((java.net.InetSocketAddress) ch.remoteAddress()).getPort() == clientPort));
            Channel ch = gw.server().context().connections().stream()
                    .filter(c -> ((java.net.InetSocketAddress) c.remoteAddress()).getPort() == clientPort)
                    .findFirst().orElseThrow();
            ch.eventLoop().submit(() -> ch.config().setAllocator(alloc)).get();
        }
        StringBuilder req = new StringBuilder("POST " + path + " HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n");
        if (path.equals(MESSAGES)) {
            req.append("x-api-key: ").append(TestGateway.KEY).append("\r\nanthropic-version: 2023-06-01\r\n");
        } else {
            req.append("authorization: Bearer ").append(TestGateway.KEY).append("\r\n");
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            req.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
        }
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        req.append("content-length: ").append(b.length).append("\r\n\r\n").append(body);
        OutputStream out = s.getOutputStream();
        out.write(req.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
        return s;
    }

    /** Reads until {@code done} holds for what was read, or the connection ends. */
    private static String readToTheEnd(InputStream in, Predicate<String> done) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        while (true) {
            int n;
            try {
                n = in.read(buf);
            } catch (java.net.SocketException e) {
                n = -1; // reset: the end as well
            }
            if (n < 0) {
                break;
            }
            all.write(buf, 0, n);
            if (done.test(all.toString(StandardCharsets.ISO_8859_1))) {
                break;
            }
        }
        return all.toString(StandardCharsets.UTF_8);
    }
}
