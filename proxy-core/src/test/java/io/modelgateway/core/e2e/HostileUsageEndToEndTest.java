package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.ScriptedUpstream;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import io.modelgateway.core.testing.TestGateway;
import io.modelgateway.core.answer.AnswerWriter;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A hostile upstream that reports absurd token counts (10^18, {@code 9223372036854775807}, numbers longer than a
 * long, negative, written as floats) in both API styles, non-stream and stream. For each: the caller still gets its
 * answer, the exchange is accounted with the gateway's estimate and says so in its record and its access-log line,
 * the gateway logs one line naming the provider, {@code /metrics} still renders with sane values, and a key with a
 * per-minute token limit is never told to come back later than a minute.
 */
class HostileUsageEndToEndTest {
    static final String CHAT = "/api/v1/chat/completions";
    static final String MESSAGES = "/api/v1/messages";
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CAPPED_KEY = "sk-capped-key";
    static final String CEILING_KEY = "sk-ceiling-key";

    @TempDir
    static Path dir;
    private static Path accessLog;
    private static ScriptedUpstream upstream;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();
    /** Where an answer's accounting logs (the answer writer's package: proxied and simulated answers alike). */
    private static final Logger exchangeLog = Logger.getLogger(AnswerWriter.class.getPackageName());
    private static final List<String> warnings = new CopyOnWriteArrayList<>();
    private static final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                warnings.add(record.getMessage());
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void start() throws Exception {
        upstream = new ScriptedUpstream(HostileUsageEndToEndTest::answer);
        accessLog = dir.resolve("access.log");
        gw = TestGateway.start("""
                access_log: %s
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                  - name: capped
                    key: sha256:%s
                    models: ["*"]
                    limits: {tokens_per_minute: 1000}
                  - name: ceiling
                    key: sha256:%s
                    models: ["*"]
                    limits: {tokens_per_minute: 1000}
                providers:
                  hostile-oa: {type: openai, base_url: "%s/v1", cooldown: off}
                  hostile-an: {type: anthropic, base_url: "%s", cooldown: off}
                models:
                  oa: {retries: {max: 0}, deployments: [{provider: hostile-oa, model: up-chat}]}
                  an: {retries: {max: 0}, deployments: [{provider: hostile-an, model: up-claude}]}
                """.formatted(accessLog, TestGateway.sha256Hex(CAPPED_KEY), TestGateway.sha256Hex(CEILING_KEY),
                upstream.baseUrl(), upstream.baseUrl()), records);
        exchangeLog.addHandler(capture);
    }

    @AfterAll
    static void stop() {
        exchangeLog.removeHandler(capture);
        gw.close();
        upstream.close();
    }

    @BeforeEach
    void clear() {
        records.clear();
        warnings.clear();
    }

    // ------------------------------------------------------------------ the caller's answer and the record

    @ParameterizedTest
    @ValueSource(strings = {"1000000000000000000", "999999999999999999", "9223372036854775807",
        "99999999999999999999999", "-5", "1e18", "12.5"})
    void chatNonStream_absurdCount_answeredAndAccountedAsEstimated(String count) throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("oa", false, "json:" + count + ":" + count));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).at("/choices/0/message/content").asText()).isEqualTo("hostile hello");
        ExchangeRecord rec = assertEstimated(r, "hostile-oa");
        assertThat(rec.outputTokens()).isZero(); // a whole answer without usable usage: the input estimate only
    }

    @ParameterizedTest
    @ValueSource(strings = {"1000000000000000000", "9223372036854775807", "99999999999999999999999", "1e18", "-1"})
    void chatStream_absurdUsageChunk_streamedWithoutItAndAccountedAsEstimated(String count) throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("oa", true, "sse:" + count + ":" + count));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"content\":\"hostile\"", "\"content\":\" hello\"").endsWith("data: [DONE]\n\n");
        assertThat(r.body()).as("the usage chunk the caller did not ask for (GD-21)").doesNotContain("\"usage\":{");
        ExchangeRecord rec = assertEstimated(r, "hostile-oa");
        assertThat(rec.outputTokens()).isBetween(2L, 10L); // one per event that was not the usage chunk
    }

    @Test
    void messagesStream_longMaxInputAndAFloatOutput_streamedWhole_accountedAsEstimated() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body("an", true, "an-sse:9223372036854775807:1e18"));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"text\":\"hostile hello\"").endsWith("data: {\"type\":\"message_stop\"}\n\n");
        ExchangeRecord rec = assertEstimated(r, "hostile-an");
        assertThat(rec.outputTokens()).isBetween(1L, 10L);
    }

    @Test
    void messagesNonStream_negativeInput_answeredAndAccountedAsEstimated() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body("an", false, "an-json:-40:7"));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).at("/content/0/text").asText()).isEqualTo("hostile hello");
        assertEstimated(r, "hostile-an");
    }

    @Test
    void chatStream_translatedFromAnthropic_countLongerThanALong_callerGetsTheWholeAnswer() throws Exception {
        HttpResponse<String> r = gw.call(CHAT, body("an", true, "an-sse:99999999999999999999999:5")
                .replace("\"stream\":true", "\"stream\":true,\"stream_options\":{\"include_usage\":true}"));

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"content\":\"hostile hello\"", "\"finish_reason\":\"stop\"")
                .doesNotContain("\"error\"").endsWith("data: [DONE]\n\n");
        // The count the gateway does not believe reads as missing (0); the plausible one is passed on.
        JsonNode usage = JSON.readTree(usageChunk(r.body())).path("usage");
        assertThat(usage.path("prompt_tokens").asLong()).isZero();
        assertThat(usage.path("completion_tokens").asLong()).isEqualTo(5);
        assertEstimated(r, "hostile-an");
    }

    @Test
    void messagesNonStream_translatedFromOpenAi_countLongerThanALong_readsAsMissing() throws Exception {
        HttpResponse<String> r = gw.call(MESSAGES, body("oa", false, "json:99999999999999999999999:7"));

        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).path("usage");
        assertThat(usage.path("input_tokens").asLong()).isZero();
        assertThat(usage.path("output_tokens").asLong()).isEqualTo(7);
        assertEstimated(r, "hostile-oa");
    }

    // ------------------------------------------------------------------ /metrics

    @Test
    void metrics_afterTenAnswersOf10e18Tokens_stillRenderWithSaneValues() throws Exception {
        for (int i = 0; i < 10; i++) {
            HttpResponse<String> r = gw.call(CHAT, body("oa", true, "sse:1000000000000000000:1000000000000000000"));
            assertThat(r.statusCode()).isEqualTo(200);
            records.of(r);
        }
        HttpResponse<String> s = gw.call(CHAT, body("oa", true, "sse:9223372036854775807:9223372036854775807"));
        records.of(s);

        HttpResponse<String> metrics = gw.get("/metrics");

        assertThat(metrics.statusCode()).isEqualTo(200);
        for (String direction : List.of("input", "output")) {
            double tokens = sample(metrics.body(),
                    "gateway_tokens_total{direction=\"" + direction + "\",key=\"test\",model=\"oa\",type=\""
                            + direction + "\"}");
            assertThat(tokens).as(direction).isBetween(0.0, 1_000_000.0);
        }
    }

    // ------------------------------------------------------------------ a key with a per-minute token limit

    @Test
    void tokenLimit_answerClaiming10e18Tokens_doesNotLockTheKeyOut() throws Exception {
        HttpResponse<String> first = gw.call(CHAT, body("oa", true, "sse:1000000000000000000:1000000000000000000"),
                "authorization", "Bearer " + CAPPED_KEY);
        assertThat(first.statusCode()).isEqualTo(200);
        records.of(first); // settled

        HttpResponse<String> next = gw.call(CHAT, body("oa", false, "json:10:5"), "authorization",
                "Bearer " + CAPPED_KEY);

        assertThat(next.statusCode()).as("charged the estimate, not 10^18: %s", next.headers().map()).isEqualTo(200);
    }

    @Test
    void tokenLimit_answerAtTheCeiling_refusesTheKeyForAtMostAMinute() throws Exception {
        // 100,000,000 tokens is the most an upstream is believed: counted, and the bucket emptied by it.
        HttpResponse<String> first = gw.call(CHAT, body("oa", false, "json:100000000:0"), "authorization",
                "Bearer " + CEILING_KEY);
        assertThat(first.statusCode()).isEqualTo(200);
        ExchangeRecord rec = records.of(first);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.inputTokens()).isEqualTo(100_000_000L);

        HttpResponse<String> refused = gw.call(CHAT, body("oa", false, "json:10:5"), "authorization",
                "Bearer " + CEILING_KEY);
        HttpResponse<String> refusedMessages = gw.call(MESSAGES, body("an", false, "an-json:10:5"), "x-api-key",
                CEILING_KEY);

        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(refused, "retry-after"))).isBetween(1L, 60L);
        assertThat(Long.parseLong(header(refused, "retry-after-ms"))).isBetween(1L, 60_000L);
        assertThat(header(refused, "x-ratelimit-reset-tokens")).matches("(1m0s|\\d{1,2}(\\.\\d+)?s|\\d+ms)");
        assertThat(refusedMessages.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(refusedMessages, "retry-after"))).isBetween(1L, 60L);
        assertThat(Instant.parse(header(refusedMessages, "anthropic-ratelimit-tokens-reset")))
                .isBefore(Instant.now().plusSeconds(62));
    }

    // ------------------------------------------------------------------ helpers

    /** The record says estimated, its access-log line too, and the gateway logged one line naming the provider. */
    private static ExchangeRecord assertEstimated(HttpResponse<String> r, String provider) throws Exception {
        ExchangeRecord rec = records.of(r);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.inputTokens()).isBetween(1L, 1000L); // the request's own estimate: its bytes / 4
        assertThat(rec.outputTokens()).isBetween(0L, 1000L);
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).contains("upstream " + provider + " ", "implausible", "estimate");

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
        assertThat(logged.path("usage").asText()).isEqualTo("estimated");
        assertThat(logged.path("input_tokens").asLong()).isEqualTo(rec.inputTokens());
        assertThat(logged.path("output_tokens").asLong()).isEqualTo(rec.outputTokens());
        return rec;
    }

    private static String body(String model, boolean stream, String scenario) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":50," + (stream ? "\"stream\":true," : "")
                + "\"messages\":[{\"role\":\"user\",\"content\":\"case=" + scenario + "\"}]}";
    }

    /** The upstream's answer: the scenario the request's message names, {@code kind:first:second}. */
    private static Script answer(ScriptedUpstream.Received r) {
        int at = r.body().indexOf("case=") + 5;
        String[] s = r.body().substring(at, r.body().indexOf('"', at)).split(":");
        String a = s[1];
        String b = s[2];
        return switch (s[0]) {
            case "json" -> Script.json(200, "{\"id\":\"chatcmpl-h\",\"object\":\"chat.completion\",\"created\":1,"
                    + "\"model\":\"up-chat\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                    + "\"content\":\"hostile hello\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" + a
                    + ",\"completion_tokens\":" + b + ",\"total_tokens\":" + a + "}}");
            case "sse" -> Script.sse(0,
                    chunk("{\"role\":\"assistant\",\"content\":\"\"}", "null"),
                    chunk("{\"content\":\"hostile\"}", "null"),
                    chunk("{\"content\":\" hello\"}", "null"),
                    chunk("{}", "\"stop\""),
                    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up-chat\","
                            + "\"choices\":[],\"usage\":{\"prompt_tokens\":" + a + ",\"completion_tokens\":" + b
                            + ",\"total_tokens\":" + a + "}}\n\n",
                    "data: [DONE]\n\n");
            case "an-json" -> Script.json(200, "{\"id\":\"msg_h\",\"type\":\"message\",\"role\":\"assistant\","
                    + "\"model\":\"up-claude\",\"content\":[{\"type\":\"text\",\"text\":\"hostile hello\"}],"
                    + "\"stop_reason\":\"end_turn\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":" + a
                    + ",\"output_tokens\":" + b + "}}");
            case "an-sse" -> Script.sse(0,
                    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_h\","
                            + "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"up-claude\",\"content\":[],"
                            + "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":" + a
                            + ",\"output_tokens\":1}}}\n\n",
                    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                            + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                            + "\"delta\":{\"type\":\"text_delta\",\"text\":\"hostile hello\"}}\n\n",
                    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
                    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
                            + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":" + b + "}}\n\n",
                    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
            default -> throw new IllegalArgumentException(s[0]);
        };
    }

    private static String chunk(String delta, String finishReason) {
        return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"up-chat\","
                + "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + finishReason
                + "}],\"usage\":null}\n\n";
    }

    private static String usageChunk(String stream) {
        for (String event : stream.split("\n\n")) {
            if (event.contains("\"usage\":{")) {
                return event.substring(event.indexOf("data: ") + 6);
            }
        }
        throw new AssertionError("no usage chunk in " + stream);
    }

    private static double sample(String exposition, String series) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1));
            }
        }
        throw new AssertionError("no sample " + series + " in\n" + exposition);
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
