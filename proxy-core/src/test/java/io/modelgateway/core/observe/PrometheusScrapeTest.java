package io.modelgateway.core.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.testing.TestGateway;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A real Prometheus (Debian's {@code prometheus}, installed by {@code scripts/test} when missing) scrapes the
 * gateway's admin listener: started on 127.0.0.1 with a minimal config (one job, a one-second scrape interval, no
 * remote write or read, no rules), its storage in a temporary directory with a one-hour retention, and stopped by
 * its pid. The test asks its HTTP API whether the target is up and whether the request counter holds the
 * requests made, with the labels the README promises.
 */
class PrometheusScrapeTest {
    private static final Path EXECUTABLE = Path.of("/usr/bin/prometheus");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    private TestGateway gateway;
    private Process prometheus;
    private Path dir;

    @AfterEach
    void stop() throws Exception {
        if (prometheus != null) {
            prometheus.destroy(); // SIGTERM to its pid: it flushes and exits
            if (!prometheus.waitFor(10, TimeUnit.SECONDS)) {
                prometheus.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        if (gateway != null) {
            gateway.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void prometheus_scrapesTheAdminListener_targetUpAndRequestCounterQueried() throws Exception {
        assertThat(EXECUTABLE).as("Debian's prometheus: scripts/test installs it (as root: apt-get update && "
                + "apt-get install -y --no-install-recommends prometheus)").isExecutable();
        gateway = TestGateway.start("admin: {listen: '127.0.0.1:0'}\n" + TestGateway.simulatorConfig());
        for (int i = 0; i < 5; i++) {
            assertThat(gateway.call("/api/v1/chat/completions",
                    "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").statusCode())
                    .isEqualTo(200);
        }
        assertThat(gateway.call("/api/v1/embeddings", "{\"model\":\"sim-embed\",\"input\":\"x\"}").statusCode())
                .isEqualTo(200);

        dir = Files.createTempDirectory("prometheus-");
        int port = freePort();
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                # Written by PrometheusScrapeTest: one target, nothing sent anywhere.
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1m
                scrape_configs:
                  - job_name: gateway
                    metrics_path: /metrics
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(gateway.server().adminPort()));
        Path log = dir.resolve("prometheus.log");
        prometheus = new ProcessBuilder(EXECUTABLE.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--storage.tsdb.retention.time=1h",
                "--web.listen-address=127.0.0.1:" + port, "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        String api = "http://127.0.0.1:" + port + "/api/v1/";

        JsonNode target = poll(api + "targets?state=active", log, r -> {
            JsonNode t = r.path("data").path("activeTargets").path(0);
            return t.path("health").asText().equals("up") ? t : null;
        });
        assertThat(target.path("scrapeUrl").asText())
                .isEqualTo("http://127.0.0.1:" + gateway.server().adminPort() + "/metrics");
        assertThat(target.path("lastError").asText()).isEmpty();

        String query = "gateway_requests_total{endpoint=\"chat_completions\",model=\"sim-chat\",key=\"test\","
                + "status=\"200\",outcome=\"done\"}";
        JsonNode series = poll(api + "query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8), log, r -> {
            JsonNode s = r.path("data").path("result").path(0);
            return s.isMissingNode() ? null : s;
        });
        assertThat(series.path("metric").path("job").asText()).isEqualTo("gateway");
        assertThat(series.path("value").path(1).asText()).isEqualTo("5");

        JsonNode embeddings = poll(api + "query?query=" + URLEncoder.encode(
                "sum by (model) (gateway_requests_total{endpoint=\"embeddings\"})", StandardCharsets.UTF_8), log,
                r -> r.path("data").path("result").path(0).isMissingNode() ? null : r.path("data").path("result"));
        assertThat(embeddings.toString()).contains("\"model\":\"sim-embed\"").contains("\"1\"");
    }

    /** GETs {@code url} until {@code check} returns non-null, at most {@link #WAIT}. */
    private JsonNode poll(String url, Path log, java.util.function.Function<JsonNode, JsonNode> check)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "(no answer)";
        while (System.nanoTime() < deadline) {
            assertThat(prometheus.isAlive()).as("prometheus is running; its log:%n%s", read(log)).isTrue();
            try {
                HttpResponse<String> r = gateway.http.send(HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                last = r.statusCode() + " " + r.body();
                if (r.statusCode() == 200) {
                    JsonNode found = check.apply(JSON.readTree(r.body()));
                    if (found != null) {
                        return found;
                    }
                }
            } catch (IOException e) {
                last = e.toString(); // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not within " + WAIT + ": " + url + " last answered " + last + "\nlog:\n" + read(log));
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
