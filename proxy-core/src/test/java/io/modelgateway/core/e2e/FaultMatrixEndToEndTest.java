package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fault matrix: one real standalone simulator as the upstream (OpenAI-style provider {@code oa}, Anthropic-style
 * provider {@code an}, both reached over real sockets and fed the fault by the forwarded {@code x-sim-fault} header),
 * the in-process simulator where its own code path differs ({@code inproc}), and a gateway in front. Every case
 * asserts (a) what the caller sees — status and error body, or the events and the exact GD-10 error event with no
 * {@code [DONE]} / {@code message_stop}; (b) the exchange record — outcome, status, usage; (c) the access-log line of
 * that request id; (d) that the gateway answers a normal request right after. (e) Buffer leaks fail the class through
 * the leak-check extension every test class gets (PARANOID detector, see {@code LeakCheckExtension}).
 *
 * <p>Retries never replay a partly sent answer: {@code RetryAndFallbackEndToEndTest#streamCutMidway_isNotReplayed}
 * (a cut stream with a healthy second deployment: the caller gets the partial stream and the error event, exactly one
 * attempt) covers it for both upstream kinds, so it is not repeated here.
 */
class FaultMatrixEndToEndTest {
    static final String CHAT = "/api/v1/chat/completions";
    static final String MESSAGES = "/api/v1/messages";
    static final ObjectMapper JSON = new ObjectMapper();
    static final String LOST = "Upstream connection lost";
    static final String STALLED = "The upstream provider stopped sending in time.";
    static final String MALFORMED_EVENT = "The upstream provider sent a malformed event.";
    static final String MALFORMED_ANSWER = "The upstream provider returned a malformed answer.";
    /** The client connections' high watermark (GatewayServer). */
    static final int HIGH_WATERMARK = 64 * 1024;

    @TempDir
    static Path dir;
    private static Path accessLog;
    private static SimulatorServer sim;
    private static URI simBase;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, null);
        simBase = URI.create("http://127.0.0.1:" + sim.port() + "/v1");
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort(); // nothing listens there once closed: connections are refused
        }
        accessLog = dir.resolve("access.log");
        String timeouts = "timeouts: {first_byte_ms: 400, stream_idle_ms: 400, total_ms: 20000}";
        gw = TestGateway.start("""
                access_log: %1$s
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  oa: {type: openai, base_url: "http://127.0.0.1:%2$d/v1", forward_headers: ["x-sim-*"], cooldown: off,
                       %4$s}
                  an: {type: anthropic, base_url: "http://127.0.0.1:%2$d", forward_headers: ["x-sim-*"], cooldown: off,
                       %4$s}
                  patient: {type: openai, base_url: "http://127.0.0.1:%2$d/v1", forward_headers: ["x-sim-*"], cooldown: off,
                            timeouts: {first_byte_ms: 10000, stream_idle_ms: 10000, total_ms: 60000}}
                  good: {type: openai, base_url: "http://127.0.0.1:%2$d/v1"}
                  refused: {type: openai, base_url: "http://127.0.0.1:%3$d/v1", cooldown: off}
                  inproc: {type: simulator, forward_headers: ["x-sim-*"], cooldown: off, %4$s}
                models:
                  oa: {retries: {max: 0}, deployments: [{provider: oa, model: sim-chat-1}]}
                  an: {retries: {max: 0}, deployments: [{provider: an, model: sim-claude-1}]}
                  patient: {retries: {max: 0}, deployments: [{provider: patient, model: sim-chat-1}]}
                  inproc: {retries: {max: 0}, deployments: [{provider: inproc, model: sim-chat-1}]}
                  refused: {retries: {max: 0}, deployments: [{provider: refused, model: sim-chat-1}]}
                  backed: {retries: {max: 1, backoff_ms: 10}, deployments: [{provider: oa, model: sim-chat-1, weight: 1000000},
                                                                           {provider: good, model: sim-chat-1, weight: 1}]}
                """.formatted(accessLog, sim.port(), closedPort, timeouts), records);
    }

    @AfterAll
    static void stop() {
        gw.close();
        sim.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
    }

    // ------------------------------------------------------------------ statuses before the answer

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, 503, server_error, overloaded", "/api/v1/messages, 529, overloaded_error, "})
    void refusedConnect_overloadedInTheCallersStyle(String path, int status, String type, String code) throws Exception {
        HttpResponse<String> r = gw.call(path, body("refused", false));
        assertError(r, path, status, type, code);
        assertRecord(r, Outcome.UPSTREAM_ERROR, status, ExchangeRecord.UsageSource.NONE);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, requests, rate_limit_exceeded", "/api/v1/messages, an, rate_limit_error, "})
    void upstream429WithRetryAfter_relayedWithItsRetryAfter_whenNothingElseIsLeft(String path, String model, String type,
            String code) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, false), "x-sim-fault", "status=429,retry_after=1");
        assertError(r, path, 429, type, code);
        assertThat(r.headers().firstValue("retry-after")).hasValue("1");
        assertRecord(r, Outcome.UPSTREAM_ERROR, 429, ExchangeRecord.UsageSource.NONE);
        assertStillServing(path);
    }

    @Test
    void upstream429WithRetryAfter_anotherDeploymentAnswers() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("backed", false), "x-sim-fault", "status=429,retry_after=1");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"object\":\"chat.completion\"");
        ExchangeRecord rec = assertRecord(r, Outcome.DONE, 200, ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.attempts()).isEqualTo(2);
        assertThat(rec.provider()).isEqualTo("good");
    }

    /** Same style: the upstream's status and body as they are; across styles: re-expressed by 7.3 / 8.10. */
    @ParameterizedTest
    @CsvSource({
        "/api/v1/chat/completions, oa, 500, 500, server_error",
        "/api/v1/chat/completions, oa, 503, 503, server_error",
        "/api/v1/chat/completions, an, 529, 503, server_error",
        "/api/v1/messages,         an, 500, 500, api_error",
        "/api/v1/messages,         an, 529, 529, overloaded_error",
        "/api/v1/messages,         oa, 503, 529, overloaded_error",
    })
    void upstream5xx_callerSeesTheStatusOfTheTable(String path, String model, int upstream, int status, String type)
            throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, false), "x-sim-fault", "status=" + upstream);
        assertError(r, path, status, type, status == 503 && upstream == 529 ? "overloaded" : null);
        assertRecord(r, Outcome.UPSTREAM_ERROR, status, ExchangeRecord.UsageSource.NONE);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, true, server_error, upstream_timeout",
        "/api/v1/messages, an, false, timeout_error, ", "/api/v1/messages, oa, true, timeout_error, "})
    void stallBeforeTheFirstByte_504InTheCallersStyle(String path, String model, boolean stream, String type,
            String code) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, stream), "x-sim-fault", "delay_ms=1500");
        assertError(r, path, 504, type, code);
        assertRecord(r, Outcome.UPSTREAM_ERROR, 504, null);
        assertStillServing(path);
    }

    // ------------------------------------------------------------------ failures mid-stream

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/messages, oa",
        "/api/v1/chat/completions, inproc"})
    void stallMidStream_errorEventAfterTheEventsSoFar_noTerminator(String path, String model) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-sim-fault", "stall_after=3",
                "x-sim-output-tokens", "20");
        assertStreamError(r, path, STALLED, "timeout_error", "upstream_timeout", 3);
        ExchangeRecord rec = assertRecord(r, Outcome.UPSTREAM_ERROR, 200, ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.outputTokens()).isBetween(3L, 8L);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/messages, oa",
        "/api/v1/chat/completions, an"})
    void cutMidStream_errorEventAfterTheEventsSoFar_noTerminator(String path, String model) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-sim-fault", "cut_after=3",
                "x-sim-output-tokens", "20");
        assertStreamError(r, path, LOST, "api_error", "upstream_error", 3);
        ExchangeRecord rec = assertRecord(r, Outcome.UPSTREAM_ERROR, 200, ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.outputTokens()).isBetween(3L, 8L);
        assertStillServing(path);
    }

    // ------------------------------------------------------------------ garbage (7.3: 502 upstream_error / api_error)

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/chat/completions, inproc"})
    void malformedAnswer_sameStyle_502_andTheUpstreamConnectionIsNotPooled(String path, String model)
            throws Exception {
        assertStillServing(path); // one idle upstream connection to take
        int idleBefore = idleUpstreamConnections();
        HttpResponse<String> r = gw.call(path, body(model, false), "x-sim-fault", "malformed=1");
        assertError(r, path, 502, path.equals(CHAT) ? "server_error" : "api_error",
                path.equals(CHAT) ? "upstream_error" : null);
        assertThat(r.body()).contains(MALFORMED_ANSWER);
        assertRecord(r, Outcome.UPSTREAM_ERROR, 502, null);
        if (!model.equals("inproc")) {
            assertUpstreamClosed(idleBefore);
        }
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/messages, oa, api_error", "/api/v1/chat/completions, an, server_error"})
    void malformedAnswer_translated_502InTheCallersStyle(String path, String model, String type) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, false), "x-sim-fault", "malformed=1");
        assertError(r, path, 502, type, null);
        assertRecord(r, Outcome.UPSTREAM_ERROR, 502, null);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/messages, oa",
        "/api/v1/chat/completions, inproc"})
    void malformedStreamEvent_errorEventAfterTheEventsBeforeIt_noTerminator(String path, String model)
            throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-sim-fault", "malformed=3",
                "x-sim-output-tokens", "20");
        assertStreamError(r, path, MALFORMED_EVENT, "api_error", "upstream_error", 2);
        ExchangeRecord rec = assertRecord(r, Outcome.UPSTREAM_ERROR, 200, ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.outputTokens()).isBetween(2L, 7L);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa, server_error", "/api/v1/messages, an, api_error"})
    void malformedFirstStreamEvent_502BeforeAnyByte_GD24(String path, String model, String type) throws Exception {
        HttpResponse<String> r = gw.call(path, body(model, true), "x-sim-fault", "malformed=0");
        assertError(r, path, 502, type, null);
        assertThat(r.body()).contains(MALFORMED_ANSWER);
        assertRecord(r, Outcome.UPSTREAM_ERROR, 502, null);
        assertStillServing(path);
    }

    // ------------------------------------------------------------------ the client misbehaves

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an"})
    void clientDisconnectBeforeTheFirstByte_cancelled_nothingBilledButTheInput_upstreamClosed(String path,
            String model) throws Exception {
        assertStillServing(path);
        int idleBefore = idleUpstreamConnections();
        try (Socket s = rawRequest(path, body(model, true), 0, "x-sim-fault", "delay_ms=1000")) {
            Thread.sleep(100); // the upstream has the request and thinks
        }
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(rec.outputTokens()).as("no answer, nothing generated is billed").isZero();
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED); // the input it was sent
        assertLogged(rec);
        assertUpstreamClosed(idleBefore);
        assertStillServing(path);
    }

    @ParameterizedTest
    @CsvSource({"/api/v1/chat/completions, oa", "/api/v1/messages, an", "/api/v1/chat/completions, inproc"})
    void clientDisconnectMidStream_cancelled_accountedWithWhatWasDelivered_upstreamClosed(String path, String model)
            throws Exception {
        assertStillServing(path);
        int idleBefore = idleUpstreamConnections();
        try (Socket s = rawRequest(path, body(model, true), 0, "x-sim-tps", "40", "x-sim-output-tokens", "400")) {
            InputStream in = s.getInputStream();
            String seen = "";
            byte[] buf = new byte[4096];
            while (count(seen, "data: ") < 6) {
                int n = in.read(buf);
                assertThat(n).isPositive();
                seen += new String(buf, 0, n, StandardCharsets.UTF_8);
            }
        }
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(rec.status()).isEqualTo(200);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.inputTokens()).isPositive();
        assertThat(rec.outputTokens()).isBetween(3L, 100L); // ~40 tokens/s for well under 2 s, not the full 400
        assertLogged(rec);
        if (!model.equals("inproc")) {
            assertUpstreamClosed(idleBefore);
        }
        assertStillServing(path);
    }

    /**
     * A client that stops reading: the gateway stops reading the upstream (or the in-process simulator stops
     * producing) once the connection's high watermark is passed, so what the gateway holds for the connection stays
     * near the watermark however long the client waits; then the client reads everything and the stream is whole.
     * The HTTP upstream is a provider with long timeouts: what is checked here is memory, and on a machine busy
     * enough to stall the simulator's thread for 400 ms the class's short idle timeout would end the stream first.
     */
    @ParameterizedTest
    @CsvSource({"patient", "inproc"})
    void slowReadingClient_gatewayHoldsAboutAWatermark_thenTheWholeStreamArrives(String model) throws Exception {
        String requestId;
        int tokens = 20_000; // ~5 MB of chunks, far more than the socket buffers between gateway and client hold
        try (Socket s = rawRequest(CHAT, body(model, true), 4096, "x-sim-tps", "0",
                "x-sim-output-tokens", String.valueOf(tokens))) {
            long maxPending = 0;
            boolean paused = false;
            // Until the gateway holds a watermark's worth for the connection (a busy machine may take a while), then
            // two more seconds of a client that reads nothing.
            long giveUp = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            long end = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(end, giveUp)) {
                long[] state = onGatewayLoop(FaultMatrixEndToEndTest::pendingWrites);
                maxPending = Math.max(maxPending, state[0]);
                if (!paused && state[1] > 0) {
                    paused = true;
                    end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                }
                Thread.sleep(50);
            }
            assertThat(paused).as("the connection passed its high watermark (backpressure engaged)").isTrue();
            assertThat(maxPending).as("bytes queued in the gateway for the unread connection")
                    .isLessThanOrEqualTo(4L * HIGH_WATERMARK);

            String all = readChunkedToTheEnd(s.getInputStream());
            assertThat(all).startsWith("HTTP/1.1 200").endsWith("data: [DONE]\n\n\r\n0\r\n\r\n");
            assertThat(count(all, "\"delta\":{\"content\"")).isGreaterThanOrEqualTo(tokens - 1);
            int at = all.indexOf("x-request-id: ") + 14;
            requestId = all.substring(at, all.indexOf('\r', at));
        }
        ExchangeRecord rec = recordOf(requestId);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.outputTokens()).isEqualTo(tokens);
        assertLogged(rec);
        assertStillServing(CHAT);
    }

    // ------------------------------------------------------------------ helpers

    static String body(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":" + (stream ? 100_000 : 40) + ",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"fault matrix\"}]}";
    }

    private static void assertError(HttpResponse<String> r, String path, int status, String type, String code)
            throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("application/json");
        JsonNode body = JSON.readTree(r.body());
        if (path.equals(MESSAGES)) {
            assertThat(body.path("type").asText()).isEqualTo("error");
            assertThat(body.path("error").path("type").asText()).isEqualTo(type);
        } else {
            assertThat(body.path("error").path("type").asText()).isEqualTo(type);
            if (code != null) {
                assertThat(body.path("error").path("code").asText()).isEqualTo(code);
            }
        }
    }

    /** A 200 stream with at least {@code contentEvents} content events, then exactly the GD-10 error event. */
    private static void assertStreamError(HttpResponse<String> r, String path, String message, String anthropicType,
            String openAiCode, int contentEvents) {
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        String body = r.body();
        if (path.equals(MESSAGES)) {
            assertThat(body).startsWith("event: message_start").doesNotContain("message_stop")
                    .endsWith("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"" + anthropicType
                            + "\",\"message\":\"" + message + "\"}}\n\n");
            assertThat(count(body, "event: content_block_delta")).isGreaterThanOrEqualTo(contentEvents);
        } else {
            assertThat(body).startsWith("data: {").doesNotContain("[DONE]")
                    .endsWith("data: {\"error\":{\"message\":\"" + message + "\",\"type\":\"server_error\","
                            + "\"param\":null,\"code\":\"" + openAiCode + "\"}}\n\n");
            assertThat(count(body, "\"delta\":{\"content\"")).isGreaterThanOrEqualTo(contentEvents);
        }
        assertThat(count(body, path.equals(MESSAGES) ? "event: error" : "{\"error\"")).as("one error event").isOne();
    }

    /** The record of the response, as asserted, and its access-log line. */
    private static ExchangeRecord assertRecord(HttpResponse<String> r, Outcome outcome, int status,
            ExchangeRecord.UsageSource usage) throws Exception {
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(outcome);
        assertThat(rec.status()).isEqualTo(status);
        if (usage != null) {
            assertThat(rec.usageSource()).isEqualTo(usage);
        }
        if (usage == ExchangeRecord.UsageSource.NONE) {
            assertThat(rec.inputTokens() + rec.outputTokens()).isZero();
        }
        assertLogged(rec);
        return rec;
    }

    /** The access log has the exchange's line, with its status and outcome. */
    private static void assertLogged(ExchangeRecord rec) throws Exception {
        String id = "\"request_id\":\"" + rec.requestId() + "\"";
        String[] line = new String[1];
        Eventually.until(Duration.ofSeconds(5), () -> {
            try {
                line[0] = Files.readAllLines(accessLog).stream().filter(l -> l.contains(id)).findFirst().orElse(null);
            } catch (java.io.IOException e) {
                return false;
            }
            return line[0] != null;
        });
        JsonNode logged = JSON.readTree(line[0]);
        assertThat(logged.path("status").asInt()).isEqualTo(rec.status());
        assertThat(logged.path("outcome").asText()).isEqualTo(rec.outcome().label());
        assertThat(logged.path("output_tokens").asLong()).isEqualTo(rec.outputTokens());
    }

    /** The record of a request by its id (records of other exchanges ending meanwhile are skipped). */
    private static ExchangeRecord recordOf(String requestId) throws Exception {
        while (true) {
            ExchangeRecord r = records.next();
            if (r.requestId().equals(requestId)) {
                return r;
            }
        }
    }

    /** The gateway still answers a plain request in that style (and its record is taken). */
    private static void assertStillServing(String path) throws Exception {
        HttpResponse<String> ok = gw.call(path, body(path.equals(CHAT) ? "oa" : "an", false));
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(records.of(ok).outcome()).isEqualTo(Outcome.DONE);
    }

    /** Idle pooled connections to the simulator (read on the gateway's only event loop). */
    private static int idleUpstreamConnections() throws Exception {
        UpstreamPools pools = gw.server().context().pools();
        return onGatewayLoop(() -> pools.idleCount(simBase));
    }

    /**
     * The exchange's upstream connection was closed, not pooled: it took the idle connection there was (or opened
     * one), so afterwards one fewer (or none) is idle, and every open upstream connection is an idle one.
     */
    private static void assertUpstreamClosed(int idleBefore) throws Exception {
        UpstreamPools pools = gw.server().context().pools();
        int expected = Math.max(0, idleBefore - 1);
        Eventually.until(Duration.ofSeconds(5), () -> {
            try {
                return onGatewayLoop(() -> pools.idleCount(simBase)) == expected
                        && pools.openConnections() == expected;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Runs on the gateway's event loop (it has one): pools and outbound buffers are confined to it. */
    private static <T> T onGatewayLoop(Callable<T> task) throws Exception {
        try (Socket probe = new Socket("127.0.0.1", gw.port())) {
            Eventually.until(Duration.ofSeconds(5), () -> !gw.server().context().connections().isEmpty());
            Channel any = gw.server().context().connections().iterator().next();
            return any.eventLoop().submit(task).get();
        }
    }

    /** The largest number of bytes queued for writing on one client connection; and how many are not writable. */
    private static long[] pendingWrites() {
        long max = 0;
        long unwritable = 0;
        for (Channel ch : gw.server().context().connections()) {
            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
            if (out != null) {
                max = Math.max(max, out.totalPendingWriteBytes());
            }
            if (!ch.isWritable() && ch.isActive()) {
                unwritable++;
            }
        }
        return new long[] {max, unwritable};
    }

    /** An HTTP/1.1 request on a raw socket (receive buffer set before connecting when {@code rcvbuf > 0}). */
    private static Socket rawRequest(String path, String body, int rcvbuf, String... headers) throws Exception {
        Socket s = new Socket();
        if (rcvbuf > 0) {
            s.setReceiveBufferSize(rcvbuf);
        }
        s.connect(new java.net.InetSocketAddress("127.0.0.1", gw.port()));
        s.setSoTimeout(20_000);
        if (rcvbuf > 0) {
            // The gateway side's kernel send buffer would otherwise grow to megabytes before the gateway itself holds
            // anything: keep it small, so the test reaches the gateway's own backpressure in a few hundred KB.
            int clientPort = s.getLocalPort();
            Eventually.until(Duration.ofSeconds(5), () -> gw.server().context().connections().stream()
                    .anyMatch(ch -> ((java.net.InetSocketAddress) ch.remoteAddress()).getPort() == clientPort));
            Channel ch = gw.server().context().connections().stream()
                    .filter(c -> ((java.net.InetSocketAddress) c.remoteAddress()).getPort() == clientPort)
                    .findFirst().orElseThrow();
            ch.eventLoop().submit(() -> ch.config().setOption(io.netty.channel.ChannelOption.SO_SNDBUF, 8192)).get();
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

    /** Reads a chunked response to its terminating chunk; returns it raw (chunk framing included). */
    private static String readChunkedToTheEnd(InputStream in) throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream(1 << 24);
        byte[] buf = new byte[1 << 16];
        byte[] end = "\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] tail = new byte[end.length];
        while (!java.util.Arrays.equals(tail, end)) {
            int n = in.read(buf);
            assertThat(n).as("the stream ended before its last chunk").isPositive();
            all.write(buf, 0, n);
            // the last bytes seen, across reads
            int keep = Math.max(0, end.length - n);
            System.arraycopy(tail, end.length - keep, tail, 0, keep);
            System.arraycopy(buf, n - (end.length - keep), tail, keep, end.length - keep);
        }
        return all.toString(StandardCharsets.UTF_8);
    }

    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }
}
