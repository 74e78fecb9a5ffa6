package io.modelgateway.bench.loadgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-workload verdict of {@code scripts/soak}: what the callers saw (the load generators' JSON) and
 * what the gateway recorded (its access log and its {@code /metrics}), each against the outcome the
 * workload's faults demand. Every workload calls a model of its own, so the gateway's records are told
 * apart by model; only the exchanges of the key named {@value #KEY} count (the soak's prewarm uses
 * another).
 *
 * <p>Reads, from one directory: {@code workloads.tsv} (per line: name, model, expected caller outcome,
 * expected status, expected access-log outcome, description), {@code NAME.json} per workload,
 * {@code access.log} and {@code metrics.txt}. Prints the tables (also written to {@code workloads.md}) and
 * exits 1 when a workload failed.
 *
 * <p>The expected caller outcome is {@code ok} (every answer whole: a 2xx, and a stream ended by its
 * terminator) or one of the load generator's error kinds ({@code stream_error}, {@code timeout},
 * {@code status_504} …), which then must be the only thing the callers saw. Rules:
 * <ul>
 *   <li>callers: only the expected status on answer heads, only the expected outcome, and some of it;</li>
 *   <li>access log: one line per answered request, and at most one more per connection: the exchange it had
 *       open when the load generator stopped, which is closed (so the gateway may log it {@code cancelled})
 *       or ended before the count was taken (counted neither answered nor in flight); every other line has
 *       the expected status and outcome — a 5xx there is one the faults did not ask for (where callers
 *       give up on purpose, a cancellation logged before the answer's head, with no status, counts as
 *       expected too);</li>
 *   <li>metrics: {@code gateway_requests_total} of the model equals the access log's line count.</li>
 * </ul>
 */
public final class SoakReport {
    /** The gateway key name of the measured load. */
    static final String KEY = "soak";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern REQUESTS_TOTAL =
            Pattern.compile("^gateway_requests_total\\{([^}]*)}\\s+([0-9.eE+]+)\\s*$");
    private static final Pattern MODEL_LABEL = Pattern.compile("(?:^|,)model=\"([^\"]*)\"");
    private static final Pattern KEY_LABEL = Pattern.compile("(?:^|,)key=\"([^\"]*)\"");

    private SoakReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: SoakReport RESULTS_DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        Report report = judge(dir);
        System.out.print(report.text());
        Files.writeString(dir.resolve("workloads.md"), report.text(), StandardCharsets.UTF_8);
        System.exit(report.failed() ? 1 : 0);
    }

    /** One line of {@code workloads.tsv}. */
    record Workload(String name, String model, String expect, int status, String outcome, String description) {
    }

    /** What the access log holds for one model: lines by {@code "status outcome"}. */
    record GatewayView(long lines, Map<String, Long> byStatusOutcome) {
        static GatewayView empty() {
            return new GatewayView(0, new TreeMap<>());
        }
    }

    record Report(String text, boolean failed) {
    }

    static Report judge(Path dir) throws IOException {
        List<Workload> workloads = workloads(dir.resolve("workloads.tsv"));
        Map<String, GatewayView> log = accessLog(dir.resolve("access.log"));
        Map<String, Long> metrics = requestsByModel(dir.resolve("metrics.txt"));

        StringBuilder table = new StringBuilder();
        table.append("| workload | load | expected: caller / gateway | callers saw: heads by status | callers saw: "
                + "outcomes | unanswered at stop | access log: status outcome × lines | metrics | verdict |\n");
        table.append("|---|---|---|---|---|---:|---|---:|---|\n");
        List<String> failures = new ArrayList<>();
        for (Workload w : workloads) {
            Path file = dir.resolve(w.name() + ".json");
            JsonNode result = Files.exists(file) ? JSON.readTree(file.toFile()) : null;
            GatewayView view = log.getOrDefault(w.model(), GatewayView.empty());
            Long counted = metrics.get(w.model());
            List<String> problems = result == null
                    ? List.of("no result from its load generator (" + file.getFileName() + ")")
                    : problems(w, result, view, counted);
            for (String p : problems) {
                failures.add(w.name() + ": " + p);
            }
            table.append(String.format(Locale.ROOT, "| %s | %s | %s @ %d / %s | %s | %s | %s | %s | %s | %s |%n",
                    w.name(), result == null ? "?" : load(result), w.expect(), w.status(), w.outcome(),
                    result == null ? "?" : counts(result.path("statuses"), ""),
                    result == null ? "?" : callerOutcomes(result),
                    result == null ? "?" : Long.toString(result.path("in_flight_at_end").asLong()),
                    gatewayCounts(view), counted == null ? "–" : counted.toString(),
                    problems.isEmpty() ? "pass" : "**FAIL**"));
        }
        StringBuilder out = new StringBuilder();
        out.append("| workload | model | what |\n|---|---|---|\n");
        for (Workload w : workloads) {
            out.append("| ").append(w.name()).append(" | ").append(w.model()).append(" | ")
                    .append(w.description()).append(" |\n");
        }
        out.append('\n').append(table);
        if (!failures.isEmpty()) {
            out.append("\nWorkload failures:\n");
            for (String f : failures) {
                out.append("- ").append(f).append('\n');
            }
        }
        return new Report(out.toString(), !failures.isEmpty());
    }

    /** Why one workload failed; empty when it passed. */
    static List<String> problems(Workload w, JsonNode result, GatewayView view, Long metricsCount) {
        List<String> problems = new ArrayList<>();
        // Callers: answer heads.
        for (Iterator<Map.Entry<String, JsonNode>> it = result.path("statuses").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int status = Integer.parseInt(e.getKey());
            if (status != w.status()) {
                problems.add(String.format(Locale.ROOT, "callers got %d answers with status %d%s", e.getValue().asLong(),
                        status, status >= 500 ? " (a 5xx the faults did not ask for)" : ""));
            }
        }
        // Callers: how the exchanges ended.
        long completed = result.path("requests").asLong();
        JsonNode errors = result.path("errors_by_kind");
        long errorTotal = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = errors.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            errorTotal += e.getValue().asLong();
            if (!e.getKey().equals(w.expect())) {
                problems.add("callers got " + e.getValue().asLong() + " × " + e.getKey());
            }
        }
        if (w.expect().equals("ok")) {
            if (completed == 0) {
                problems.add("no request was answered in full");
            }
        } else {
            if (errors.path(w.expect()).asLong() == 0) {
                problems.add("no " + w.expect() + " at all: the fault did not show");
            }
            if (completed > 0) {
                problems.add(completed + " answered in full where every answer should have been " + w.expect());
            }
        }
        // The gateway's own record of the same exchanges.
        long answered = completed + errorTotal;
        long connections = result.path("connections").asLong();
        if (view.lines() < answered) {
            problems.add(String.format(Locale.ROOT, "the access log has %d lines for %d answered requests",
                    view.lines(), answered));
        }
        if (view.lines() > answered + connections) {
            problems.add(String.format(Locale.ROOT, "the access log has %d lines for %d answered requests on %d "
                    + "connections", view.lines(), answered, connections));
        }
        String expected = w.status() + " " + w.outcome();
        boolean callersCancel = w.outcome().equals("cancelled");
        long droppedAtStop = 0;
        for (Map.Entry<String, Long> e : view.byStatusOutcome().entrySet()) {
            boolean cancelled = e.getKey().endsWith(" cancelled");
            // A caller that gives up before the answer's head leaves the gateway no status to log.
            if (e.getKey().equals(expected) || (callersCancel && cancelled)) {
                continue;
            }
            if (cancelled) {
                droppedAtStop += e.getValue();
                continue;
            }
            int status = Integer.parseInt(e.getKey().substring(0, e.getKey().indexOf(' ')));
            problems.add(String.format(Locale.ROOT, "the gateway logged %d × %s%s", e.getValue(), e.getKey(),
                    status >= 500 ? " (a 5xx the faults did not ask for)" : ""));
        }
        if (droppedAtStop > connections) {
            problems.add(String.format(Locale.ROOT, "the gateway logged %d cancelled exchanges; the load generator "
                    + "closed at most %d at its stop", droppedAtStop, connections));
        }
        if (metricsCount == null || metricsCount != view.lines()) {
            problems.add(String.format(Locale.ROOT, "gateway_requests_total says %s, the access log %d",
                    metricsCount == null ? "nothing" : metricsCount.toString(), view.lines()));
        }
        return problems;
    }

    static List<Workload> workloads(Path file) throws IOException {
        List<Workload> out = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f.length != 6) {
                throw new IOException(file + ": expected 6 tab-separated fields, got: " + line);
            }
            out.add(new Workload(f[0], f[1], f[2], Integer.parseInt(f[3]), f[4], f[5]));
        }
        return out;
    }

    /** The access log's lines of the soak's key by model, then by status and outcome. */
    static Map<String, GatewayView> accessLog(Path file) throws IOException {
        Map<String, long[]> lines = new TreeMap<>();
        Map<String, Map<String, Long>> counts = new TreeMap<>();
        if (Files.exists(file)) {
            try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.isBlank()) {
                        continue;
                    }
                    JsonNode e = JSON.readTree(line);
                    if (!e.path("key").asText().equals(KEY)) {
                        continue;
                    }
                    String model = e.path("model").asText("");
                    lines.computeIfAbsent(model, m -> new long[1])[0]++;
                    counts.computeIfAbsent(model, m -> new TreeMap<>())
                            .merge(e.path("status").asInt() + " " + e.path("outcome").asText("?"), 1L, Long::sum);
                }
            }
        }
        Map<String, GatewayView> out = new TreeMap<>();
        lines.forEach((model, n) -> out.put(model, new GatewayView(n[0], counts.get(model))));
        return out;
    }

    /** {@code gateway_requests_total} of the soak's key summed by model, from Prometheus text. */
    static Map<String, Long> requestsByModel(Path file) throws IOException {
        Map<String, Long> out = new TreeMap<>();
        if (!Files.exists(file)) {
            return out;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            Matcher m = REQUESTS_TOTAL.matcher(line);
            if (!m.matches()) {
                continue;
            }
            Matcher model = MODEL_LABEL.matcher(m.group(1));
            Matcher key = KEY_LABEL.matcher(m.group(1));
            if (model.find() && key.find() && key.group(1).equals(KEY)) {
                out.merge(model.group(1), (long) Double.parseDouble(m.group(2)), Long::sum);
            }
        }
        return out;
    }

    private static String load(JsonNode r) {
        String loop = r.path("mode").asText().equals("open")
                ? String.format(Locale.ROOT, "%.0f req/s", r.path("rate").asDouble())
                : "closed loop";
        return String.format(Locale.ROOT, "%s, %d conn., %.0f s", loop, r.path("connections").asInt(),
                r.path("duration_s").asDouble());
    }

    private static String callerOutcomes(JsonNode r) {
        String errors = counts(r.path("errors_by_kind"), "");
        return "ok=" + r.path("requests").asLong() + (errors.equals("–") ? "" : " " + errors);
    }

    private static String counts(JsonNode object, String prefix) {
        StringBuilder sb = new StringBuilder();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            sb.append(sb.isEmpty() ? "" : " ").append(prefix).append(e.getKey()).append('=').append(e.getValue().asLong());
        }
        return sb.isEmpty() ? "–" : sb.toString();
    }

    private static String gatewayCounts(GatewayView view) {
        if (view.lines() == 0) {
            return "–";
        }
        StringBuilder sb = new StringBuilder();
        view.byStatusOutcome().forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(" × ").append(v));
        return sb.toString();
    }
}
