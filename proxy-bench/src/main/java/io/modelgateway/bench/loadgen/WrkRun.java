package io.modelgateway.bench.loadgen;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code loadgen --wrk}: the same closed-loop run, its load made by wrk (the C load generator, Debian's {@code wrk})
 * instead of this program's Netty client, and its result written in the same form (table, JSON) with the same CPU and
 * allocation windows. Why: on a machine that gives the load generator and the benchmark's upstream one core between
 * them, the upstream reached directly must still run at twice a proxy's rate for the proxy's row to count; this
 * client spends about 20 µs of CPU per request and wrk about 10, which is the difference between the direct row
 * falling short of that ceiling and clearing it.
 *
 * <p>What wrk does not see, a short run of this program's own client sees first: one connection for one second
 * ({@link #probe}), whose answers are checked as always (status, a stream's terminal event, error events) and whose
 * content events per stream give the measured run's events (wrk reads the bytes of an answer, not its events). A
 * probe that fails, or gets no answer, ends the run with that failure: wrk would only have counted bytes.
 *
 * <p>The measured window is one wrk process of {@code --duration} seconds, after a separate wrk process of
 * {@code --warmup} seconds; the CPU of the {@code --cpu-pid} processes and the gateway's allocation are read just
 * before it starts and just after it ends. Latency: wrk's own histogram, handed over as 1,000 evenly spaced
 * quantiles (each carrying its share of the requests), so p50 and p99 are wrk's to within a tenth of a percentile
 * and the tail past p99.9 is coarse. Errors: wrk's socket errors (connect, read, write, timeout) and its count of
 * answers with a status over 399; it has no count per status.
 */
final class WrkRun {
    /** The quantiles of wrk's latency histogram handed over. */
    static final int QUANTILES = 1000;

    private WrkRun() {
    }

    /** A closed loop only: {@link LoadOptions#parse} refuses {@code --wrk} with {@code --rate}. */
    static LoadResult execute(LoadOptions options, PrintStream progress) throws IOException, InterruptedException {
        LoadResult probe = probe(options);
        if (probe.completed == 0 || probe.errorCount() > 0) {
            throw new IllegalStateException("the probe (one connection, one second, this program's client) got "
                    + probe.completed + " answers and " + probe.errorCount() + " errors " + probe.errors
                    + "; not starting wrk");
        }
        double eventsPerStream = probe.streams == 0 ? 0 : (double) probe.streamEvents / probe.streams;
        Path dir = Files.createTempDirectory("loadgen-wrk");
        try {
            Path body = dir.resolve("body");
            Files.write(body, options.body());
            Path script = dir.resolve("request.lua");
            Files.writeString(script, script(options, body), StandardCharsets.UTF_8);
            long warmupErrors = 0;
            if (options.warmupSeconds() > 0) {
                warmupErrors = run(options, script, options.warmupSeconds(), progress).errors();
            }
            long alloc0 = AllocSample.take(options.allocMetrics());
            CpuSample cpu0 = CpuSample.take(options.cpuPids());
            long began = System.nanoTime();
            Summary s = run(options, script, options.durationSeconds(), progress);
            long ended = System.nanoTime();
            CpuSample cpu1 = CpuSample.take(options.cpuPids());
            long alloc1 = AllocSample.take(options.allocMetrics());
            // wrk's own duration is the window its requests were counted in; the CPU window is the process's life,
            // a few milliseconds longer (connecting 64 sockets, joining its thread): within a tick of /proc's clock.
            long window = s.durationMicros > 0 ? s.durationMicros * 1000 : ended - began;
            // The proxy's CPU as always; in place of this JVM's own, wrk's (its whole life, read as it printed).
            LoadResult result = new LoadResult(options, "wrk", window,
                    new CpuSample(cpu1.minus(cpu0).othersNanos(), s.wrkCpuNanos),
                    alloc0 < 0 || alloc1 < 0 ? -1 : alloc1 - alloc0);
            s.fill(result, eventsPerStream);
            result.warmupErrors = warmupErrors;
            return result;
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** One connection for one second through this program's own client, outside every window. */
    static LoadResult probe(LoadOptions o) throws InterruptedException {
        LoadOptions one = new LoadOptions(o.url(), o.address(), o.port(), o.method(), o.body(), o.headers(), 1, 1, 1.0,
                0, 0, o.timeoutMs(), null, null, true, List.of(), null, null, null, false, false);
        return LoadRun.execute(one, null);
    }

    /** The Lua script wrk runs: the request (method, headers, body read from a file) and a {@code done} that prints. */
    static String script(LoadOptions o, Path body) {
        StringBuilder s = new StringBuilder();
        s.append("-- written by loadgen --wrk for one run\n");
        s.append("wrk.method = ").append(lua(o.method())).append('\n');
        s.append("local f = assert(io.open(").append(lua(body.toString())).append(", \"rb\"))\n");
        s.append("wrk.body = f:read(\"*a\")\nf:close()\n");
        boolean hasType = false;
        for (String[] nv : o.headers()) {
            s.append("wrk.headers[").append(lua(nv[0])).append("] = ").append(lua(nv[1])).append('\n');
            hasType |= nv[0].equalsIgnoreCase("content-type");
        }
        if (!hasType && o.body().length > 0) {
            s.append("wrk.headers[\"Content-Type\"] = \"application/json\"\n");
        }
        s.append("""
                done = function(summary, latency, requests)
                  local e = summary.errors
                  io.write(string.format("mg-summary %d %d %d %d %d %d %d\\n", summary.duration, summary.requests,
                    e.connect, e.read, e.write, e.status, e.timeout))
                  io.write(string.format("mg-latency %d %d\\n", latency.min, latency.max))
                  for i = 1, QUANTILES do
                    io.write(string.format("mg-q %d\\n", latency:percentile((i - 0.5) * 100 / QUANTILES)))
                  end
                  -- Out now, then wait for the reader to close our input: it reads our CPU time while we still exist.
                  io.stdout:flush()
                  io.read()
                end
                """.replace("QUANTILES", Integer.toString(QUANTILES)));
        return s.toString();
    }

    /**
     * A Lua string literal of {@code v}: quotes and backslashes escaped, other bytes below 32 or above 126 written as
     * {@code \ddd}.
     */
    static String lua(String v) {
        StringBuilder b = new StringBuilder("\"");
        for (byte c : v.getBytes(StandardCharsets.UTF_8)) {
            int u = c & 0xff;
            if (u == '"' || u == '\\') {
                b.append('\\').append((char) u);
            } else if (u < 32 || u > 126) {
                b.append('\\').append(String.format(Locale.ROOT, "%03d", u));
            } else {
                b.append((char) u);
            }
        }
        return b.append('"').toString();
    }

    private static Summary run(LoadOptions o, Path script, double seconds, PrintStream progress)
            throws IOException, InterruptedException {
        List<String> cmd = List.of("wrk", "-t" + o.threads(), "-c" + o.connections(),
                "-d" + Math.max(1, Math.round(seconds)) + "s", "--timeout", Math.max(1, o.timeoutMs() / 1000) + "s",
                "-s", script.toString(), o.url().toString());
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("cannot run wrk (Debian's package wrk): " + e.getMessage(), e);
        }
        List<String> lines = new ArrayList<>();
        long wrkTicks = -1;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("mg-")) {
                    if (lines.isEmpty()) {
                        // Its run is over and its summary written; it waits on its input (the script's done) so that
                        // it is still there to be read (once it exits, this JVM reaps it at once): all but the exit.
                        wrkTicks = CpuSample.ticks(p.pid());
                        p.getOutputStream().close();
                    }
                    lines.add(line);
                } else if (progress != null) {
                    progress.println("wrk: " + line);
                }
            }
        } finally {
            p.getOutputStream().close(); // a wrk that never reached its summary does not wait on us
        }
        int status = p.waitFor();
        Summary s = Summary.parse(lines, wrkTicks < 0 ? -1 : wrkTicks * CpuSample.NANOS_PER_TICK);
        if (status != 0 || s == null) {
            throw new IllegalStateException("wrk exited with " + status + " and no result: " + cmd);
        }
        return s;
    }

    /** What a wrk run's {@code done} printed. Latencies in microseconds. */
    record Summary(long durationMicros, long requests, long connect, long read, long write, long status, long timeout,
                   long min, long max, long[] quantiles, long wrkCpuNanos) {

        static Summary parse(List<String> lines, long wrkCpuNanos) {
            long[] head = null;
            long[] lat = null;
            List<Long> q = new ArrayList<>();
            for (String line : lines) {
                String[] f = line.trim().split(" ");
                switch (f[0]) {
                    case "mg-summary" -> head = numbers(f);
                    case "mg-latency" -> lat = numbers(f);
                    case "mg-q" -> q.add(Long.parseLong(f[1]));
                    default -> { }
                }
            }
            if (head == null || head.length != 7 || lat == null || lat.length != 2) {
                return null;
            }
            return new Summary(head[0], head[1], head[2], head[3], head[4], head[5], head[6], lat[0], lat[1],
                    q.stream().mapToLong(Long::longValue).toArray(), wrkCpuNanos);
        }

        private static long[] numbers(String[] f) {
            long[] n = new long[f.length - 1];
            for (int i = 1; i < f.length; i++) {
                n[i - 1] = Long.parseLong(f[i]);
            }
            return n;
        }

        long errors() {
            return connect + read + write + status + timeout;
        }

        /**
         * Into a result: answers under status 400 as completed (wrk counts every answer as a request), the errors by
         * kind, the streams and their events (each answer one stream of the probe's events, when the probe saw
         * streams), and the latency histogram rebuilt from the quantiles: quantile i carries the requests between
         * the (i-1)-th and i-th thousandth, so the counts add up to the answers.
         */
        void fill(LoadResult r, double eventsPerStream) {
            long ok = Math.max(0, requests - status);
            r.completed = ok;
            if (eventsPerStream > 0) {
                r.streams = ok;
                r.streamEvents = Math.round(ok * eventsPerStream);
                r.events = r.streamEvents;
            }
            put(r, "connect", connect);
            put(r, "read", read);
            put(r, "write", write);
            put(r, "timeout", timeout);
            put(r, "status_over_399", status);
            if (quantiles.length == 0 || ok == 0) {
                return;
            }
            int n = quantiles.length;
            long[] counts = new long[n];
            for (int i = 1; i <= n; i++) {
                counts[i - 1] = ok * i / n - ok * (i - 1) / n;
            }
            // The extremes as wrk saw them: one request of the lowest quantile and one of the highest stand for them.
            if (counts[0] > 0 && counts[n - 1] > 0 && (n > 1 || counts[0] > 1)) {
                counts[0]--;
                counts[n - 1]--;
                r.latency.recordValue(Math.max(1, min));
                r.latency.recordValue(Math.max(1, max));
            }
            for (int i = 0; i < n; i++) {
                if (counts[i] > 0) {
                    r.latency.recordValueWithCount(Math.max(1, quantiles[i]), counts[i]);
                }
            }
        }

        private static void put(LoadResult r, String kind, long n) {
            if (n > 0) {
                r.errors.merge(kind, n, Long::sum);
            }
        }
    }
}
