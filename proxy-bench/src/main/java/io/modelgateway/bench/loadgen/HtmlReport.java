package io.modelgateway.bench.loadgen;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.core.observe.Dashboard;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * A load test as one HTML file that people look at: per workload, a table of the figures of every target (direct,
 * nginx, the gateway on each JDK, or the one run of {@code scripts/loadgen}) and the percentile curves of latency,
 * time to first token and inter-token gaps from their HdrHistograms, drawn side by side with uPlot — the dashboard's
 * chart library, taken from its WebJar and written into the file with its CSS, so the report opens offline and
 * can be mailed around.
 *
 * <p>The curves plot the value at each percentile on a logarithmic "1 / (1 − p)" axis (0%, 90%, 99%, 99.9%, …),
 * HdrHistogram's usual picture, where the tail is as wide as the middle. The tables hold the same numbers as the
 * JSON of the run (milliseconds with three decimals), so nothing depends on the script running.
 */
final class HtmlReport {
    /** One target's figures on one workload (histograms in microseconds). */
    record Run(String target, long requests, double requestsPerSecond, long errors, double eventsPerSecond,
            Histogram latency, Histogram ttft, Histogram itl) {
    }

    /** One workload: its name, what it does, and its runs in display order. */
    record Workload(String name, String description, List<Run> runs) {
    }

    /** 1 / (1 − p) from 1 (0%) to 10^5 (99.999%), eight steps per decade. */
    static final double[] LEVELS = new double[41];

    static {
        for (int k = 0; k < LEVELS.length; k++) {
            LEVELS[k] = Math.pow(10, k / 8.0);
        }
    }

    private static final JsonFactory JSON = new JsonFactory();
    private static final String CSS = """
            body { margin: 0; padding: 20px 28px 40px; background: #f6f7f9; color: #1d2330;
                   font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
            h1 { font-size: 20px; margin: 0 0 4px; }
            h2 { font-size: 17px; margin: 28px 0 2px; }
            .muted { color: #667085; }
            .notes { margin: 0 0 8px; padding-left: 18px; color: #667085; font-size: 13px; }
            table { border-collapse: collapse; background: #fff; border: 1px solid #e3e6eb; margin: 10px 0 14px;
                    font-variant-numeric: tabular-nums; }
            th, td { padding: 5px 10px; border-bottom: 1px solid #e3e6eb; text-align: right; white-space: nowrap; }
            th { font-size: 12px; color: #667085; background: #fafbfc; }
            th:first-child, td:first-child { text-align: left; }
            .charts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 12px; }
            figure { margin: 0; background: #fff; border: 1px solid #e3e6eb; border-radius: 8px; padding: 8px 10px 4px;
                     min-width: 0; }
            figcaption { font-size: 13px; font-weight: 600; }
            @media (max-width: 1100px) { .charts { grid-template-columns: minmax(0, 1fr); } }
            """;
    private static final String SCRIPT = """
            (function () {
              'use strict';
              const data = JSON.parse(document.getElementById('report-data').textContent);
              const COLORS = { direct: '#667085', nginx: '#1a7f37', 'gateway-jdk17': '#2f5bd3',
                'gateway-jdk25': '#7a2fd3' };
              const SPARE = ['#b54708', '#0e7c86', '#c0262d', '#444ce7'];
              function pct(x) {
                const p = 100 * (1 - 1 / x);
                return (p < 99 ? p.toFixed(0) : String(+p.toPrecision(6))) + '%';
              }
              for (const w of data.workloads) {
                for (const c of w.charts) {
                  const el = document.getElementById(c.id);
                  const series = [{ label: 'percentile', value: (u, v) => (v == null ? '' : pct(v)) }].concat(
                    c.series.map((s, i) => ({ label: s.target, stroke: COLORS[s.target] || SPARE[i % SPARE.length],
                      width: 2, value: (u, v) => (v == null ? '—' : v.toFixed(3) + ' ms') })));
                  new uPlot({
                    width: Math.max(320, el.clientWidth),
                    height: 300,
                    scales: { x: { time: false, distr: 3, log: 10 },
                              y: { auto: true, range: (u, min, max) => [0, max > 0 ? max * 1.05 : 1] } },
                    axes: [{ values: (u, vals) => vals.map((v) => (v == null ? '' : pct(v))) },
                           { size: 64, label: 'ms' }],
                    series: series,
                  }, [c.x].concat(c.series.map((s) => s.y)), el);
                }
              }
              document.body.dataset.charts = String(document.querySelectorAll('.uplot').length);
            })();
            """;

    private HtmlReport() {
    }

    /** Writes the report of {@code workloads} to {@code file}. */
    static void write(Path file, String title, List<String> notes, List<Workload> workloads) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, render(title, notes, workloads), StandardCharsets.UTF_8);
    }

    static String render(String title, List<String> notes, List<Workload> workloads) {
        String uplot = Dashboard.uplotDirectory();
        StringBuilder h = new StringBuilder(128 * 1024);
        h.append("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
                .append("<title>").append(escape(title)).append("</title>\n")
                .append("<style>\n").append(inline(Dashboard.resource(uplot + "uPlot.min.css"), "style"))
                .append('\n').append(CSS).append("</style>\n</head>\n<body>\n")
                .append("<h1>").append(escape(title)).append("</h1>\n<ul class=\"notes\">\n");
        for (String n : notes) {
            h.append("<li>").append(escape(n)).append("</li>\n");
        }
        h.append("<li>Curves: the value at each percentile (HdrHistogram, microsecond resolution, shown in ms); "
                + "the axis stretches the tail: 90%, 99%, 99.9% are equally far apart.</li>\n</ul>\n");
        int w = 0;
        for (Workload workload : workloads) {
            w++;
            table(h, workload, w);
        }
        h.append("<script type=\"application/json\" id=\"report-data\">")
                .append(data(workloads).replace("<", "\\u003c")).append("</script>\n")
                .append("<script>\n").append(inline(Dashboard.resource(uplot + "uPlot.iife.min.js"), "script"))
                .append("\n</script>\n<script>\n").append(SCRIPT).append("</script>\n</body>\n</html>\n");
        return h.toString();
    }

    /** A workload's heading, table and chart placeholders. */
    private static void table(StringBuilder h, Workload workload, int index) {
        boolean streams = workload.runs().stream().anyMatch(r -> r.ttft().getTotalCount() > 0);
        h.append("<section data-workload=\"").append(escape(workload.name())).append("\">\n<h2>")
                .append(escape(workload.name())).append("</h2>\n");
        if (!workload.description().isEmpty()) {
            h.append("<div class=\"muted\">").append(escape(workload.description())).append("</div>\n");
        }
        h.append("<table>\n<thead><tr><th>target</th><th>requests</th><th>req/s</th><th>errors</th>")
                .append("<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th>");
        if (streams) {
            h.append("<th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>inter-token p50 ms</th><th>inter-token p99 ms</th>")
                    .append("<th>events/s</th>");
        }
        h.append("</tr></thead>\n<tbody>\n");
        for (Run r : workload.runs()) {
            h.append("<tr data-target=\"").append(escape(r.target())).append("\"><td>").append(escape(r.target()))
                    .append("</td>");
            cell(h, "requests", Long.toString(r.requests()));
            cell(h, "rps", String.format(Locale.ROOT, "%.1f", r.requestsPerSecond()));
            cell(h, "errors", Long.toString(r.errors()));
            cell(h, "p50", ms(r.latency(), 50));
            cell(h, "p90", ms(r.latency(), 90));
            cell(h, "p99", ms(r.latency(), 99));
            cell(h, "p99_9", ms(r.latency(), 99.9));
            cell(h, "max", r.latency().getTotalCount() == 0 ? "–" : millis(r.latency().getMaxValue()));
            if (streams) {
                cell(h, "ttft_p50", ms(r.ttft(), 50));
                cell(h, "ttft_p99", ms(r.ttft(), 99));
                cell(h, "itl_p50", ms(r.itl(), 50));
                cell(h, "itl_p99", ms(r.itl(), 99));
                cell(h, "events_per_second", String.format(Locale.ROOT, "%.0f", r.eventsPerSecond()));
            }
            h.append("</tr>\n");
        }
        h.append("</tbody>\n</table>\n<div class=\"charts\">\n");
        chart(h, index, "latency", "Latency (whole exchange)");
        if (streams) {
            chart(h, index, "ttft", "Time to first token");
            chart(h, index, "itl", "Inter-token gaps");
        }
        h.append("</div>\n</section>\n");
    }

    private static void cell(StringBuilder h, String column, String value) {
        h.append("<td data-col=\"").append(column).append("\">").append(value).append("</td>");
    }

    private static void chart(StringBuilder h, int workload, String metric, String caption) {
        h.append("<figure><figcaption>").append(caption).append("</figcaption><div id=\"chart-").append(workload)
                .append('-').append(metric).append("\"></div></figure>\n");
    }

    /** The value at {@code percentile} in ms with three decimals (the JSON's microseconds / 1000); – when empty. */
    static String ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? "–" : millis(h.getValueAtPercentile(percentile));
    }

    static String millis(long micros) {
        return String.format(Locale.ROOT, "%.3f", micros / 1000.0);
    }

    /** The curves as JSON: per workload, per metric, the shared x levels and one y column per target. */
    private static String data(List<Workload> workloads) {
        StringWriter out = new StringWriter(16 * 1024);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("workloads");
            int w = 0;
            for (Workload workload : workloads) {
                w++;
                boolean streams = workload.runs().stream().anyMatch(r -> r.ttft().getTotalCount() > 0);
                g.writeStartObject();
                g.writeStringField("name", workload.name());
                g.writeArrayFieldStart("charts");
                curves(g, "chart-" + w + "-latency", workload, 0);
                if (streams) {
                    curves(g, "chart-" + w + "-ttft", workload, 1);
                    curves(g, "chart-" + w + "-itl", workload, 2);
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static void curves(JsonGenerator g, String id, Workload workload, int metric) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", id);
        g.writeArrayFieldStart("x");
        for (double x : LEVELS) {
            g.writeNumber(x);
        }
        g.writeEndArray();
        g.writeArrayFieldStart("series");
        for (Run r : workload.runs()) {
            Histogram h = metric == 0 ? r.latency() : metric == 1 ? r.ttft() : r.itl();
            g.writeStartObject();
            g.writeStringField("target", r.target());
            g.writeArrayFieldStart("y");
            for (double x : LEVELS) {
                if (h.getTotalCount() == 0) {
                    g.writeNull();
                } else {
                    g.writeNumber(h.getValueAtPercentile(100 * (1 - 1 / x)) / 1000.0);
                }
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    /** A library file inside an element of this kind; refused if it could end that element early. */
    private static String inline(byte[] content, String element) {
        String text = new String(content, StandardCharsets.UTF_8);
        if (text.toLowerCase(Locale.ROOT).contains("</" + element)) {
            throw new IllegalStateException("cannot inline a file that contains </" + element);
        }
        return text;
    }

    static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                default -> sb.append(c);
            }
        }
        return sb.toString();
    }
}
