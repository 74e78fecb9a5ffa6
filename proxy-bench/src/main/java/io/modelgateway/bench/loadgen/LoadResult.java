package io.modelgateway.bench.loadgen;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The merged outcome of a run: counts, errors by kind, and the latency, time-to-first-token and
 * inter-token histograms (microseconds), with the table, the JSON and the {@code .hgrm} files made
 * from them. Filled by {@link #add} on each event loop in turn, then read by the main thread.
 */
final class LoadResult {
    /** The percentiles of the table and the JSON, and their JSON names. */
    static final double[] PERCENTILES = {50, 90, 99, 99.9, 99.99};
    static final String[] PERCENTILE_NAMES = {"p50", "p90", "p99", "p99_9", "p99_99"};

    final LoadOptions options;
    final String transport;
    final long windowNanos;
    final CpuSample cpu;
    /** Bytes the gateway's event loops allocated around the window ({@code --alloc-metrics}), or -1. */
    final long allocatedBytes;

    final Histogram latency = new Histogram(3);
    final Histogram ttft = new Histogram(3);
    final Histogram itl = new Histogram(3);
    long completed;
    long streams;
    long streamEvents;
    long events;
    long warmupErrors;
    long inFlightAtEnd;
    final Map<String, Long> errors = new LinkedHashMap<>();
    /** Answer heads by status, 2xx included: a 200 stream that then failed or timed out counts here too. */
    final Map<Integer, Long> statuses = new TreeMap<>();

    LoadResult(LoadOptions options, String transport, long windowNanos, CpuSample cpu, long allocatedBytes) {
        this.options = options;
        this.transport = transport;
        this.windowNanos = windowNanos;
        this.cpu = cpu;
        this.allocatedBytes = allocatedBytes;
    }

    /** Bytes the gateway's event loops allocated per completed request ({@code --alloc-metrics}); -1 unmeasured. */
    double allocBytesPerRequest() {
        return allocatedBytes < 0 || completed == 0 ? -1 : (double) allocatedBytes / completed;
    }

    /** The same per stream event received; -1 when unmeasured or no events. */
    double allocBytesPerEvent() {
        return allocatedBytes < 0 || events == 0 ? -1 : (double) allocatedBytes / events;
    }

    /** Adds one event loop's measurements; call on that loop (or after it stopped). */
    void add(LoopStats s) {
        latency.add(s.latency);
        ttft.add(s.ttft);
        itl.add(s.itl);
        completed += s.completed;
        streams += s.streams;
        streamEvents += s.streamEvents;
        events += s.events;
        warmupErrors += s.warmupErrors;
        inFlightAtEnd += s.busyNow();
        for (ErrorKind k : ErrorKind.values()) {
            if (s.errorsByKind[k.ordinal()] > 0) {
                errors.merge(k.label, s.errorsByKind[k.ordinal()], Long::sum);
            }
        }
        for (int status = 0; status < s.errorsByStatus.length; status++) {
            if (s.errorsByStatus[status] > 0) {
                errors.merge("status_" + status, s.errorsByStatus[status], Long::sum);
            }
            if (s.headsByStatus[status] > 0) {
                statuses.merge(status, s.headsByStatus[status], Long::sum);
            }
        }
    }

    long errorCount() {
        long n = 0;
        for (long v : errors.values()) {
            n += v;
        }
        return n;
    }

    double seconds() {
        return windowNanos / 1e9;
    }

    double requestsPerSecond() {
        return completed / seconds();
    }

    double eventsPerSecond() {
        return events / seconds();
    }

    /** CPU microseconds of the {@code --cpu-pid} processes per completed request; -1 when not measured. */
    double cpuMicrosPerRequest() {
        return cpu.othersNanos() < 0 || completed == 0 ? -1 : cpu.othersNanos() / 1e3 / completed;
    }

    /** The table printed at the end of a run. */
    void printTable(PrintStream out) {
        String loop = options.openLoop()
                ? String.format(Locale.ROOT, "open loop at %.0f req/s", options.rate())
                : "closed loop";
        out.printf(Locale.ROOT, "%s %s%n", options.method(), options.url());
        out.printf(Locale.ROOT, "  %s, %d connections, %d event loop(s) (%s), %.1f s measured after %.1f s warmup%n",
                loop, options.connections(), options.threads(), transport, seconds(), options.warmupSeconds());
        out.printf(Locale.ROOT, "  requests   %d ok, %d errors   %.1f req/s   (%d unanswered at the end)%n", completed,
                errorCount(), requestsPerSecond(), inFlightAtEnd);
        if (!errors.isEmpty()) {
            StringBuilder sb = new StringBuilder("  errors    ");
            errors.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            out.println(sb);
        }
        if (!statuses.isEmpty()) {
            StringBuilder sb = new StringBuilder("  statuses  ");
            statuses.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            out.println(sb);
        }
        if (warmupErrors > 0) {
            out.printf(Locale.ROOT, "  (and %d errors during connect/warmup)%n", warmupErrors);
        }
        if (events > 0 || streams > 0) {
            out.printf(Locale.ROOT, "  streams    %d done, %.1f content events each, %.0f events/s%n", streams,
                    streams == 0 ? 0.0 : (double) streamEvents / streams, eventsPerSecond());
        }
        if (cpu.othersNanos() >= 0) {
            out.printf(Locale.ROOT, "  cpu        pid %s: %.1f ms in the window, %.1f us per request%n",
                    options.cpuPids(), cpu.othersNanos() / 1e6, cpuMicrosPerRequest());
        }
        if (allocatedBytes >= 0) {
            out.printf(Locale.ROOT, "  alloc      %.0f bytes per request%s on the gateway's event loops%n",
                    allocBytesPerRequest(), events > 0 ? String.format(Locale.ROOT, ", %.1f per event",
                            allocBytesPerEvent()) : "");
        }
        if (cpu.ownNanos() >= 0) {
            out.printf(Locale.ROOT, "  %-10s %.0f%% of one core%n", "wrk".equals(transport) ? "wrk" : "loadgen",
                    100.0 * cpu.ownNanos() / windowNanos);
        }
        out.printf(Locale.ROOT, "  %-8s %9s %9s %9s %9s %9s %9s %9s%n", "ms", "p50", "p90", "p99", "p99.9",
                "p99.99", "max", "mean");
        row(out, "latency", latency);
        if (ttft.getTotalCount() > 0 || itl.getTotalCount() > 0) {
            row(out, "ttft", ttft);
            row(out, "itl", itl);
        }
    }

    private static void row(PrintStream out, String name, Histogram h) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "  %-8s", name));
        for (double p : PERCENTILES) {
            sb.append(String.format(Locale.ROOT, " %9.3f", ms(h.getValueAtPercentile(p), h)));
        }
        sb.append(String.format(Locale.ROOT, " %9.3f %9.3f", ms(h.getMaxValue(), h), h.getTotalCount() == 0 ? 0.0
                : h.getMean() / 1000.0));
        out.println(sb);
    }

    private static double ms(long micros, Histogram h) {
        return h.getTotalCount() == 0 ? 0.0 : micros / 1000.0;
    }

    /** Every result as one JSON object (times in microseconds). */
    void writeJson(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (OutputStream os = Files.newOutputStream(file);
             JsonGenerator g = new JsonFactory().createGenerator(os, JsonEncoding.UTF8)) {
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            if (options.label() != null) {
                g.writeStringField("label", options.label());
            }
            g.writeStringField("url", options.url().toString());
            g.writeStringField("method", options.method());
            g.writeStringField("mode", options.openLoop() ? "open" : "closed");
            if (options.openLoop()) {
                g.writeNumberField("rate", options.rate());
            }
            g.writeNumberField("connections", options.connections());
            g.writeNumberField("threads", options.threads());
            g.writeStringField("transport", transport);
            g.writeNumberField("warmup_s", options.warmupSeconds());
            g.writeNumberField("duration_s", seconds());
            g.writeNumberField("requests", completed);
            g.writeNumberField("requests_per_second", requestsPerSecond());
            g.writeNumberField("errors", errorCount());
            g.writeObjectFieldStart("errors_by_kind");
            for (Map.Entry<String, Long> e : errors.entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeObjectFieldStart("statuses");
            for (Map.Entry<Integer, Long> e : statuses.entrySet()) {
                g.writeNumberField(Integer.toString(e.getKey()), e.getValue());
            }
            g.writeEndObject();
            g.writeNumberField("warmup_errors", warmupErrors);
            g.writeNumberField("in_flight_at_end", inFlightAtEnd);
            g.writeNumberField("streams", streams);
            g.writeNumberField("events", events);
            g.writeNumberField("events_per_second", eventsPerSecond());
            g.writeNumberField("events_per_stream", streams == 0 ? 0.0 : (double) streamEvents / streams);
            histogram(g, "latency_us", latency);
            histogram(g, "ttft_us", ttft);
            histogram(g, "itl_us", itl);
            // The histograms themselves (HdrHistogram's compressed form, base64), so that a report can merge the
            // rounds of a bench and draw whole percentile curves from the JSON alone.
            g.writeObjectFieldStart("hdr");
            g.writeStringField("latency_us", encode(latency));
            g.writeStringField("ttft_us", encode(ttft));
            g.writeStringField("itl_us", encode(itl));
            g.writeEndObject();
            g.writeObjectFieldStart("cpu");
            g.writeArrayFieldStart("pids");
            for (long pid : options.cpuPids()) {
                g.writeNumber(pid);
            }
            g.writeEndArray();
            if (cpu.othersNanos() >= 0) {
                g.writeNumberField("cpu_ms", cpu.othersNanos() / 1e6);
                g.writeNumberField("cpu_us_per_request", cpuMicrosPerRequest());
            }
            if (cpu.ownNanos() >= 0) {
                g.writeNumberField("loadgen_cpu_ms", cpu.ownNanos() / 1e6);
            }
            g.writeEndObject();
            if (allocatedBytes >= 0) {
                g.writeObjectFieldStart("alloc");
                g.writeNumberField("bytes", allocatedBytes);
                g.writeNumberField("bytes_per_request", allocBytesPerRequest());
                if (events > 0) {
                    g.writeNumberField("bytes_per_event", allocBytesPerEvent());
                }
                g.writeEndObject();
            }
            g.writeEndObject();
        }
    }

    static String encode(Histogram h) {
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buffer);
        return java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), n));
    }

    /** The inverse of {@link #encode}. */
    static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(
                    java.nio.ByteBuffer.wrap(java.util.Base64.getDecoder().decode(base64)), 0);
        } catch (java.util.zip.DataFormatException e) {
            throw new IllegalArgumentException("not an encoded histogram: " + e.getMessage(), e);
        }
    }

    /** The run as an HTML report ({@link HtmlReport}): one workload, one target. */
    void writeHtml(Path file) throws IOException {
        String name = options.label() != null ? options.label() : options.method() + " " + options.url().getPath();
        String loop = options.openLoop()
                ? String.format(Locale.ROOT, "open loop at %.0f req/s", options.rate())
                : "closed loop";
        String setup = String.format(Locale.ROOT, "%s %s: %s, %d connections, %.1f s measured after %.1f s warmup",
                options.method(), options.url(), loop, options.connections(), seconds(), options.warmupSeconds());
        HtmlReport.write(file, "Load test: " + name, List.of(setup, "Errors: " + (errors.isEmpty() ? "none"
                : errors.toString()) + "; statuses: " + statuses),
                List.of(new HtmlReport.Workload(name, "", List.of(new HtmlReport.Run(options.url().getHost() + ":"
                        + options.port(), completed, requestsPerSecond(), errorCount(), eventsPerSecond(), latency,
                        ttft, itl)))));
    }

    private static void histogram(JsonGenerator g, String name, Histogram h) throws IOException {
        g.writeObjectFieldStart(name);
        g.writeNumberField("count", h.getTotalCount());
        boolean any = h.getTotalCount() > 0;
        g.writeNumberField("mean", any ? h.getMean() : 0.0);
        g.writeNumberField("min", any ? h.getMinValue() : 0);
        for (int i = 0; i < PERCENTILES.length; i++) {
            g.writeNumberField(PERCENTILE_NAMES[i], any ? h.getValueAtPercentile(PERCENTILES[i]) : 0);
        }
        g.writeNumberField("max", any ? h.getMaxValue() : 0);
        g.writeEndObject();
    }

    /** {@code PREFIX-latency.hgrm}, and {@code -ttft} / {@code -itl} when streams were measured (in ms). */
    void writeHgrm(String prefix) throws IOException {
        Path first = Path.of(prefix + "-latency.hgrm").toAbsolutePath().getParent();
        if (first != null) {
            Files.createDirectories(first);
        }
        hgrm(prefix + "-latency.hgrm", latency);
        if (ttft.getTotalCount() > 0 || itl.getTotalCount() > 0) {
            hgrm(prefix + "-ttft.hgrm", ttft);
            hgrm(prefix + "-itl.hgrm", itl);
        }
    }

    private static void hgrm(String file, Histogram h) throws IOException {
        try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(file)), false, "UTF-8")) {
            // Recorded in microseconds; scaled to milliseconds like wrk2's and HdrHistogram's plotter expect.
            h.outputPercentileDistribution(out, 1000.0);
        }
    }
}
