package io.modelgateway.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.observe.Dashboard;
import io.modelgateway.core.simulator.SimulatorServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTML reports of {@code scripts/loadgen --html} and {@code scripts/bench} ({@code report.html}): made from
 * small real runs against the simulator, they hold the runs' figures as the JSON has them, carry uPlot and its CSS
 * inside (no reference to any other file), and draw their charts in headless Chromium opened on the file alone.
 */
class HtmlReportTest {
    private static final String CHAT_STREAM =
            "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}";
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final ObjectMapper JSON = new ObjectMapper();

    private static SimulatorServer sim;

    @BeforeAll
    static void startSimulator() throws Exception {
        sim = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, null, req -> { });
    }

    @AfterAll
    static void stopSimulator() {
        sim.close();
    }

    /** A small paced stream run: 2 connections, 10 tokens at 400/s, about 0.7 s. */
    private static LoadResult streamRun(String label, int tps) throws InterruptedException {
        return LoadRun.execute(LoadOptions.parse(new String[] {"--url", "http://127.0.0.1:" + sim.port()
                + "/v1/chat/completions", "--body-json", CHAT_STREAM, "-c", "2", "--warmup", "0", "--duration", "0.7",
            "-H", "x-sim-output-tokens: 10", "-H", "x-sim-tps: " + tps, "-H", "x-sim-ttft-ms: 15", "--label", label,
            "--quiet"}), null);
    }

    @Test
    void loadgenHtml_holdsTheRunsFigures_inlinesTheChartLibrary_drawsOffline(@TempDir Path dir) throws Exception {
        LoadResult r = streamRun("stream test", 400);
        assertThat(r.streams).isPositive();
        r.writeJson(dir.resolve("run.json"));
        r.writeHtml(dir.resolve("run.html"));
        JsonNode json = JSON.readTree(dir.resolve("run.json").toFile());
        String html = Files.readString(dir.resolve("run.html"), StandardCharsets.UTF_8);

        assertThat(html).startsWith("<!doctype html>").contains("<h2>stream test</h2>");
        selfContained(html);
        String row = row(html, "127.0.0.1:" + sim.port());
        assertThat(cell(row, "requests")).isEqualTo(json.path("requests").asText());
        assertThat(cell(row, "errors")).isEqualTo("0");
        for (String[] c : new String[][] {{"p50", "latency_us", "p50"}, {"p90", "latency_us", "p90"},
            {"p99", "latency_us", "p99"}, {"p99_9", "latency_us", "p99_9"}, {"max", "latency_us", "max"},
            {"ttft_p50", "ttft_us", "p50"}, {"ttft_p99", "ttft_us", "p99"}, {"itl_p50", "itl_us", "p50"},
            {"itl_p99", "itl_us", "p99"}}) {
            assertThat(cell(row, c[0])).as(c[0]).isEqualTo(HtmlReport.millis(json.path(c[1]).path(c[2]).asLong()));
        }
        // The JSON carries the histograms whole: decoded, they give the same percentiles.
        Histogram latency = LoadResult.decode(json.path("hdr").path("latency_us").asText());
        assertThat(latency.getTotalCount()).isEqualTo(json.path("latency_us").path("count").asLong());
        assertThat(latency.getValueAtPercentile(99)).isEqualTo(json.path("latency_us").path("p99").asLong());

        assertThat(drawnCharts(dir.resolve("run.html"))).isEqualTo(3);
    }

    @Test
    void benchReport_putsTheTargetsSideBySide_roundsMerged(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("workloads.tsv"), "stream\tstreaming chat, 10 events per answer\n");
        List<LoadResult> direct = new ArrayList<>();
        for (int round = 1; round <= 2; round++) {
            LoadResult r = streamRun("stream direct r" + round, 400);
            r.writeJson(dir.resolve("stream.direct.r" + round + ".json"));
            direct.add(r);
        }
        LoadResult slower = streamRun("stream gateway-jdk17 r1", 200);
        slower.writeJson(dir.resolve("stream.gateway-jdk17.r1.json"));

        BenchReport.main(new String[] {dir.toString()});

        Path report = dir.resolve("report.html");
        String html = Files.readString(report, StandardCharsets.UTF_8);
        selfContained(html);
        assertThat(html).contains("<h2>stream</h2>", "streaming chat, 10 events per answer");
        assertThat(html.indexOf("data-target=\"direct\"")).isLessThan(html.indexOf("data-target=\"gateway-jdk17\""));
        Histogram merged = new Histogram(3);
        direct.forEach(r -> merged.add(r.latency));
        String directRow = row(html, "direct");
        assertThat(cell(directRow, "requests")).isEqualTo(Long.toString(direct.get(0).completed
                + direct.get(1).completed));
        assertThat(cell(directRow, "p50")).isEqualTo(HtmlReport.ms(merged, 50));
        assertThat(cell(directRow, "p99")).isEqualTo(HtmlReport.ms(merged, 99));
        String gatewayRow = row(html, "gateway-jdk17");
        assertThat(cell(gatewayRow, "requests")).isEqualTo(Long.toString(slower.completed));
        assertThat(cell(gatewayRow, "itl_p50")).isEqualTo(HtmlReport.ms(slower.itl, 50));

        assertThat(drawnCharts(report)).isEqualTo(3);
        String screenshot = System.getProperty("report.screenshot");
        if (screenshot != null && !screenshot.isBlank()) {
            chromium(List.of("--window-size=1400,1200", "--screenshot=" + Path.of(screenshot).toAbsolutePath(),
                    report.toUri().toString()), dir);
        }
    }

    /** No element loads anything: the library and its CSS are inside, verbatim. */
    private static void selfContained(String html) {
        assertThat(html).doesNotContain(" src=").doesNotContain(" href=").doesNotContain("<link");
        String uplot = Dashboard.uplotDirectory();
        assertThat(html).contains(new String(Dashboard.resource(uplot + "uPlot.iife.min.js"), StandardCharsets.UTF_8));
        assertThat(html).contains(new String(Dashboard.resource(uplot + "uPlot.min.css"), StandardCharsets.UTF_8));
    }

    private static String row(String html, String target) {
        Matcher m = Pattern.compile("<tr data-target=\"" + Pattern.quote(target) + "\">(.*?)</tr>").matcher(html);
        assertThat(m.find()).as("a row for %s", target).isTrue();
        return m.group(1);
    }

    private static String cell(String row, String column) {
        Matcher m = Pattern.compile("<td data-col=\"" + column + "\">([^<]*)</td>").matcher(row);
        assertThat(m.find()).as("column %s in %s", column, row).isTrue();
        return m.group(1);
    }

    /** Opens the file in headless Chromium (no network needed) and counts the uPlot charts its script drew. */
    private static int drawnCharts(Path file) throws Exception {
        String dom = chromium(List.of("--virtual-time-budget=5000", "--dump-dom", file.toUri().toString()),
                file.getParent());
        Matcher m = Pattern.compile("<body[^>]*data-charts=\"(\\d+)\"").matcher(dom);
        assertThat(m.find()).as("the report's script ran to its end:%n%s", dom.length() > 2000
                ? dom.substring(0, 2000) : dom).isTrue();
        int charts = Integer.parseInt(m.group(1));
        assertThat(Pattern.compile("class=\"uplot").matcher(dom).results().count()).isEqualTo(charts);
        return charts;
    }

    /** Runs headless Chromium with the flags that keep it on this machine; its stdout; bounded to a minute. */
    private static String chromium(List<String> args, Path work) throws Exception {
        assertThat(CHROMIUM).as("Debian's chromium: scripts/test installs it (as root: apt-get update && "
                + "apt-get install -y chromium)").isExecutable();
        Path profile = Files.createTempDirectory(work, "chromium-profile-");
        List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--user-data-dir=" + profile));
        command.addAll(args);
        Path out = work.resolve("chromium.out");
        Path err = work.resolve("chromium.err");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            throw new AssertionError("chromium did not finish within a minute:\n" + Files.readString(err));
        }
        assertThat(p.exitValue()).as("chromium's exit status; its stderr:%n%s", Files.readString(err)).isZero();
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}
