package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.testing.HeadlessChromium;
import io.modelgateway.core.testing.MetricsText;
import io.modelgateway.core.testing.TestGateway;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard in a real browser: a gateway with an admin listener and an admin key, a small bounded load (62
 * requests on four models and two keys: streams, messages, embeddings, a model whose second deployment always
 * answers 503, upstream 500s, unknown models, a forbidden model), then headless Chromium opens the page with the
 * key and the test reads what a person would see — tiles, tables, deployments, failures, config — and checks the
 * numbers against {@code /metrics}. At the end the gateway stops under the open page, whose stream must end with
 * the shutdown event. A screenshot goes to {@code target/dashboard.png} ({@code -Ddashboard.screenshot=PATH} also
 * writes it there: the README's picture is made that way).
 */
class DashboardBrowserTest {
    private static final String ADMIN_KEY = "adm-test-7c1e9a0b5d";
    private static final String KEY_A = "sk-team-a-0f3b2d";
    private static final String KEY_B = "sk-team-b-9e8d7c";
    private static final Duration PAGE = Duration.ofSeconds(20);

    private static TestGateway gateway;
    private static String admin;
    private static HeadlessChromium browser;

    @BeforeAll
    static void startGatewayAndLoadIt() throws Exception {
        HeadlessChromium.requireInstalled();
        gateway = TestGateway.start("""
                admin:
                  listen: 127.0.0.1:0
                  key: sha256:%s
                keys:
                  - {name: team-a, key: "sha256:%s", models: ["*"]}
                  - {name: team-b, key: "sha256:%s", models: [sim-embed, flaky]}
                providers:
                  sim:
                    type: simulator
                    forward_headers: ["x-sim-*"]
                    simulator: {ttft_ms: 15, tokens_per_second: 2000, output_tokens: 16}
                  sim-bad:
                    type: simulator
                    simulator: {fault: "status=503"}
                    cooldown: {failures: 1, seconds: 120}
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1}]
                  sim-embed:
                    type: embedding
                    deployments: [{provider: sim, model: sim-embed-1}]
                  flaky:
                    deployments: [{provider: sim, model: flaky-good}, {provider: sim-bad, model: flaky-bad, weight: 100}]
                  sim-fail:
                    retries: {max: 0}
                    deployments: [{provider: sim, model: sim-fail-1}]
                """.formatted(TestGateway.sha256Hex(ADMIN_KEY), TestGateway.sha256Hex(KEY_A),
                TestGateway.sha256Hex(KEY_B)));
        admin = "http://127.0.0.1:" + gateway.server().adminPort();
        load();
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.close();
        }
        if (gateway != null) {
            gateway.close();
        }
    }

    /** The bounded load: 62 requests, four at a time. */
    private static void load() throws Exception {
        String chatStream = "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        String messages = "{\"model\":\"sim-chat\",\"max_tokens\":32,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        String embed = "{\"model\":\"sim-embed\",\"input\":[\"one\",\"two\"]}";
        String flaky = "{\"model\":\"flaky\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        String fail = "{\"model\":\"sim-fail\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        String unknown = "{\"model\":\"nope\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            requests.add(chat(chatStream, KEY_A));
        }
        for (int i = 0; i < 8; i++) {
            requests.add(gateway.post("/api/v1/messages", messages).header("x-api-key", KEY_A)
                    .header("anthropic-version", "2023-06-01").build());
        }
        for (int i = 0; i < 12; i++) {
            requests.add(gateway.post("/api/v1/embeddings", embed).header("authorization", "Bearer " + KEY_B).build());
        }
        for (int i = 0; i < 10; i++) {
            requests.add(chat(flaky, KEY_B));
        }
        for (int i = 0; i < 3; i++) {
            requests.add(gateway.post("/api/v1/chat/completions", fail).header("authorization", "Bearer " + KEY_A)
                    .header("x-sim-fault", "status=500").build());
        }
        for (int i = 0; i < 3; i++) {
            requests.add(chat(unknown, KEY_A));
        }
        for (int i = 0; i < 2; i++) {
            requests.add(chat(chatStream, KEY_B)); // team-b may not use sim-chat: 403
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> answers = new ArrayList<>();
            for (HttpRequest r : requests) {
                answers.add(pool.submit(() -> gateway.http.send(r, HttpResponse.BodyHandlers.ofString()).statusCode()));
            }
            for (Future<Integer> f : answers) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static HttpRequest chat(String body, String key) {
        return gateway.post("/api/v1/chat/completions", body).header("authorization", "Bearer " + key).build();
    }

    private static HttpResponse<String> adminGet(String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(admin + path)).timeout(Duration.ofSeconds(10));
        if (authorization != null) {
            b.header("authorization", authorization);
        }
        return gateway.http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static String basic(String key) {
        return "Basic " + Base64.getEncoder().encodeToString(("admin:" + key).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void page_showsWhatMetricsSay_thenEndsWhenTheGatewayStops() throws Exception {
        // Without the key, or with a gateway key, the page and its stream stay shut.
        for (String auth : new String[] {null, basic(KEY_A), "Bearer " + KEY_A}) {
            HttpResponse<String> r = adminGet("/", auth);
            assertThat(r.statusCode()).as("GET / with %s", auth).isEqualTo(401);
            assertThat(r.headers().firstValue("www-authenticate")).hasValueSatisfying(v -> v.startsWith("Basic "));
            assertThat(adminGet("/dashboard/events", auth).statusCode()).isEqualTo(401);
        }

        browser = HeadlessChromium.launch(1440, 1000);
        browser.extraHeaders(Map.of("Authorization", basic(ADMIN_KEY)));
        browser.navigate(admin + "/");
        browser.waitFor("document.body.dataset.state === 'live' && Number(document.body.dataset.events) >= 1",
                PAGE, "the page goes live");

        MetricsText metrics = MetricsText.parse(adminGet("/metrics", null).body());
        List<String> models = List.of("sim-chat", "sim-embed", "flaky", "sim-fail");
        // The page ticks once a second: wait until it has counted everything the load did.
        double expectedTotal = 0;
        for (String m : models) {
            expectedTotal += metrics.sum("gateway_requests_total", "model", m);
        }
        browser.waitFor(sumOfColumn("model", "requests") + " === " + (long) expectedTotal, PAGE,
                "the model table counts all " + expectedTotal + " requests");

        JsonNode page = browser.evaluate(READ_PAGE);
        for (String m : models) {
            JsonNode row = page.path("model").path("model:" + m);
            assertThat(row.isMissingNode()).as("a row for model %s in %s", m, page.path("model")).isFalse();
            assertThat(integer(row, "requests")).as("%s requests", m)
                    .isEqualTo((long) metrics.sum("gateway_requests_total", "model", m));
            assertThat(integer(row, "errors")).as("%s errors", m).isEqualTo(errors(metrics, "model", m));
            assertThat(integer(row, "tokens")).as("%s tokens", m)
                    .isEqualTo((long) metrics.sum("gateway_tokens_total", "model", m));
        }
        assertThat(integer(page.path("model").path("model:sim-fail"), "errors")).isEqualTo(3);
        for (String k : List.of("team-a", "team-b")) {
            JsonNode row = page.path("key").path("key:" + k);
            assertThat(integer(row, "requests")).as("%s requests", k)
                    .isEqualTo((long) metrics.sum("gateway_requests_total", "key", k));
            assertThat(integer(row, "tokens")).as("%s tokens", k)
                    .isEqualTo((long) metrics.sum("gateway_tokens_total", "key", k));
        }
        // Every request that reached a deployment ended on provider sim (sim-bad's 503s were retried on sim).
        assertThat(integer(page.path("provider").path("provider:sim"), "requests")).isEqualTo(57);
        assertThat(page.path("provider").has("provider:sim-bad")).isFalse();

        // Tiles: in flight as /metrics says, the error rate of the minute, the median inside /metrics' bucket.
        JsonNode tiles = page.path("tiles");
        assertThat(tiles.path("in_flight").asText()).isEqualTo(
                String.valueOf((long) metrics.sum("gateway_inflight_exchanges")));
        double all = metrics.sum("gateway_requests_total");
        assertThat(percent(tiles.path("error_rate").asText()))
                .isCloseTo(100.0 * errors(metrics, null, null) / all, within(0.01));
        double[] median = medianBucket(metrics);
        assertThat(millis(tiles.path("lat_p50").asText()))
                .as("the page's p50 against /metrics' bucket %s..%s s", median[0], median[1])
                .isBetween(median[0] * 1000 / 1.1, median[1] * 1000 * 1.1);
        assertThat(millis(tiles.path("ttft_p50").asText())).isGreaterThan(0);
        assertThat(tiles.path("cost_per_s").asText()).as("no prices configured").isEqualTo("—");

        // Deployments: the one that always answers 503 rests; its failures are the retried ones /metrics counted.
        JsonNode bad = page.path("deployments").path("sim-bad/flaky-bad");
        assertThat(bad.path("rotation").asText()).isEqualTo("cooling down");
        assertThat(integer(bad, "failures_window")).isEqualTo(
                (long) metrics.sum("gateway_upstream_retried_failures_total", "provider", "sim-bad"));
        assertThat(page.path("deployments").path("sim/flaky-good").path("rotation").asText()).isEqualTo("in rotation");
        assertThat(page.path("failures").toString()).contains("sim-bad", "503", "no (retried)");

        // The config: names only.
        assertThat(page.path("config").toString()).contains("sim-chat", "sim-embed", "flaky", "sim-fail", "team-a",
                "team-b", "sim-bad (simulator) → flaky-bad");
        String html = browser.evaluate("document.documentElement.outerHTML").asText();
        for (String secret : List.of(ADMIN_KEY, KEY_A, KEY_B, TestGateway.sha256Hex(ADMIN_KEY),
                TestGateway.sha256Hex(KEY_A), TestGateway.sha256Hex(KEY_B))) {
            assertThat(html).doesNotContain(secret);
        }

        // The four charts are drawn by uPlot, with points.
        assertThat(browser.evaluate("document.querySelectorAll('.uplot canvas').length").asInt()).isEqualTo(4);
        assertThat(browser.evaluate("document.querySelectorAll('.uplot').length").asInt()).isEqualTo(4);

        screenshot();

        // Another series: the stream reconnects for it and the charts follow.
        browser.evaluate("document.querySelector('tr[data-series=\"model:sim-embed\"]').click(); true");
        browser.waitFor("document.body.dataset.series === 'model:sim-embed' && document.body.dataset.state === 'live'",
                PAGE, "the charts switch to model:sim-embed");
        assertThat(browser.evaluate("location.hash").asText()).isEqualTo("#series=model%3Asim-embed");

        assertThat(browser.problems()).as("exceptions and errors in the page").isEmpty();

        // The gateway stops under the open page: its stream ends with the shutdown event.
        gateway.close();
        browser.waitFor("document.body.dataset.state === 'stopped'", PAGE, "the page sees the gateway stop");
        gateway = null;
    }

    /** Reads the page as shown: tiles, table cells by series and column, deployments, failures, config. */
    private static final String READ_PAGE = """
            (() => {
              const text = (e) => e.textContent.trim();
              const out = {tiles: {}, model: {}, key: {}, provider: {}, deployments: {}, failures: [], config: []};
              for (const t of document.querySelectorAll('.tile')) out.tiles[t.dataset.tile] = text(t.querySelector('.value'));
              for (const d of ['model', 'key', 'provider']) {
                for (const tr of document.querySelectorAll('#table-' + d + ' tbody tr[data-series]')) {
                  const row = {};
                  for (const td of tr.querySelectorAll('td[data-col]')) row[td.dataset.col] = text(td);
                  out[d][tr.dataset.series] = row;
                }
              }
              for (const tr of document.querySelectorAll('#deployments tbody tr')) {
                const row = {};
                for (const td of tr.querySelectorAll('td[data-col]')) row[td.dataset.col] = text(td);
                out.deployments[tr.dataset.deployment] = row;
              }
              for (const tr of document.querySelectorAll('#failures tbody tr')) out.failures.push(text(tr));
              for (const tr of document.querySelectorAll('#config-models tbody tr, #config-keys tbody tr')) out.config.push(text(tr));
              return out;
            })()""";

    private static String sumOfColumn(String dimension, String column) {
        return "Array.from(document.querySelectorAll('#table-" + dimension + " tbody td[data-col=\"" + column
                + "\"]')).reduce((s, td) => s + Number(td.textContent.replace(/,/g, '')), 0)";
    }

    private static long integer(JsonNode row, String column) {
        String text = row.path(column).asText();
        assertThat(text).as("column %s of %s", column, row).matches("[0-9,]+");
        return Long.parseLong(text.replace(",", ""));
    }

    /** Requests that ended on an upstream failure or with a 5xx (the page's errors). */
    private static long errors(MetricsText metrics, String label, String value) {
        double n = 0;
        for (MetricsText.Sample s : label == null ? metrics.samples("gateway_requests_total")
                : metrics.samples("gateway_requests_total", label, value)) {
            if (s.labels().get("outcome").equals("upstream_error") || s.labels().get("status").startsWith("5")) {
                n += s.value();
            }
        }
        return (long) n;
    }

    private static double percent(String text) {
        assertThat(text).endsWith("%");
        return Double.parseDouble(text.substring(0, text.length() - 1));
    }

    private static double millis(String text) {
        if (text.endsWith(" ms")) {
            return Double.parseDouble(text.substring(0, text.length() - 3));
        }
        assertThat(text).endsWith(" s");
        return Double.parseDouble(text.substring(0, text.length() - 2)) * 1000;
    }

    /** The bounds, in seconds, of the /metrics duration bucket that holds the median of every exchange. */
    private static double[] medianBucket(MetricsText metrics) {
        java.util.TreeMap<Double, Double> cumulative = new java.util.TreeMap<>();
        for (MetricsText.Sample s : metrics.samples("gateway_request_duration_seconds_bucket")) {
            String le = s.labels().get("le");
            double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
            cumulative.merge(bound, s.value(), Double::sum);
        }
        double total = cumulative.get(Double.POSITIVE_INFINITY);
        double rank = Math.ceil(total / 2);
        double lower = 0;
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            if (e.getValue() >= rank) {
                return new double[] {lower, e.getKey()};
            }
            lower = e.getKey();
        }
        throw new AssertionError("no median bucket in " + cumulative);
    }

    private static void screenshot() throws Exception {
        byte[] png = browser.screenshot();
        assertThat(png).hasSizeGreaterThan(10_000);
        Path target = Path.of(System.getProperty("basedir", "."), "target", "dashboard.png");
        Files.createDirectories(target.getParent());
        Files.write(target, png);
        String extra = System.getProperty("dashboard.screenshot");
        if (extra != null && !extra.isBlank()) {
            Files.write(Path.of(extra), png);
        }
    }
}
