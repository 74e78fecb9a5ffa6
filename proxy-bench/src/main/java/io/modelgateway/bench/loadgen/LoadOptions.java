package io.modelgateway.bench.loadgen;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The load generator's command line, parsed and checked. Immutable; shared by every event loop.
 *
 * <p>{@code rate} is 0 for a closed loop (each connection sends its next request when the previous
 * answer has ended) and requests per second for an open loop (requests on a fixed schedule, latency
 * counted from the scheduled send time).
 */
record LoadOptions(
        URI url,
        InetAddress address,
        int port,
        String method,
        byte[] body,
        List<String[]> headers,
        int connections,
        int threads,
        double durationSeconds,
        double warmupSeconds,
        double rate,
        long timeoutMs,
        Path json,
        String hgrmPrefix,
        boolean quiet,
        List<Long> cpuPids,
        String label,
        Path html,
        URI allocMetrics,
        boolean busyPoll,
        boolean wrk) {

    static final String USAGE = """
            usage: loadgen --url URL [--method POST] (--body FILE | --body-json JSON) [--header 'name: value']...
                           [--connections N] [--duration S] [--warmup S] [--rate R] [--timeout-ms MS]
                           [--threads N] [--json OUT.json] [--hgrm PREFIX] [--html OUT.html] [--cpu-pid PID]...
                           [--label TEXT] [--alloc-metrics URL] [--busy-poll] [--wrk] [--quiet]
              --url          http://HOST:PORT/path on a loopback address (127.0.0.0/8, ::1, localhost)
              --connections  keep-alive connections (default 16)
              --duration     measured seconds (default 10); --warmup seconds before it (default 2)
              --rate         open loop: requests per second in total, spread over the connections and
                             measured from their scheduled send time (coordinated-omission corrected);
                             without it, a closed loop: each connection sends again when its answer ended
              --timeout-ms   a request not answered in full by then is an error and its connection is
                             closed (default 30000)
              --threads      event loops (default: the cores this process may run on)
              --json         write every result to this file; --hgrm PREFIX writes PREFIX-latency.hgrm
                             (and -ttft.hgrm, -itl.hgrm when answers were streams); --html writes a report
                             that opens offline: the figures and the percentile curves of latency, time to
                             first token and inter-token gaps
              --alloc-metrics  a gateway's /metrics URL: report the bytes its event loops allocated
                             (gateway_event_loop_allocated_bytes_total) per request and per event, read
                             just before and just after the measured window
              --cpu-pid      also report the CPU time this process used during the measured window,
                             per completed request (repeat the option, or comma-separate, to sum processes)
              --busy-poll    the event loops poll for I/O without ever sleeping (epoll only): each takes a
                             whole core, and a server on the same machine no longer pays, in its own
                             system calls, for waking this process at every write it sends it (on loopback
                             the sender's core runs the wake-up); for runs that give this process cores of
                             its own
              --wrk          a closed loop made by wrk (Debian's wrk) instead of this program's client, which
                             costs about twice wrk's CPU per request: first one second on one connection
                             through this client checks the answers and counts a stream's events, then wrk
                             runs the warmup and the measured window (CPU and allocation read around it);
                             latency from 1,000 of wrk's quantiles, no time to first token""";

    /** Parses and validates; {@link IllegalArgumentException} carries a message for the user. */
    static LoadOptions parse(String[] args) {
        String url = null;
        String method = null;
        byte[] body = null;
        List<String[]> headers = new ArrayList<>();
        int connections = 16;
        int threads = Runtime.getRuntime().availableProcessors();
        double duration = 10;
        double warmup = 2;
        double rate = 0;
        long timeoutMs = 30_000;
        Path json = null;
        String hgrm = null;
        boolean quiet = false;
        List<Long> cpuPids = new ArrayList<>();
        String label = null;
        Path html = null;
        URI allocMetrics = null;
        boolean busyPoll = false;
        boolean wrk = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--quiet") || arg.equals("-q")) {
                quiet = true;
                continue;
            }
            if (arg.equals("--busy-poll")) {
                busyPoll = true;
                continue;
            }
            if (arg.equals("--wrk")) {
                wrk = true;
                continue;
            }
            if (arg.equals("--help") || arg.equals("-h")) {
                throw new HelpRequested();
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(arg + " needs a value");
            }
            String v = args[++i];
            switch (arg) {
                case "--url" -> url = v;
                case "--method" -> method = v.toUpperCase(Locale.ROOT);
                case "--body" -> body = readFile(v);
                case "--body-json" -> body = v.getBytes(StandardCharsets.UTF_8);
                case "--header", "-H" -> headers.add(header(v));
                case "--connections", "-c" -> connections = positiveInt(arg, v);
                case "--threads" -> threads = positiveInt(arg, v);
                case "--duration", "-d" -> duration = positiveSeconds(arg, v, false);
                case "--warmup" -> warmup = positiveSeconds(arg, v, true);
                case "--rate", "-R" -> rate = positiveSeconds(arg, v, false);
                case "--timeout-ms" -> timeoutMs = positiveInt(arg, v);
                case "--json" -> json = Path.of(v);
                case "--hgrm" -> hgrm = v;
                case "--label" -> label = v;
                case "--html" -> html = Path.of(v);
                case "--alloc-metrics" -> allocMetrics = URI.create(v);
                case "--cpu-pid" -> {
                    for (String p : v.split(",")) {
                        if (!p.isBlank()) {
                            cpuPids.add(Long.parseLong(p.trim()));
                        }
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        if (url == null) {
            throw new IllegalArgumentException("--url is required");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("--url: " + e.getMessage());
        }
        if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException("--url must be http://HOST[:PORT]/path, got " + url);
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(uri.getHost());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--url: unknown host " + uri.getHost());
        }
        // A load generator aimed at someone else's server is an attack; this one only measures local processes.
        if (!address.isLoopbackAddress()) {
            throw new IllegalArgumentException("--url must name a loopback address (127.0.0.0/8, ::1, localhost); "
                    + uri.getHost() + " is " + address.getHostAddress());
        }
        if (method == null) {
            method = body == null ? "GET" : "POST";
        }
        if (wrk && rate > 0) {
            throw new IllegalArgumentException("--wrk makes a closed loop only: drop --rate or --wrk");
        }
        if (threads > connections) {
            threads = connections;
        }
        int port = uri.getPort() < 0 ? 80 : uri.getPort();
        return new LoadOptions(uri, address, port, method, body == null ? new byte[0] : body, List.copyOf(headers),
                connections, threads, duration, warmup, rate, timeoutMs, json, hgrm, quiet, List.copyOf(cpuPids),
                label, html, allocMetrics, busyPoll, wrk);
    }

    boolean openLoop() {
        return rate > 0;
    }

    /** Path and query as sent on the request line. */
    String requestTarget() {
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        return url.getRawQuery() == null ? path : path + "?" + url.getRawQuery();
    }

    /** The Host header: as written in the URL, with the port when one was given. */
    String hostHeader() {
        String host = url.getHost();
        return uriHasPort() ? host + ":" + port : host;
    }

    private boolean uriHasPort() {
        return url.getPort() >= 0;
    }

    private static String[] header(String v) {
        int colon = v.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--header needs 'name: value', got " + v);
        }
        return new String[] {v.substring(0, colon).trim(), v.substring(colon + 1).trim()};
    }

    private static byte[] readFile(String file) {
        try {
            return Files.readAllBytes(Path.of(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("--body: cannot read " + file + ": " + e.getMessage());
        }
    }

    private static int positiveInt(String arg, String v) {
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(arg + " needs a whole number, got " + v);
        }
        if (n <= 0) {
            throw new IllegalArgumentException(arg + " must be at least 1");
        }
        return n;
    }

    private static double positiveSeconds(String arg, String v, boolean zeroAllowed) {
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(arg + " needs a number, got " + v);
        }
        if (!(d > 0 || (zeroAllowed && d == 0)) || Double.isInfinite(d)) {
            throw new IllegalArgumentException(arg + " must be " + (zeroAllowed ? "0 or more" : "more than 0"));
        }
        return d;
    }

    /** {@code --help}: not an error, but parsing stops. */
    static final class HelpRequested extends IllegalArgumentException {
        HelpRequested() {
            super("help");
        }
    }
}
