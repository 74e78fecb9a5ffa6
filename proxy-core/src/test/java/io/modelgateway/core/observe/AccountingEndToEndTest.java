package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Every exchange is accounted with the tokens the upstream reported: non-stream and stream, with and without
 * the caller's {@code include_usage}, same style and across styles, in-process simulator and through provider
 * types {@code openai} and {@code anthropic}; a cancelled stream with what was delivered.
 */
class AccountingEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String HELLO = "\"messages\":[{\"role\":\"user\",\"content\":\"count the tokens of this exchange\"}]";
    private static SimulatorServer sim;
    private static TestGateway gw;
    private static final RecordingObserver records = new RecordingObserver();

    @BeforeAll
    static void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, "sk-up", null);
        String base = "http://127.0.0.1:" + sim.port();
        gw = TestGateway.start("""
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                  sim-openai: {type: openai, base_url: "%s/v1", api_key: sk-up}
                  sim-anthropic: {type: anthropic, base_url: "%s", api_key: sk-up}
                models:
                  sim-chat: {deployments: [{provider: sim, model: sim-chat-1}]}
                  sim-embed: {type: embedding, deployments: [{provider: sim, model: sim-embed-1}]}
                  oa-chat: {deployments: [{provider: sim-openai, model: sim-chat-1}]}
                  oa-embed: {type: embedding, deployments: [{provider: sim-openai, model: sim-embed-1}]}
                  an-chat: {deployments: [{provider: sim-anthropic, model: sim-claude-1}]}
                """.formatted(base, base), records);
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

    @ParameterizedTest
    @ValueSource(strings = {"sim-chat", "oa-chat", "an-chat"})
    void chat_nonStream_accountedAsTheAnswerSays(String model) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"" + model + "\"," + HELLO + "}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).path("usage");
        ExchangeRecord rec = records.next();
        assertAccounted(rec, usage.path("prompt_tokens").asLong(), usage.path("completion_tokens").asLong());
        assertThat(rec.model()).isEqualTo(model);
        assertThat(rec.outcome()).isEqualTo(Outcome.DONE);
        assertThat(rec.status()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim-chat", "oa-chat", "an-chat"})
    void chat_stream_withUsage_accountedAsTheUsageChunkSays(String model) throws Exception {
        JsonNode usage = usageChunk(model);
        ExchangeRecord rec = records.next();
        assertAccounted(rec, usage.path("prompt_tokens").asLong(), usage.path("completion_tokens").asLong());
        assertThat(rec.stream()).isTrue();
        assertThat(rec.firstByteLatencyNanos()).isPositive();
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim-chat", "oa-chat", "an-chat"})
    void chat_stream_withoutUsage_callerSeesNoUsageButTheExchangeIsAccounted(String model) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"" + model + "\",\"stream\":true," + HELLO + "}");
        assertThat(r.statusCode()).isEqualTo(200);
        List<JsonNode> chunks = chunks(r.body());
        assertThat(chunks).allSatisfy(c -> {
            assertThat(c.path("choices").size()).as("no usage-only chunk (GD-21)").isPositive();
            assertThat(c.path("usage").isObject()).isFalse();
        });
        ExchangeRecord rec = records.next();
        assertThat(rec.bytesOut()).as("the body's bytes, without the chunks' framing")
                .isEqualTo(r.body().getBytes(StandardCharsets.UTF_8).length);
        assertThat(rec.firstByteLatencyNanos()).isPositive();
        // The simulator is deterministic: the same request with include_usage shows what the upstream counted.
        JsonNode usage = usageChunk(model);
        records.next();
        assertAccounted(rec, usage.path("prompt_tokens").asLong(), usage.path("completion_tokens").asLong());
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim-chat", "oa-chat", "an-chat"})
    void messages_nonStreamAndStream_accountedAsTheMessageSays(String model) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"" + model + "\",\"max_tokens\":50," + HELLO + "}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).path("usage");
        long input = usage.path("input_tokens").asLong() + usage.path("cache_read_input_tokens").asLong()
                + usage.path("cache_creation_input_tokens").asLong();
        assertAccounted(records.next(), input, usage.path("output_tokens").asLong());

        HttpResponse<String> s = gw.call("/api/v1/messages",
                "{\"model\":\"" + model + "\",\"max_tokens\":50,\"stream\":true," + HELLO + "}");
        assertThat(s.statusCode()).isEqualTo(200);
        long streamIn = -1;
        long streamOut = -1;
        for (String e : s.body().split("\n\n")) {
            String data = e.substring(e.indexOf("data: ") + 6);
            JsonNode d = JSON.readTree(data);
            if (d.path("type").asText().equals("message_start")) {
                JsonNode u = d.at("/message/usage");
                streamIn = u.path("input_tokens").asLong() + u.path("cache_read_input_tokens").asLong()
                        + u.path("cache_creation_input_tokens").asLong();
            } else if (d.path("type").asText().equals("message_delta")) {
                JsonNode u = d.path("usage");
                streamOut = u.path("output_tokens").asLong();
                if (u.has("input_tokens")) { // translated streams learn the input only at the end (8.9)
                    streamIn = u.path("input_tokens").asLong() + u.path("cache_read_input_tokens").asLong()
                            + u.path("cache_creation_input_tokens").asLong();
                }
            }
        }
        assertAccounted(records.next(), streamIn, streamOut);
    }

    @ParameterizedTest
    @ValueSource(strings = {"sim-embed", "oa-embed"})
    void embeddings_accountedAsInputOnly(String model) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/embeddings",
                "{\"model\":\"" + model + "\",\"input\":[\"one text\",\"and another one\"]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(r.body()).path("usage");
        assertAccounted(records.next(), usage.path("prompt_tokens").asLong(), 0);
    }

    @Test
    void upstreamError_accountsNothing() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HELLO + "}",
                "x-sim-fault", "status=503");
        assertThat(r.statusCode()).isEqualTo(503);
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.UPSTREAM_ERROR);
        assertThat(rec.inputTokens() + rec.outputTokens()).isZero();
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.NONE);
    }

    @Test
    void unknownModel_isRecordedWithoutTokens() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"nope\"," + HELLO + "}");
        assertThat(r.statusCode()).isEqualTo(404);
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.REJECTED);
        assertThat(rec.keyName()).isEqualTo("test");
        assertThat(rec.model()).isNull();
    }

    @Test
    void cancelledStream_accountedWithWhatWasDelivered() throws Exception {
        String body = "{\"model\":\"sim-chat\",\"stream\":true," + HELLO + "}";
        try (Socket s = new Socket("127.0.0.1", gw.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /api/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    + "authorization: Bearer " + TestGateway.KEY + "\r\nx-sim-tps: 40\r\nx-sim-output-tokens: 400\r\n"
                    + "content-length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
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
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.ESTIMATED);
        assertThat(rec.inputTokens()).isPositive();
        assertThat(rec.outputTokens()).isBetween(4L, 100L); // ~40 tokens/s for well under 2 s, not the full 400
    }

    private static void assertAccounted(ExchangeRecord rec, long input, long output) {
        assertThat(input).as("the caller-visible input count").isPositive();
        assertThat(rec.usageSource()).isEqualTo(ExchangeRecord.UsageSource.UPSTREAM);
        assertThat(rec.inputTokens()).as("input tokens").isEqualTo(input);
        assertThat(rec.outputTokens()).as("output tokens").isEqualTo(output);
        assertThat(rec.keyName()).isEqualTo("test");
    }

    private static JsonNode usageChunk(String model) throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"" + model + "\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}," + HELLO + "}");
        assertThat(r.statusCode()).isEqualTo(200);
        List<JsonNode> chunks = chunks(r.body());
        JsonNode last = chunks.get(chunks.size() - 1);
        assertThat(last.path("choices")).isEmpty();
        return last.path("usage");
    }

    private static List<JsonNode> chunks(String body) throws Exception {
        assertThat(body).endsWith("data: [DONE]\n\n");
        List<JsonNode> out = new ArrayList<>();
        for (String e : body.split("\n\n")) {
            if (e.startsWith("data: ") && !e.equals("data: [DONE]")) {
                out.add(JSON.readTree(e.substring(6)));
            }
        }
        return out;
    }

    private static int count(String s, String needle) {
        int n = 0;
        for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }
}
