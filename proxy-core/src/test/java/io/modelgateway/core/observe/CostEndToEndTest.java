package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.MetricsText;
import io.modelgateway.core.testing.RecordingObserver;
import io.modelgateway.core.testing.TestGateway;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cost, spend budgets and Server-Timing end to end, on a real gateway with the in-process simulator and an HTTP
 * upstream (the standalone simulator, OpenAI-style, so that the messages style is translated): what the caller reads
 * in the answer's usage, priced at the configured price, is what the cost header, the access log, the metrics and the
 * admin listener's spend report say; a budget used up answers 429 without retry in both styles.
 */
class CostEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String FRUGAL_KEY = "sk-frugal-key";
    static final String HI = "\"messages\":[{\"role\":\"user\",\"content\":\"hi there, how are you today?\"}]";
    static final double PER_REQUEST = 0.001;

    @TempDir
    Path dir;
    private SimulatorServer sim;
    private TestGateway gw;
    private final RecordingObserver records = new RecordingObserver();
    private Path log;

    @BeforeEach
    void start() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, "sk-up", null);
        log = dir.resolve("access.log");
        gw = TestGateway.start(config(2, 10), records);
    }

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        if (sim != null) {
            sim.close();
        }
    }

    private String config(double input, double output) {
        return """
                access_log: "%s"
                admin:
                  listen: 127.0.0.1:0
                keys:
                  - name: team-a
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                    cost_header: true
                  - name: frugal
                    key: sha256:%s
                    models: ["*"]
                    budget_usd: {daily: 0.0001, monthly: 100}
                providers:
                  sim: {type: simulator, forward_headers: ["x-sim-*"]}
                  up: {type: openai, base_url: "http://127.0.0.1:%d/v1", api_key: sk-up}
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1, price: {input: %s, cached_input: 0.5, output: %s, per_request: %s}}]
                  up-chat:
                    deployments: [{provider: up, model: sim-chat-1, price: {input: %s, output: %s}}]
                  sim-free:
                    deployments: [{provider: sim, model: sim-chat-1}]
                """.formatted(log, TestGateway.sha256Hex(FRUGAL_KEY), sim.port(), input, output, PER_REQUEST, input,
                output);
    }

    private static double cost(double input, double output, double perRequest, long in, long out) {
        return perRequest + (in * input + out * output) / 1e6;
    }

    @Test
    void wholeAnswers_bothStyles_costInTheHeaderTheAccessLogAndTheMetrics() throws Exception {
        HttpResponse<String> chat = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HI + "}");
        assertThat(chat.statusCode()).isEqualTo(200);
        JsonNode u = JSON.readTree(chat.body()).get("usage");
        double chatCost = cost(2, 10, PER_REQUEST, u.get("prompt_tokens").asLong(), u.get("completion_tokens").asLong());
        assertThat(Double.parseDouble(header(chat, "x-gateway-cost-usd"))).isCloseTo(chatCost, within(1e-9));

        // Anthropic style, translated from an OpenAI-style HTTP upstream: priced at that deployment's price.
        HttpResponse<String> msg = gw.call("/api/v1/messages",
                "{\"model\":\"up-chat\",\"max_tokens\":20," + HI + "}");
        assertThat(msg.statusCode()).isEqualTo(200);
        JsonNode mu = JSON.readTree(msg.body()).get("usage");
        double msgCost = cost(2, 10, 0, mu.get("input_tokens").asLong(), mu.get("output_tokens").asLong());
        assertThat(msgCost).isPositive();
        assertThat(Double.parseDouble(header(msg, "x-gateway-cost-usd"))).isCloseTo(msgCost, within(1e-9));

        // No price, no cost anywhere; a key without cost_header gets no header.
        HttpResponse<String> free = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-free\"," + HI + "}");
        assertThat(free.statusCode()).isEqualTo(200);
        assertThat(header(free, "x-gateway-cost-usd")).isNull();
        HttpResponse<String> frugal = gw.call("/api/v1/chat/completions", "{\"model\":\"up-chat\"," + HI + "}",
                "authorization", "Bearer " + FRUGAL_KEY);
        assertThat(frugal.statusCode()).isEqualTo(200);
        assertThat(header(frugal, "x-gateway-cost-usd")).isNull();

        List<JsonNode> lines = accessLog(4);
        assertThat(lines.get(0).get("cost_usd").asDouble()).isCloseTo(chatCost, within(1e-9));
        assertThat(lines.get(1).get("cost_usd").asDouble()).isCloseTo(msgCost, within(1e-9));
        assertThat(lines.get(2).get("cost_usd").isNull()).as("unpriced: null").isTrue();
        assertThat(lines.get(2).has("gateway_ms")).isTrue();

        MetricsText m = MetricsText.parse(adminGet("/metrics").body());
        assertThat(m.sum("gateway_cost_usd_total", "model", "sim-chat", "key", "team-a", "provider", "sim"))
                .isCloseTo(chatCost, within(1e-9));
        assertThat(m.sum("gateway_cost_usd_total", "model", "up-chat", "key", "team-a", "provider", "up"))
                .isCloseTo(msgCost, within(1e-9));
        assertThat(m.values("gateway_cost_usd_total", "model")).doesNotContain("sim-free");
    }

    /**
     * Input read from the provider's prompt cache is priced at the deployment's {@code cached_input} rate, the rest of
     * the input at {@code input}: the cost follows the token types the accounting reports.
     */
    @Test
    void cachedInput_isPricedAtTheCachedRate() throws Exception {
        HttpResponse<String> chat = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HI + "}",
                "x-sim-cached-tokens", "3");
        assertThat(chat.statusCode()).isEqualTo(200);
        JsonNode u = JSON.readTree(chat.body()).get("usage");
        long prompt = u.get("prompt_tokens").asLong();
        long cached = u.path("prompt_tokens_details").path("cached_tokens").asLong();
        assertThat(cached).as("the simulator reported cached input").isEqualTo(3);
        double expected = PER_REQUEST + ((prompt - cached) * 2 + cached * 0.5
                + u.get("completion_tokens").asLong() * 10) / 1e6;
        assertThat(Double.parseDouble(header(chat, "x-gateway-cost-usd"))).isCloseTo(expected, within(1e-9));
        assertThat(accessLog(1).get(0).get("cached_input_tokens").asLong()).isEqualTo(3);
    }

    @Test
    void stream_costsItsUsageChunk_andTheLogHasTtft() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}," + HI + "}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(header(r, "x-gateway-cost-usd")).as("a stream's head goes before its cost is known").isNull();
        JsonNode usage = null;
        for (String event : r.body().split("\n\n")) {
            if (event.startsWith("data: {") && event.contains("\"usage\":{")) {
                usage = JSON.readTree(event.substring(6)).get("usage");
            }
        }
        assertThat(usage).isNotNull();
        double expected = cost(2, 10, PER_REQUEST, usage.get("prompt_tokens").asLong(),
                usage.get("completion_tokens").asLong());
        JsonNode line = accessLog(1).get(0);
        assertThat(line.get("stream").asBoolean()).isTrue();
        assertThat(line.get("cost_usd").asDouble()).isCloseTo(expected, within(1e-9));
        assertThat(line.get("ttft_ms").isNumber()).isTrue();

        // Anthropic style: input in message_start, output in the last message_delta.
        HttpResponse<String> m = gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":30,"
                + "\"stream\":true," + HI + "}");
        assertThat(m.statusCode()).isEqualTo(200);
        long input = -1;
        long output = -1;
        for (String event : m.body().split("\n\n")) {
            int data = event.indexOf("data: ");
            if (data < 0) {
                continue;
            }
            JsonNode e = JSON.readTree(event.substring(data + 6));
            if (e.path("type").asText().equals("message_start")) {
                input = e.get("message").get("usage").get("input_tokens").asLong();
            } else if (e.path("type").asText().equals("message_delta")) {
                output = e.get("usage").get("output_tokens").asLong();
            }
        }
        assertThat(input).isPositive();
        assertThat(output).isPositive();
        assertThat(accessLog(2).get(1).get("cost_usd").asDouble())
                .isCloseTo(cost(2, 10, PER_REQUEST, input, output), within(1e-9));
    }

    @Test
    void cancelledStream_costsWhatWasDelivered() throws Exception {
        String body = "{\"model\":\"sim-chat\",\"stream\":true," + HI + "}";
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
            while (seen.split("data: ", -1).length - 1 < 6) {
                int n = in.read(buf);
                assertThat(n).isPositive();
                seen += new String(buf, 0, n, StandardCharsets.UTF_8);
            }
        }
        ExchangeRecord rec = records.next();
        assertThat(rec.outcome()).isEqualTo(Outcome.CANCELLED);
        assertThat(rec.outputTokens()).isBetween(4L, 100L);
        double delivered = cost(2, 10, PER_REQUEST, rec.inputTokens(), rec.outputTokens());
        assertThat(rec.costUsd()).isCloseTo(delivered, within(1e-12))
                .isLessThan(cost(2, 10, PER_REQUEST, rec.inputTokens(), 400));
        assertThat(accessLog(1).get(0).get("cost_usd").asDouble()).isCloseTo(delivered, within(1e-9));
    }

    @Test
    void spendBudget_usedUp_429InBothStylesWithoutRetry_andTheAdminListenerReportsIt() throws Exception {
        // The first exchange is admitted (nothing spent yet) and costs more than the whole daily budget.
        HttpResponse<String> first = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HI + "}",
                "authorization", "Bearer " + FRUGAL_KEY);
        assertThat(first.statusCode()).isEqualTo(200);
        JsonNode u = JSON.readTree(first.body()).get("usage");
        double spent = cost(2, 10, PER_REQUEST, u.get("prompt_tokens").asLong(), u.get("completion_tokens").asLong());
        records.next();

        HttpResponse<String> refused = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HI + "}",
                "authorization", "Bearer " + FRUGAL_KEY);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(header(refused, "x-should-retry")).isEqualTo("false");
        JsonNode error = JSON.readTree(refused.body()).get("error");
        assertThat(error.get("code").asText()).isEqualTo("insufficient_quota");
        assertThat(error.get("message").asText()).contains("daily spend budget", "frugal").doesNotContain(FRUGAL_KEY);
        Instant midnight = Instant.now().atZone(ZoneOffset.UTC).toLocalDate().plusDays(1).atStartOfDay(ZoneOffset.UTC)
                .toInstant();
        long toMidnight = Duration.between(Instant.now(), midnight).toSeconds();
        assertThat(Long.parseLong(header(refused, "retry-after"))).isCloseTo(toMidnight, within(5L));
        assertThat(records.next().limit()).isEqualTo("daily_budget_usd");

        HttpRequest messages = gw.post("/api/v1/messages", "{\"model\":\"up-chat\",\"max_tokens\":5," + HI + "}")
                .header("x-api-key", FRUGAL_KEY).header("anthropic-version", "2023-06-01").build();
        HttpResponse<String> refusedMsg = gw.http.send(messages, HttpResponse.BodyHandlers.ofString());
        assertThat(refusedMsg.statusCode()).isEqualTo(429);
        assertThat(header(refusedMsg, "x-should-retry")).isEqualTo("false");
        JsonNode msgBody = JSON.readTree(refusedMsg.body());
        assertThat(msgBody.get("type").asText()).isEqualTo("error");
        assertThat(msgBody.get("error").get("type").asText()).isEqualTo("rate_limit_error");

        // The key with no budget still may spend.
        assertThat(gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\"," + HI + "}").statusCode())
                .isEqualTo(200);

        HttpResponse<String> report = adminGet("/admin/api/keys/frugal/spend");
        assertThat(report.statusCode()).isEqualTo(200);
        JsonNode daily = JSON.readTree(report.body()).get("daily");
        assertThat(daily.get("spent_usd").asDouble()).isCloseTo(spent, within(1e-6));
        assertThat(daily.get("budget_usd").asDouble()).isEqualTo(0.0001);
        assertThat(daily.get("remaining_usd").asDouble()).isZero();
        assertThat(Instant.parse(daily.get("resets_at").asText())).isEqualTo(midnight);
        JsonNode monthly = JSON.readTree(report.body()).get("monthly");
        assertThat(monthly.get("spent_usd").asDouble()).isCloseTo(spent, within(1e-6));
        assertThat(monthly.get("remaining_usd").asDouble()).isCloseTo(100 - spent, within(1e-6));
        assertThat(report.body()).doesNotContain(FRUGAL_KEY);
        assertThat(JSON.readTree(report.body()).get("source").asText()).as("this replica's counts").isEqualTo("local");
        assertThat(adminGet("/admin/api/keys/nobody/spend").statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(adminGet("/admin/api/keys/team-a/spend").body()).get("daily").get("budget_usd")
                .isNull()).isTrue();
    }

    @Test
    void reload_newPricesApplyToTheNextExchange() throws Exception {
        HttpResponse<String> before = gw.call("/api/v1/chat/completions", "{\"model\":\"up-chat\"," + HI + "}");
        JsonNode u = JSON.readTree(before.body()).get("usage");
        long in = u.get("prompt_tokens").asLong();
        long out = u.get("completion_tokens").asLong();
        assertThat(Double.parseDouble(header(before, "x-gateway-cost-usd")))
                .isCloseTo(cost(2, 10, 0, in, out), within(1e-9));
        gw.server().context().swap(ConfigLoader.parse(config(4, 30), "test.yaml",
                Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0"));
        HttpResponse<String> after = gw.call("/api/v1/chat/completions", "{\"model\":\"up-chat\"," + HI + "}");
        JsonNode v = JSON.readTree(after.body()).get("usage");
        assertThat(Double.parseDouble(header(after, "x-gateway-cost-usd"))).isCloseTo(
                cost(4, 30, 0, v.get("prompt_tokens").asLong(), v.get("completion_tokens").asLong()), within(1e-9));
    }

    private static final Pattern TIMING =
            Pattern.compile("gateway;dur=(\\d+\\.\\d{3})(, upstream;dur=(\\d+\\.\\d{3}))?");

    @Test
    void serverTiming_onEveryAnswer_gatewayAndUpstreamWithinWhatTheCallerWaited() throws Exception {
        long t0 = System.nanoTime();
        HttpResponse<String> ok = gw.call("/api/v1/chat/completions", "{\"model\":\"up-chat\"," + HI + "}",
                "x-sim-ttft-ms", "60");
        double waitedMs = (System.nanoTime() - t0) / 1e6;
        assertThat(ok.statusCode()).isEqualTo(200);
        Matcher m = TIMING.matcher(header(ok, "server-timing"));
        assertThat(m.matches()).isTrue();
        double gateway = Double.parseDouble(m.group(1));
        double upstream = Double.parseDouble(m.group(3));
        assertThat(gateway + upstream).isLessThanOrEqualTo(waitedMs);

        HttpResponse<String> stream = gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":5,"
                + "\"stream\":true," + HI + "}");
        assertThat(stream.statusCode()).isEqualTo(200);
        Matcher s = TIMING.matcher(header(stream, "server-timing"));
        assertThat(s.matches()).isTrue();
        assertThat(s.group(3)).as("the simulator's time to its head").isNotNull();

        // The gateway's own error: only its own time.
        HttpResponse<String> unauthorized = gw.http.send(gw.post("/api/v1/chat/completions", "{}").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(unauthorized.statusCode()).isEqualTo(401);
        Matcher e = TIMING.matcher(header(unauthorized, "server-timing"));
        assertThat(e.matches()).isTrue();
        assertThat(e.group(2)).isNull();
    }

    private HttpResponse<String> adminGet(String path) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.server().adminPort() + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return gw.http.send(r, HttpResponse.BodyHandlers.ofString());
    }

    /** The access log's first {@code n} lines, once written (the log's writer thread is asynchronous). */
    private List<JsonNode> accessLog(int n) throws Exception {
        Eventually.until(Duration.ofSeconds(10), () -> lines().size() >= n);
        List<JsonNode> out = new ArrayList<>();
        for (String line : lines()) {
            out.add(JSON.readTree(line));
        }
        return out;
    }

    private List<String> lines() {
        try {
            return Files.exists(log) ? Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList() : List.of();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
