package io.modelgateway.core.observe;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The dashboard's memory of the last minutes: once a second ({@link #tick}) it reads {@link LiveStats}' cumulative
 * counters, keeps the differences per second for {@value #SECONDS} seconds, and writes what the page shows as
 * JSON ({@link #points}, {@link #state}, {@link #config}).
 *
 * <p>Confined to the admin listener's single event loop: ticks and JSON are made there, so nothing here is shared.
 *
 * <p>Per series it keeps, for the last {@value #SECONDS} seconds, requests, errors, refusals, tokens and cost
 * per second, and latency and time-to-first-token percentiles over the trailing {@value #PERCENTILE_SECONDS}
 * seconds; for the last {@value #WINDOW} seconds, the per-second histograms, whose running sum gives the
 * percentiles of the tables. About 70 KB per series that has seen traffic, at most {@link LiveStats#MAX_SERIES}
 * series.
 */
final class LiveHistory {
    /** The span of the charts and of the window counts: five minutes of one-second points. */
    static final int SECONDS = 300;
    /** The window of the rates and percentiles of the tiles and tables. */
    static final int WINDOW = 60;
    /** The trailing window of each chart percentile point. */
    static final int PERCENTILE_SECONDS = 5;

    /** Per-second counters kept per series: requests, errors, refused, input tokens, output tokens. */
    private static final int[] COUNTED = {LiveStats.REQUESTS, LiveStats.ERRORS, LiveStats.REFUSED,
        LiveStats.INPUT_TOKENS, LiveStats.OUTPUT_TOKENS};
    private static final int C = COUNTED.length;
    private static final int B = LatencyBuckets.COUNT;
    private static final JsonFactory JSON = new JsonFactory();

    private final LiveStats stats;
    private final long[] times = new long[SECONDS];
    private final long[] spans = new long[SECONDS];
    private final SeriesHistory[] series = new SeriesHistory[LiveStats.MAX_SERIES];
    private final Map<String, long[]> deploymentFailures = new HashMap<>();
    private final long startMillis;
    private long ticks;
    private long lastNanos;
    private boolean costSeen;
    private List<DeploymentStates.State> deployments = List.of();
    private final Map<String, Long> failuresInWindow = new HashMap<>();
    private long inFlight;

    LiveHistory(LiveStats stats, long nowNanos, long epochMillis) {
        this.stats = stats;
        this.lastNanos = nowNanos;
        this.startMillis = epochMillis;
    }

    /** Ticks so far (points in the history, up to {@value #SECONDS}). */
    long ticks() {
        return ticks;
    }

    /** One second's point: reads the counters, the deployments' health and the in-flight count. */
    void tick(long nowNanos, long epochMillis, List<DeploymentStates.State> states) {
        int slot = (int) (ticks % SECONDS);
        times[slot] = epochMillis;
        spans[slot] = Math.max(1, nowNanos - lastNanos);
        lastNanos = nowNanos;
        int count = stats.seriesCount();
        for (int id = 0; id < count; id++) {
            SeriesHistory h = series[id];
            if (h == null) {
                h = series[id] = new SeriesHistory(stats.series(id));
            }
            h.tick(slot, ticks);
            costSeen |= h.cost[slot] > 0;
        }
        deployments = states;
        failuresInWindow.clear();
        Map<String, long[]> seen = new HashMap<>();
        for (DeploymentStates.State s : states) {
            String key = s.provider() + '\n' + s.upstreamModel();
            long[] ring = deploymentFailures.get(key);
            if (ring == null) {
                ring = new long[SECONDS];
            }
            long before = ticks >= SECONDS ? ring[slot] : 0;
            ring[slot] = s.failures();
            failuresInWindow.put(key, s.failures() - before);
            seen.put(key, ring);
        }
        deploymentFailures.clear();
        deploymentFailures.putAll(seen); // deployments gone from the config are forgotten
        inFlight = stats.inFlight();
        ticks++;
    }

    /** The series the page asked for by selector ({@code total}, {@code model:NAME}, …); null when unknown. */
    SeriesHistory find(String selector) {
        for (int id = 0; id < stats.seriesCount(); id++) {
            SeriesHistory h = series[id];
            if (h != null && h.series.selector().equals(selector)) {
                return h;
            }
        }
        return null;
    }

    SeriesHistory total() {
        return series[LiveStats.TOTAL];
    }

    /**
     * The chart points of {@code h} (zeros when null: {@code selector} has seen no traffic yet): the last {@code n} seconds, columns of equal length
     * ({@code t} in epoch seconds; rates per second; percentiles in ms, null where no exchange fell).
     */
    String points(SeriesHistory h, int n, String selector) {
        n = (int) Math.min(n, Math.min(ticks, SECONDS));
        StringWriter out = new StringWriter(256 + n * 80);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("series", h == null ? selector : h.series.selector());
            long first = ticks - n;
            g.writeArrayFieldStart("t");
            for (long k = first; k < ticks; k++) {
                g.writeNumber(times[(int) (k % SECONDS)] / 1000.0);
            }
            g.writeEndArray();
            String[] rates = {"rps", "eps", "refused", "tokens_in", "tokens_out"};
            for (int c = 0; c < C; c++) {
                g.writeArrayFieldStart(rates[c]);
                for (long k = first; k < ticks; k++) {
                    int slot = (int) (k % SECONDS);
                    number(g, h == null ? 0 : h.counters[slot * C + c] * 1e9 / spans[slot]);
                }
                g.writeEndArray();
            }
            g.writeArrayFieldStart("cost");
            for (long k = first; k < ticks; k++) {
                int slot = (int) (k % SECONDS);
                number(g, h == null ? 0 : h.cost[slot] * 1e9 / spans[slot]);
            }
            g.writeEndArray();
            String[] percentiles = {"lat_p50", "lat_p99", "ttft_p50", "ttft_p99"};
            for (int p = 0; p < 4; p++) {
                g.writeArrayFieldStart(percentiles[p]);
                for (long k = first; k < ticks; k++) {
                    number(g, h == null ? Double.NaN : h.percentiles[(int) (k % SECONDS) * 4 + p]);
                }
                g.writeEndArray();
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** The tiles, the tables by model, key and provider, the deployments and the recent failures. */
    String state(long nowMillis) {
        StringWriter out = new StringWriter(4096);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("now", nowMillis);
            g.writeNumberField("since", startMillis);
            g.writeNumberField("window_s", WINDOW);
            g.writeNumberField("history_s", SECONDS);
            g.writeBooleanField("costs", costSeen);
            g.writeNumberField("in_flight", inFlight);
            g.writeFieldName("total");
            SeriesHistory total = total();
            if (total == null) {
                g.writeNull();
            } else {
                row(g, total);
            }
            for (LiveStats.Dimension d : LiveStats.Dimension.values()) {
                g.writeArrayFieldStart(d.label());
                for (int id = 1; id < stats.seriesCount(); id++) {
                    SeriesHistory h = series[id];
                    if (h != null && h.series.dimension() == d) {
                        row(g, h);
                    }
                }
                g.writeEndArray();
            }
            g.writeArrayFieldStart("deployments");
            for (DeploymentStates.State s : deployments) {
                g.writeStartObject();
                g.writeStringField("provider", s.provider());
                g.writeStringField("upstream_model", s.upstreamModel());
                g.writeArrayFieldStart("models");
                for (String m : s.models()) {
                    g.writeString(m);
                }
                g.writeEndArray();
                g.writeStringField("rotation", s.rotation().label());
                g.writeNumberField("in_flight", s.inFlight());
                g.writeNumberField("failures_in_a_row", s.consecutiveFailures());
                g.writeNumberField("failures_window",
                        failuresInWindow.getOrDefault(s.provider() + '\n' + s.upstreamModel(), 0L));
                g.writeNumberField("last_failure_ago_ms", s.lastFailureAgoMillis());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("failures");
            for (LiveStats.Failure f : stats.recentFailures()) {
                g.writeStartObject();
                g.writeNumberField("at", f.epochMillis());
                g.writeStringField("provider", f.provider());
                g.writeStringField("model", f.model());
                g.writeStringField("reason", f.reason());
                g.writeBooleanField("retried", f.retried());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    /** One series' figures: rates and percentiles over the last {@value #WINDOW} s, counts over the history. */
    private void row(JsonGenerator g, SeriesHistory h) throws IOException {
        long n = Math.min(ticks, WINDOW);
        long spanNanos = 0;
        long[] window = new long[C];
        double windowCost = 0;
        for (long k = ticks - n; k < ticks; k++) {
            int slot = (int) (k % SECONDS);
            spanNanos += spans[slot];
            for (int c = 0; c < C; c++) {
                window[c] += h.counters[slot * C + c];
            }
            windowCost += h.cost[slot];
        }
        long[] history = new long[C];
        double historyCost = 0;
        for (long k = Math.max(0, ticks - SECONDS); k < ticks; k++) {
            int slot = (int) (k % SECONDS);
            for (int c = 0; c < C; c++) {
                history[c] += h.counters[slot * C + c];
            }
            historyCost += h.cost[slot];
        }
        double seconds = spanNanos / 1e9;
        g.writeStartObject();
        g.writeStringField("name", h.series.name());
        g.writeStringField("selector", h.series.selector());
        number(g, "rps", seconds == 0 ? 0 : window[0] / seconds);
        number(g, "error_rate", window[0] == 0 ? Double.NaN : (double) window[1] / window[0]);
        number(g, "refused_rate", window[0] == 0 ? Double.NaN : (double) window[2] / window[0]);
        number(g, "lat_p50", LatencyBuckets.quantileMillis(h.window, 0, 0.5));
        number(g, "lat_p99", LatencyBuckets.quantileMillis(h.window, 0, 0.99));
        number(g, "ttft_p50", LatencyBuckets.quantileMillis(h.window, B, 0.5));
        number(g, "ttft_p99", LatencyBuckets.quantileMillis(h.window, B, 0.99));
        number(g, "tokens_per_s", seconds == 0 ? 0 : (window[3] + window[4]) / seconds);
        number(g, "cost_per_s", seconds == 0 ? 0 : windowCost / seconds);
        g.writeNumberField("requests", history[0]);
        g.writeNumberField("errors", history[1]);
        g.writeNumberField("refused", history[2]);
        g.writeNumberField("input_tokens", history[3]);
        g.writeNumberField("output_tokens", history[4]);
        number(g, "cost", historyCost);
        g.writeEndObject();
    }

    /**
     * The config's models and keys as the page lists them: names, types, deployments, routing, patterns and
     * limits. Never a key: {@link KeyConfig} holds only a hash, and not even that is written.
     */
    static String config(GatewayConfig config) {
        StringWriter out = new StringWriter(2048);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("models");
            for (ModelConfig m : config.models().values()) {
                g.writeStartObject();
                g.writeStringField("name", m.name());
                g.writeStringField("type", m.type().name().toLowerCase(Locale.ROOT));
                g.writeStringField("strategy", m.routing().strategy().name().toLowerCase(Locale.ROOT));
                g.writeNumberField("retries", m.routing().retries().max());
                g.writeArrayFieldStart("fallbacks");
                for (String f : m.routing().fallbacks()) {
                    g.writeString(f);
                }
                g.writeEndArray();
                g.writeArrayFieldStart("deployments");
                for (DeploymentConfig d : m.deployments()) {
                    g.writeStartObject();
                    g.writeStringField("provider", d.provider().name());
                    g.writeStringField("type", d.provider().type().name().toLowerCase(Locale.ROOT));
                    g.writeStringField("model", d.upstreamModel());
                    g.writeNumberField("weight", d.weight());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeStringField("limits", limits(m.limits()));
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeArrayFieldStart("keys");
            for (KeyConfig k : config.keys()) {
                g.writeStartObject();
                g.writeStringField("name", k.name());
                g.writeArrayFieldStart("models");
                for (String p : k.models()) {
                    g.writeString(p);
                }
                g.writeEndArray();
                g.writeStringField("limits", limits(k.limits()));
                g.writeNumberField("model_limits", k.modelLimits().size());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static String limits(LimitsConfig l) {
        if (l.isEmpty()) {
            return "";
        }
        List<String> parts = new ArrayList<>(4);
        if (l.requestsPerMinute() > 0) {
            parts.add(l.requestsPerMinute() + " req/min");
        }
        if (l.tokensPerMinute() > 0) {
            parts.add(l.tokensPerMinute() + " tokens/min");
        }
        if (l.concurrentRequests() > 0) {
            parts.add(l.concurrentRequests() + " concurrent");
        }
        if (l.dailyTokens() > 0) {
            parts.add(l.dailyTokens() + " tokens/day");
        }
        return String.join(", ", parts);
    }

    private static void number(JsonGenerator g, String name, double v) throws IOException {
        g.writeFieldName(name);
        number(g, v);
    }

    /** A finite number with at most four decimals (the page shows fewer), or null. */
    private static void number(JsonGenerator g, double v) throws IOException {
        if (!Double.isFinite(v)) {
            g.writeNull();
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            g.writeNumber((long) v);
        } else {
            g.writeNumber(Math.round(v * 1e4) / 1e4);
        }
    }

    /** One series' history; see the class comment for what and how long. */
    final class SeriesHistory {
        final LiveStats.Series series;
        private long[] last = new long[LiveStats.WIDTH];
        private long[] current = new long[LiveStats.WIDTH];
        final long[] counters = new long[SECONDS * C];
        final double[] cost = new double[SECONDS];
        /** Per-second latency and TTFT bucket counts of the last {@value #WINDOW} ticks. */
        private final int[] histograms = new int[WINDOW * 2 * B];
        /** Their sum over the last {@value #WINDOW} ticks, and over the last {@value #PERCENTILE_SECONDS}. */
        final long[] window = new long[2 * B];
        private final long[] recent = new long[2 * B];
        /** Per tick: latency p50, p99, TTFT p50, p99 (ms) over the trailing {@value #PERCENTILE_SECONDS} s. */
        final double[] percentiles = new double[SECONDS * 4];

        SeriesHistory(LiveStats.Series series) {
            this.series = series;
        }

        void tick(int slot, long tick) {
            stats.read(series.id(), current);
            for (int c = 0; c < C; c++) {
                counters[slot * C + c] = current[COUNTED[c]] - last[COUNTED[c]];
            }
            cost[slot] = Math.max(0, Double.longBitsToDouble(current[LiveStats.COST])
                    - Double.longBitsToDouble(last[LiveStats.COST]));
            int h = (int) (tick % WINDOW);
            int old = h * 2 * B;
            int expiring = tick >= PERCENTILE_SECONDS ? (int) ((tick - PERCENTILE_SECONDS) % WINDOW) * 2 * B : -1;
            for (int b = 0; b < 2 * B; b++) {
                window[b] -= histograms[old + b];
                if (expiring >= 0) {
                    recent[b] -= histograms[expiring + b];
                }
                long d = current[LiveStats.LATENCY + b] - last[LiveStats.LATENCY + b];
                histograms[old + b] = (int) Math.min(Integer.MAX_VALUE, d);
                window[b] += d;
                recent[b] += d;
            }
            percentiles[slot * 4] = LatencyBuckets.quantileMillis(recent, 0, 0.5);
            percentiles[slot * 4 + 1] = LatencyBuckets.quantileMillis(recent, 0, 0.99);
            percentiles[slot * 4 + 2] = LatencyBuckets.quantileMillis(recent, B, 0.5);
            percentiles[slot * 4 + 3] = LatencyBuckets.quantileMillis(recent, B, 0.99);
            long[] t = last;
            last = current;
            current = t;
        }
    }
}
