package io.modelgateway.bench.loadgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The side-by-side tables of {@code scripts/bench}: reads the load generator's JSON results of one bench
 * run ({@code WORKLOAD.TARGET.rROUND.json} in one directory, plus {@code workloads.tsv}: name, description, the
 * gap in ms between a paced workload's events, the connections and the upstream's ticks per paced stream per line,
 * in order; older runs wrote fewer), averages each target over the rounds, and prints one table per workload with
 * the gateway/nginx ratios. Writes the same as {@code summary.md} and {@code summary.json}, and {@code report.html}:
 * the figures and the percentile curves of every target side by side ({@link HtmlReport}), from the histograms of
 * all rounds merged.
 *
 * <p>Targets are {@code direct} (the upstream itself), {@code nginx}, and {@code gateway-jdkNN}. "Added
 * p50" is a proxy's p50 minus the direct p50 of the same workload: what the hop costs a caller.
 */
public final class BenchReport {
    private static final Pattern RESULT = Pattern.compile("(.+)\\.([a-z0-9-]+)\\.r(\\d+)\\.json");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The round a result file holds (from its name), added to its JSON as read. */
    private static final String ROUND = "bench_round";

    private BenchReport() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 11 && args[0].equals("--streams10k")) {
            System.out.print(streamsRow(Path.of(args[1]), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]), Integer.parseInt(args[6]), args[7], args[8], args[9], args[10]));
            return;
        }
        if (args.length != 1) {
            System.err.println("usage: BenchReport RESULTS_DIR | --streams10k RESULT.json JDK STREAMS TOKENS_PER_SECOND"
                    + " TOKENS_PER_ANSWER EVENTS_PER_ANSWER OPEN RSS_MIB USED_MIB COMMITTED_MIB");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        String report = render(dir);
        System.out.print(report);
        Files.writeString(dir.resolve("summary.md"), report, StandardCharsets.UTF_8);
        JSON.writerWithDefaultPrettyPrinter().writeValue(dir.resolve("summary.json").toFile(), summaryJson(dir));
        writeHtml(dir);
        System.out.println("report: " + dir.resolve("report.html"));
    }

    /**
     * {@code report.html} of a bench directory: per workload, per target, the rounds' histograms merged (so the
     * percentiles are those of every measured request), requests summed, rates averaged.
     */
    static void writeHtml(Path dir) throws IOException {
        Map<String, Workload> workloads = workloads(dir);
        List<HtmlReport.Workload> out = new ArrayList<>();
        for (Map.Entry<String, Map<String, List<JsonNode>>> w : raw(dir, workloads).entrySet()) {
            List<HtmlReport.Run> runs = new ArrayList<>();
            for (Map.Entry<String, List<JsonNode>> t : w.getValue().entrySet()) {
                runs.add(merged(t.getKey(), t.getValue()));
            }
            if (!runs.isEmpty()) {
                out.add(new HtmlReport.Workload(w.getKey(), workloads.getOrDefault(w.getKey(), Workload.UNKNOWN)
                        .description(), runs));
            }
        }
        List<String> notes = new ArrayList<>();
        Path env = dir.resolve("env.txt");
        if (Files.exists(env)) {
            notes.addAll(Files.readAllLines(env).stream().filter(l -> !l.isBlank()).toList());
        }
        notes.add("Percentiles of all measured rounds merged; req/s is the mean over the rounds (summary.md has"
                + " per-round means and min–max).");
        HtmlReport.write(dir.resolve("report.html"), "Bench: direct, nginx and the gateway", notes, out);
    }

    private static HtmlReport.Run merged(String target, List<JsonNode> rounds) {
        org.HdrHistogram.Histogram latency = new org.HdrHistogram.Histogram(3);
        org.HdrHistogram.Histogram ttft = new org.HdrHistogram.Histogram(3);
        org.HdrHistogram.Histogram itl = new org.HdrHistogram.Histogram(3);
        long requests = 0;
        long errors = 0;
        double rps = 0;
        double eps = 0;
        for (JsonNode r : rounds) {
            JsonNode hdr = r.path("hdr");
            if (hdr.has("latency_us")) {
                latency.add(LoadResult.decode(hdr.path("latency_us").asText()));
                ttft.add(LoadResult.decode(hdr.path("ttft_us").asText()));
                itl.add(LoadResult.decode(hdr.path("itl_us").asText()));
            }
            requests += r.path("requests").asLong();
            errors += r.path("errors").asLong() + r.path("warmup_errors").asLong();
            rps += r.path("requests_per_second").asDouble();
            eps += r.path("events_per_second").asDouble();
        }
        int n = Math.max(1, rounds.size());
        return new HtmlReport.Run(target, requests, rps / n, errors, eps / n, latency, ttft, itl);
    }

    /**
     * Mean over the rounds of one target on one workload; {@code askedRate} is the open loop's fixed rate in
     * requests per second, 0 for a closed loop.
     */
    record Row(String target, int rounds, double rps, double rpsMin, double rpsMax, double p50Ms, double p99Ms,
               double ttftP50Ms, double eventsPerSecond, double cpuUsPerRequest, long errors,
               double allocBytesPerRequest, double allocBytesPerEvent, double askedRate, Map<Integer, Round> byRound) {
    }

    /**
     * One measured round of one target: its CPU per request (-1 when not measured), its stream events per request
     * (0 on a non-stream workload) and its rate.
     */
    record Round(double cpuUsPerRequest, double eventsPerRequest, double rps) {
    }

    static String render(Path dir) throws IOException {
        StringBuilder out = new StringBuilder();
        Map<String, Workload> workloads = workloads(dir);
        Map<String, Map<String, Row>> all = load(dir, workloads);
        for (Map.Entry<String, Map<String, Row>> w : all.entrySet()) {
            Map<String, Row> rows = w.getValue();
            if (rows.isEmpty()) {
                continue;
            }
            int rounds = rows.values().iterator().next().rounds();
            boolean streams = rows.values().stream().anyMatch(r -> r.eventsPerSecond() > 0);
            // A paced workload's rate is the upstream's pace by design: only its CPU per event compares proxies.
            Workload workload = workloads.getOrDefault(w.getKey(), Workload.UNKNOWN);
            String description = workload.description();
            boolean paced = description.contains("paced");
            double askedStreams = workload.askedStreamsPerSecond();
            out.append(String.format(Locale.ROOT, "%n### %s — %s (%d round%s)%n%n", w.getKey(), description, rounds,
                    rounds == 1 ? "" : "s"));
            out.append(streams
                    ? "| target | req/s (min–max) | p50 ms | p99 ms | TTFT p50 ms | events/s | proxy CPU µs/req | "
                      + "proxy CPU µs/event | alloc B/event | errors |\n"
                      + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
                    : "| target | req/s (min–max) | p50 ms | p99 ms | proxy CPU µs/req | alloc B/req | errors |\n"
                      + "|---|---:|---:|---:|---:|---:|---:|\n");
            for (Row r : rows.values()) {
                out.append(String.format(Locale.ROOT, "| %s | %.0f (%.0f–%.0f) | %.3f | %.3f |", r.target(), r.rps(),
                        r.rpsMin(), r.rpsMax(), r.p50Ms(), r.p99Ms()));
                if (streams) {
                    // wrk's rows (--client wrk) read answers whole: no first token to time
                    out.append(r.ttftP50Ms() > 0 ? String.format(Locale.ROOT, " %.3f |", r.ttftP50Ms()) : " – |")
                            .append(String.format(Locale.ROOT, " %.0f |", r.eventsPerSecond()));
                }
                out.append(r.cpuUsPerRequest() < 0 ? " – |" : String.format(Locale.ROOT, " %.1f |",
                        r.cpuUsPerRequest()));
                if (streams) {
                    double perEvent = cpuPerEvent(r);
                    out.append(perEvent < 0 ? " – |" : String.format(Locale.ROOT, " %.2f |", perEvent));
                }
                double alloc = streams ? r.allocBytesPerEvent() : r.allocBytesPerRequest();
                out.append(alloc < 0 ? " – |" : String.format(Locale.ROOT, " %.0f |", alloc));
                out.append(' ').append(r.errors()).append(" |\n");
            }
            Row direct = rows.get("direct");
            Row nginx = rows.get("nginx");
            if (nginx != null && nginx.rps() > 0) {
                for (Row gw : rows.values()) {
                    // the gateway's rows, and scripts/bench --floor's (FloorProxy: the JVM's and Netty's own floor)
                    if (!(gw.target().startsWith("gateway") || gw.target().startsWith("floor-")) || gw.rps() == 0) {
                        continue;
                    }
                    out.append('\n').append(ratios(gw, nginx, direct, streams));
                    out.append(gw.askedRate() > 0 ? rateKept(gw) : ceiling(gw, nginx, direct, paced, askedStreams));
                }
            }
            Row shared = rows.get("gateway-redis");
            Row local = rows.values().stream().filter(r -> r.target().startsWith("gateway-jdk")).findFirst()
                    .orElse(null);
            if (shared != null && local != null) {
                out.append('\n').append(sharedLimitsCost(shared, local));
            }
        }
        return out.toString();
    }

    private static String ratios(Row gw, Row nginx, Row direct, boolean streams) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%s / nginx: req/s %.2f×", gw.target(),
                gw.rps() / nginx.rps()));
        if (gw.cpuUsPerRequest() > 0 && nginx.cpuUsPerRequest() > 0) {
            sb.append(String.format(Locale.ROOT, ", CPU/request %.2f×", gw.cpuUsPerRequest() / nginx.cpuUsPerRequest()));
            if (streams && cpuPerEvent(gw) > 0 && cpuPerEvent(nginx) > 0) {
                sb.append(String.format(Locale.ROOT, ", CPU/event %.2f×", cpuPerEvent(gw) / cpuPerEvent(nginx)));
            }
            sb.append(roundRatios(gw, nginx, streams));
        }
        if (streams && nginx.eventsPerSecond() > 0) {
            sb.append(String.format(Locale.ROOT, ", events/s %.2f×", gw.eventsPerSecond() / nginx.eventsPerSecond()));
        }
        if (direct != null) {
            double gwAdded = gw.p50Ms() - direct.p50Ms();
            double ngAdded = nginx.p50Ms() - direct.p50Ms();
            sb.append(String.format(Locale.ROOT, ", added p50 %.3f ms vs nginx %.3f ms", gwAdded, ngAdded));
            if (ngAdded > 0) {
                sb.append(String.format(Locale.ROOT, " (%.2f×)", gwAdded / ngAdded));
            }
        }
        return sb.append('\n').toString();
    }

    /**
     * The CPU ratio of each round on its own (per event on a stream workload), in round order: the bench alternates
     * the targets within a round, so these pair measurements made minutes apart at most, and how far they spread is
     * how far the run's ratio can be trusted. Empty with fewer than two rounds both targets measured.
     */
    static String roundRatios(Row gw, Row nginx, boolean streams) {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (Map.Entry<Integer, Round> e : gw.byRound().entrySet()) {
            Round g = e.getValue();
            Round x = nginx.byRound().get(e.getKey());
            if (x == null || g.cpuUsPerRequest() <= 0 || x.cpuUsPerRequest() <= 0) {
                continue;
            }
            double ratio;
            if (streams) {
                if (g.eventsPerRequest() <= 0 || x.eventsPerRequest() <= 0) {
                    continue;
                }
                ratio = (g.cpuUsPerRequest() / g.eventsPerRequest()) / (x.cpuUsPerRequest() / x.eventsPerRequest());
            } else {
                ratio = g.cpuUsPerRequest() / x.cpuUsPerRequest();
            }
            sb.append(n++ == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f×", ratio));
        }
        return n < 2 ? "" : " (by round: " + sb + ")";
    }

    /**
     * What limits shared through Redis cost over local ones ({@code scripts/bench --redis}): the same gateway with
     * the same config and load, its key's limits checked in Redis ({@code shared}) or in the process ({@code local}).
     * Targets of the shared-limits issue: added CPU per request at most 15%, added p50 at most 150 µs. The CPU is
     * judged on the closed loop (every target at its own saturation, so CPU per request is the steady figure), the
     * p50 on the open loop (the same fixed rate for both, below saturation): in a closed loop of 64 connections the
     * p50 is 64 over the rate, so any added CPU shows there as queueing, not as latency the hop adds.
     */
    static String sharedLimitsCost(Row shared, Row local) {
        boolean openLoop = local.askedRate() > 0;
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                "%s / %s (Redis limits / local limits): req/s %.2f×", shared.target(), local.target(),
                local.rps() > 0 ? shared.rps() / local.rps() : 0));
        if (shared.cpuUsPerRequest() > 0 && local.cpuUsPerRequest() > 0) {
            double added = shared.cpuUsPerRequest() - local.cpuUsPerRequest();
            double percent = 100 * added / local.cpuUsPerRequest();
            sb.append(String.format(Locale.ROOT, ", added CPU/request %+.1f µs (%+.1f%%", added, percent));
            sb.append(openLoop ? ", below saturation)" : String.format(Locale.ROOT, ", target ≤ 15%%: %s)",
                    percent <= 15 ? "met" : "MISSED"));
        }
        double addedP50Us = 1000 * (shared.p50Ms() - local.p50Ms());
        if (openLoop) {
            boolean kept = shared.rps() >= 0.95 * shared.askedRate() && local.rps() >= 0.95 * local.askedRate();
            sb.append(String.format(Locale.ROOT, ", added p50 %+.0f µs at %.0f req/s (target ≤ 150 µs: %s)", addedP50Us,
                    local.askedRate(), !kept ? "NOT JUDGED, the rate was not kept" : addedP50Us <= 150 ? "met" : "MISSED"));
        } else {
            sb.append(String.format(Locale.ROOT, ", p50 %+.0f µs (closed loop: queueing behind the rate; the p50 target "
                    + "is judged at a fixed rate)", addedP50Us));
        }
        if (shared.errors() > 0) {
            sb.append(String.format(Locale.ROOT, "; %d errors: checks Redis did not answer in time were refused "
                    + "(fallback deny), the figures are not the shared limits' alone", shared.errors()));
        }
        return sb.append('\n').toString();
    }

    /**
     * An open-loop workload asks every target for the same fixed rate, so no ceiling is needed; its latency only
     * means something when the target kept that rate (within 5 %).
     */
    static String rateKept(Row gw) {
        return gw.rps() >= 0.95 * gw.askedRate()
                ? String.format(Locale.ROOT, "  (open loop: %s kept the asked %.0f req/s)%n", gw.target(), gw.askedRate())
                : String.format(Locale.ROOT, "  **RATE NOT KEPT**: %s made %.0f of the asked %.0f req/s: its latency here "
                        + "is queueing, not the hop%n", gw.target(), gw.rps(), gw.askedRate());
    }

    /** CPU per stream event of a proxy, or -1: its CPU per request over the events per request. */
    static double cpuPerEvent(Row r) {
        if (r.cpuUsPerRequest() < 0 || r.eventsPerSecond() <= 0 || r.rps() <= 0) {
            return -1;
        }
        return r.cpuUsPerRequest() / (r.eventsPerSecond() / r.rps());
    }

    /**
     * The benchmark's own check that it measured the proxy, not its rig: on a workload the load decides (closed
     * loop), the upstream reached directly must run at least twice the gateway's rate, else the row is marked
     * upstream-bound and does not count. A paced workload's rate is the upstream's pace by design, and the proxies
     * compare by CPU per event: there the direct row must run at least 90 % of the streams per second the workload
     * asks ({@code askedStreamsPerSecond}: each connection one stream per its ticks of one gap each; a little more than
     * streams that keep their pace deliver, since each new one waits for the next tick and its request for a round
     * trip). Streams, not events: the load generator counts a stream's content events, which in the messages style
     * are fewer than the upstream's writes. Under that the row is marked rig-bound: the rig (the load generator and
     * the upstream, which share one core), not the proxy, set every target's rate, so the proxies' req/s ratio does
     * not count (their CPU per event still does). With the asked pace unknown (0: a results directory from before the bench recorded it) the
     * paced line gives the rates alone. A closed-loop line also says how busy each proxy's pinned core was (its CPU
     * per request times its rate): a proxy near 100 % ran at its own CPU's limit, one well under it waited on the
     * rest of the rig.
     */
    static String ceiling(Row gw, Row nginx, Row direct, boolean paced, double askedStreamsPerSecond) {
        if (direct == null || direct.rps() <= 0) {
            return "";
        }
        double headroom = direct.rps() / gw.rps();
        if (paced) {
            String rates = String.format(Locale.ROOT, "direct %.0f req/s, %s %.0f", direct.rps(), gw.target(),
                    gw.rps());
            if (askedStreamsPerSecond <= 0) {
                return String.format(Locale.ROOT, "  (paced: the rate is the upstream's pace; %s)%n", rates);
            }
            double share = direct.rps() / askedStreamsPerSecond;
            // shown rounded down, so that a share just under the line never reads as 90 %
            double percent = Math.floor(100 * share);
            return share >= 0.9
                    ? String.format(Locale.ROOT, "  (paced: the rate is the upstream's pace; direct ran %.0f %% of "
                            + "the asked %,.0f streams/s; %s)%n", percent, askedStreamsPerSecond, rates)
                    : String.format(Locale.ROOT, "  **RIG-BOUND**: direct ran only %.0f %% of the asked %,.0f "
                            + "streams/s: the rig, not the proxy, set the rates, so this row's req/s ratio does "
                            + "not count (its CPU per event still does)%n", percent, askedStreamsPerSecond);
        }
        String busy = Stream.of(busy(gw), nginx == null ? "" : busy(nginx))
                .filter(x -> !x.isEmpty()).collect(Collectors.joining(", "));
        busy = busy.isEmpty() ? "" : "; proxy core busy: " + busy;
        return headroom >= 2
                ? String.format(Locale.ROOT, "  (ceiling: direct ran %.1f× %s's rate%s)%n", headroom, gw.target(), busy)
                : String.format(Locale.ROOT, "  **UPSTREAM-BOUND**: direct ran only %.1f× %s's rate (under 2×): this row "
                        + "does not count%s%n", headroom, gw.target(), busy);
    }

    /**
     * "TARGET N %": the share of one core the target's processes used in the measured windows (the mean of each
     * round's CPU per request times its rate), or "" when not measured.
     */
    private static String busy(Row r) {
        double sum = 0;
        int n = 0;
        for (Round x : r.byRound().values()) {
            if (x.cpuUsPerRequest() > 0) {
                sum += x.cpuUsPerRequest() * x.rps() / 10_000;
                n++;
            }
        }
        return n == 0 ? "" : String.format(Locale.ROOT, "%s %.0f %%", r.target(), sum / n);
    }

    /**
     * One line of the streams10k table, from the load generator's JSON and what the script sampled: {@code streams}
     * paced streams at {@code tokensPerSecond} each, answers of {@code tokensPerAnswer} tokens in
     * {@code eventsPerAnswer} events as the load generator counts them (with the role and finish chunks). The asked
     * events per second are what the streams send at that pace: {@code eventsPerAnswer} events over the
     * {@code tokensPerAnswer / tokensPerSecond} seconds an answer takes, per stream — not one event per token, which
     * would ask 5 % too little of 40-token answers and let a perfectly paced run read 105 %. The pace is kept when at
     * least 95 % of the asked events per second arrived, with an inter-token p99 at most twice the gap between
     * tokens, and no error.
     */
    static String streamsRow(Path json, String jdk, int streams, int tokensPerSecond, int tokensPerAnswer,
            int eventsPerAnswer, String open, String rssMib, String usedMib, String committedMib) throws IOException {
        JsonNode r = JSON.readTree(json.toFile());
        long errors = r.path("errors").asLong() + r.path("warmup_errors").asLong();
        StringBuilder kinds = new StringBuilder();
        r.path("errors_by_kind").fields().forEachRemaining(e -> kinds.append(kinds.length() == 0 ? " (" : ", ")
                .append(e.getKey()).append('=').append(e.getValue().asLong()));
        if (kinds.length() > 0) {
            kinds.append(')');
        }
        double asked = (double) streams * eventsPerAnswer * tokensPerSecond / tokensPerAnswer;
        double eventsPerSecond = r.path("events_per_second").asDouble();
        double itlP99Ms = r.path("itl_us").path("p99").asDouble() / 1000;
        boolean kept = errors == 0 && eventsPerSecond >= 0.95 * asked && itlP99Ms <= 2 * 1000.0 / tokensPerSecond;
        // The asked rate assumes the answer's shape; streams that ended with another count of events void it.
        double perStream = r.path("events_per_stream").asDouble(eventsPerAnswer);
        String verdict = Math.abs(perStream - eventsPerAnswer) > 0.05
                ? String.format(Locale.ROOT, "not judged (%.1f events per stream, not %d)", perStream, eventsPerAnswer)
                : kept ? "kept" : "not kept";
        return String.format(Locale.ROOT, "| %s | %d | %s | %d%s | %d | %.0f (%.0f) | %.1f / %.1f | %.1f / %.1f | %s | %s | %s | %s |%n",
                jdk, streams, open, errors, kinds, r.path("requests").asLong(), eventsPerSecond, asked,
                r.path("ttft_us").path("p50").asDouble() / 1000, r.path("ttft_us").path("p99").asDouble() / 1000,
                r.path("itl_us").path("p50").asDouble() / 1000, itlP99Ms, verdict, rssMib, usedMib,
                committedMib);
    }

    /**
     * One line of {@code workloads.tsv}: the description, and what a paced workload asks of the upstream: the gap in
     * ms between a stream's writes, the connections, and how many ticks of the upstream's pacer one stream takes.
     * The gap and the ticks are 0 when not known: a workload not paced, or a results directory from before the
     * bench recorded them.
     */
    record Workload(String description, int gapMs, int connections, int ticksPerStream) {
        /** A workload with results but no line in {@code workloads.tsv}: no description, no pace. */
        static final Workload UNKNOWN = new Workload("", 0, 0, 0);

        /** The streams per second asked: on each connection one per its ticks of one gap each; 0 when not known. */
        double askedStreamsPerSecond() {
            return gapMs > 0 && connections > 0 && ticksPerStream > 0
                    ? connections * 1000.0 / ((double) gapMs * ticksPerStream) : 0;
        }
    }

    /** Workload name → its line, in the bench's order. */
    private static Map<String, Workload> workloads(Path dir) throws IOException {
        Map<String, Workload> w = new LinkedHashMap<>();
        Path file = dir.resolve("workloads.tsv");
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file)) {
                String[] parts = line.split("\t", -1);
                if (!parts[0].isBlank()) {
                    w.put(parts[0], new Workload(parts.length > 1 ? parts[1] : "", number(parts, 2), number(parts, 3),
                            number(parts, 4)));
                }
            }
        }
        return w;
    }

    /** Column {@code i} of a {@code workloads.tsv} line as a number, 0 when absent or empty. */
    private static int number(String[] parts, int i) {
        return parts.length > i && !parts[i].isBlank() ? Integer.parseInt(parts[i].strip()) : 0;
    }

    /** workload → target → row; workloads in the bench's order, targets direct, nginx, gateway-…. */
    static Map<String, Map<String, Row>> load(Path dir, Map<String, ?> order) throws IOException {
        Map<String, Map<String, Row>> out = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, List<JsonNode>>> w : raw(dir, order).entrySet()) {
            Map<String, Row> rows = new LinkedHashMap<>();
            for (Map.Entry<String, List<JsonNode>> t : w.getValue().entrySet()) {
                rows.put(t.getKey(), row(t.getKey(), t.getValue()));
            }
            out.put(w.getKey(), rows);
        }
        return out;
    }

    /** workload → target → the rounds' JSON; workloads in the bench's order, targets direct, nginx, gateway-…. */
    private static Map<String, Map<String, List<JsonNode>>> raw(Path dir, Map<String, ?> order)
            throws IOException {
        Map<String, Map<String, List<JsonNode>>> raw = new LinkedHashMap<>();
        for (String w : order.keySet()) {
            raw.put(w, new LinkedHashMap<>());
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.sorted().toList();
        }
        for (Path f : files) {
            Matcher m = RESULT.matcher(f.getFileName().toString());
            if (!m.matches()) {
                continue;
            }
            ObjectNode node = (ObjectNode) JSON.readTree(f.toFile());
            node.put(ROUND, Integer.parseInt(m.group(3)));
            raw.computeIfAbsent(m.group(1), k -> new LinkedHashMap<>())
                    .computeIfAbsent(m.group(2), k -> new ArrayList<>())
                    .add(node);
        }
        Map<String, Map<String, List<JsonNode>>> sorted = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, List<JsonNode>>> w : raw.entrySet()) {
            List<String> targets = new ArrayList<>(w.getValue().keySet());
            targets.sort(Comparator.comparingInt(BenchReport::targetRank).thenComparing(t -> t));
            Map<String, List<JsonNode>> byTarget = new LinkedHashMap<>();
            for (String t : targets) {
                byTarget.put(t, w.getValue().get(t));
            }
            sorted.put(w.getKey(), byTarget);
        }
        return sorted;
    }

    private static int targetRank(String target) {
        return target.equals("direct") ? 0 : target.equals("nginx") ? 1 : 2;
    }

    private static Row row(String target, List<JsonNode> runs) {
        double rps = 0;
        double min = Double.MAX_VALUE;
        double max = 0;
        double p50 = 0;
        double p99 = 0;
        double ttft = 0;
        double eps = 0;
        double cpu = 0;
        int cpuRuns = 0;
        double allocRequest = 0;
        double allocEvent = 0;
        int allocRuns = 0;
        long errors = 0;
        double askedRate = 0;
        Map<Integer, Round> byRound = new TreeMap<>();
        for (JsonNode r : runs) {
            askedRate = r.path("rate").asDouble(0);
            double v = r.path("requests_per_second").asDouble();
            double roundEps = r.path("events_per_second").asDouble();
            byRound.put(r.path(ROUND).asInt(), new Round(
                    r.path("cpu").has("cpu_us_per_request") ? r.path("cpu").path("cpu_us_per_request").asDouble() : -1,
                    v > 0 ? roundEps / v : 0, v));
            rps += v;
            min = Math.min(min, v);
            max = Math.max(max, v);
            p50 += r.path("latency_us").path("p50").asDouble() / 1000;
            p99 += r.path("latency_us").path("p99").asDouble() / 1000;
            ttft += r.path("ttft_us").path("p50").asDouble() / 1000;
            eps += r.path("events_per_second").asDouble();
            if (r.path("cpu").has("cpu_us_per_request")) {
                cpu += r.path("cpu").path("cpu_us_per_request").asDouble();
                cpuRuns++;
            }
            if (r.has("alloc")) {
                allocRequest += r.path("alloc").path("bytes_per_request").asDouble();
                allocEvent += r.path("alloc").path("bytes_per_event").asDouble(-1);
                allocRuns++;
            }
            errors += r.path("errors").asLong() + r.path("warmup_errors").asLong();
        }
        int n = runs.size();
        return new Row(target, n, rps / n, min, max, p50 / n, p99 / n, ttft / n, eps / n,
                cpuRuns == 0 ? -1 : cpu / cpuRuns, errors, allocRuns == 0 ? -1 : allocRequest / allocRuns,
                allocRuns == 0 || allocEvent < 0 ? -1 : allocEvent / allocRuns, askedRate, byRound);
    }

    private static ObjectNode summaryJson(Path dir) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        for (Map.Entry<String, Map<String, Row>> w : load(dir, workloads(dir)).entrySet()) {
            ArrayNode rows = root.putArray(w.getKey());
            for (Row r : w.getValue().values()) {
                rows.add(JSON.valueToTree(r));
            }
        }
        return root;
    }
}
