package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.ExchangeObserver;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.netty.util.internal.PlatformDependent;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One JSON line per API exchange, written off the event loops.
 *
 * <p>Why this shape: {@link #ended} runs on an event loop, which must never do I/O or wait. So it copies the
 * record's fields into an immutable entry (the record is mutable and confined to its loop; a copy is what
 * may cross threads) and offers it to a bounded lock-free multi-producer queue. When the queue is full, the
 * line is dropped and counted ({@link #dropped()}) instead of blocking the loop or growing without bound.
 * One daemon thread drains the queue in batches, formats each entry with jackson-core's {@link JsonGenerator}
 * (strings escaped by Jackson) and writes the batch with one flush. When the queue is empty it sleeps a few
 * milliseconds rather than being woken per line (a wake-up per line would cost the loop a syscall).
 *
 * <p>Fields, in order: {@code ts} (RFC 3339 UTC, milliseconds, the exchange's start), {@code request_id},
 * {@code endpoint}, {@code key} (the key's configured NAME; the record never carries a key value),
 * {@code model}, {@code provider}, {@code deployment}, {@code stream}, {@code status}, {@code outcome},
 * {@code input_tokens} (every input token), {@code output_tokens} (every output token), {@code cached_input_tokens}
 * and {@code cache_write_tokens} (parts of the input read from and written to the prompt cache),
 * {@code reasoning_tokens} (part of the output), {@code usage}, {@code cost_usd} (null when the deployment has no
 * price), {@code ttft_ms}, {@code gateway_ms} (the gateway's own time to the response head, as in
 * {@code Server-Timing}), {@code upstream_ms}, {@code duration_ms} (milliseconds with three decimals; the first three
 * null when unknown), {@code bytes_in}, {@code bytes_out}, {@code limit}. Missing strings are {@code null}.
 *
 * <p>{@link #close()} writes what is queued, stops the thread and closes a file target (never stdout/stderr).
 */
public final class AccessLog implements ExchangeObserver, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AccessLog.class.getName());

    /** Lines held while the writer is behind (an entry is about 120 bytes; the strings are shared). */
    public static final int DEFAULT_CAPACITY = 65536;
    /** Entries formatted per flush. */
    private static final int BATCH = 1024;
    /** How long the writer sleeps when the queue is empty. */
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final JsonFactory JSON = JsonFactory.builder().build();

    /** Null when the log is off. */
    private final Queue<Entry> queue;
    private final Writer out;
    private final boolean closeOut;
    private final Thread thread;
    private final LongAdder dropped = new LongAdder();
    private final LongAdder written = new LongAdder();
    private volatile boolean closed;

    /**
     * A log to {@code stdout}, {@code stderr}, {@code off} (nothing, no thread) or a file path (appended,
     * created when missing; its directory must exist).
     *
     * @throws UncheckedIOException when the file cannot be opened (at start, so the message is seen)
     */
    public static AccessLog open(String target) {
        return switch (target) {
            case "off" -> new AccessLog();
            // System.out/err (not the raw descriptors): their writes are synchronized, so a batch never
            // interleaves with another writer's bytes mid-line.
            case "stdout" -> new AccessLog(System.out, false, DEFAULT_CAPACITY);
            case "stderr" -> new AccessLog(System.err, false, DEFAULT_CAPACITY);
            default -> {
                try {
                    OutputStream file = Files.newOutputStream(Path.of(target), StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND, StandardOpenOption.WRITE);
                    yield new AccessLog(new BufferedOutputStream(file, 1 << 16), true, DEFAULT_CAPACITY);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot open the access log " + target + ": " + e, e);
                }
            }
        };
    }

    /** Writes to {@code out} as UTF-8; {@code out} is not closed by {@link #close()}. */
    public AccessLog(OutputStream out, int capacity) {
        this(out, false, capacity);
    }

    /** Writes to {@code out}; {@code out} is not closed by {@link #close()}. */
    public AccessLog(Writer out, int capacity) {
        this(out, false, capacity);
    }

    private AccessLog(OutputStream out, boolean closeOut, int capacity) {
        this(new OutputStreamWriter(out, StandardCharsets.UTF_8), closeOut, capacity);
    }

    private AccessLog(Writer out, boolean closeOut, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive");
        }
        this.out = out;
        this.closeOut = closeOut;
        // Netty's bounded MPSC array queue: offer is lock-free and allocates nothing (capacity rounds up
        // to a power of two).
        this.queue = PlatformDependent.newFixedMpscQueue(capacity);
        this.thread = new Thread(this::run, "gateway-access-log");
        thread.setDaemon(true);
        thread.start();
    }

    /** The {@code off} log. */
    private AccessLog() {
        this.queue = null;
        this.out = null;
        this.closeOut = false;
        this.thread = null;
    }

    public boolean enabled() {
        return queue != null;
    }

    /** Lines dropped so far: queue full, written after close, or lost to a write error. */
    public long dropped() {
        return dropped.sum();
    }

    /** Lines handed to the target so far. */
    public long written() {
        return written.sum();
    }

    @Override
    public void started(ExchangeRecord record) {
    }

    @Override
    public void ended(ExchangeRecord record) {
        if (queue == null) {
            return;
        }
        if (closed || !queue.offer(Entry.of(record))) {
            dropped.increment();
        }
    }

    /** Writes what is queued, then stops the writer thread. Safe to call more than once. */
    @Override
    public void close() {
        if (queue == null || closed) {
            return;
        }
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // An event loop that read closed == false just before close() may have offered after the writer's
        // last drain: count those lines rather than lose them silently.
        if (!thread.isAlive()) {
            while (queue.poll() != null) {
                dropped.increment();
            }
        }
    }

    // ---- the writer thread

    private void run() {
        JsonGenerator gen = newGenerator();
        boolean failing = false;
        while (true) {
            // Read the flag before draining, so nothing offered before close() is left behind.
            boolean last = closed;
            int n = 0;
            Entry e;
            try {
                while (n < BATCH && (e = queue.poll()) != null) {
                    n++;
                    write(gen, e);
                }
                if (n > 0) {
                    gen.flush();
                    written.add(n);
                    failing = false;
                }
            } catch (IOException | RuntimeException ex) {
                dropped.add(n);
                if (!failing) {
                    LOG.log(Level.WARNING, "access log write failed; dropping lines until it recovers", ex);
                    failing = true;
                }
                // The generator may hold half a line: abandon it (closing would flush the half) for a fresh one.
                gen = newGenerator();
            }
            if (n == 0) {
                if (last) {
                    break;
                }
                LockSupport.parkNanos(this, IDLE_PARK_NANOS);
            }
        }
        try {
            gen.close();
            if (closeOut) {
                out.close();
            } else {
                out.flush();
            }
        } catch (IOException ex) {
            LOG.log(Level.WARNING, "access log close failed", ex);
        }
    }

    private JsonGenerator newGenerator() {
        try {
            JsonGenerator gen = JSON.createGenerator(out);
            // Lines are separated by our own '\n', not Jackson's root separator (a space); closing the
            // generator neither closes the target nor completes a half-written line.
            gen.setRootValueSeparator(null);
            gen.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            gen.disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT);
            return gen;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(JsonGenerator g, Entry e) throws IOException {
        g.writeStartObject();
        g.writeStringField("ts", TS.format(Instant.ofEpochMilli(e.startEpochMillis)));
        g.writeStringField("request_id", e.requestId);
        g.writeStringField("endpoint", e.endpoint);
        g.writeStringField("key", e.key);
        g.writeStringField("model", e.model);
        g.writeStringField("provider", e.provider);
        g.writeStringField("deployment", e.deployment);
        g.writeBooleanField("stream", e.stream);
        g.writeNumberField("status", e.status);
        g.writeStringField("outcome", e.outcome);
        g.writeNumberField("input_tokens", e.inputTokens);
        g.writeNumberField("output_tokens", e.outputTokens);
        g.writeNumberField("cached_input_tokens", e.cachedInputTokens);
        g.writeNumberField("cache_write_tokens", e.cacheWriteTokens);
        g.writeNumberField("reasoning_tokens", e.reasoningTokens);
        g.writeStringField("usage", e.usage);
        g.writeFieldName("cost_usd");
        if (e.priced && e.costUsd >= 0 && e.costUsd < Double.POSITIVE_INFINITY) {
            g.writeNumber(usd(e.costUsd));
        } else {
            g.writeNull();
        }
        writeMillis(g, "ttft_ms", e.ttftNanos);
        writeMillis(g, "gateway_ms", e.gatewayNanos);
        writeMillis(g, "upstream_ms", e.upstreamNanos);
        g.writeFieldName("duration_ms");
        g.writeNumber(millis(e.durationNanos));
        g.writeNumberField("bytes_in", e.bytesIn);
        g.writeNumberField("bytes_out", e.bytesOut);
        g.writeStringField("limit", e.limit);
        g.writeEndObject();
        g.writeRaw('\n');
    }

    /** Null for a negative (unknown) latency. */
    private static void writeMillis(JsonGenerator g, String name, long nanos) throws IOException {
        g.writeFieldName(name);
        if (nanos < 0) {
            g.writeNull();
        } else {
            g.writeNumber(millis(nanos));
        }
    }

    /** US dollars with at most nine decimals (nano-dollars), plain notation, trailing zeros dropped. */
    static String usd(double v) {
        return io.modelgateway.core.exchange.Usd.format(v);
    }

    /** Nanoseconds as milliseconds with exactly three decimals ({@code 12.345}), without floating point. */
    static String millis(long nanos) {
        long micros = Math.abs(nanos / 1000);
        long whole = micros / 1000;
        int frac = (int) (micros % 1000);
        StringBuilder sb = new StringBuilder(24);
        if (nanos < 0 && micros != 0) {
            sb.append('-');
        }
        sb.append(whole).append('.');
        if (frac < 100) {
            sb.append('0');
        }
        if (frac < 10) {
            sb.append('0');
        }
        return sb.append(frac).toString();
    }

    /** The record's fields, copied on the event loop so the writer thread never reads the mutable record. */
    private record Entry(long startEpochMillis, String requestId, String endpoint, String key, String model,
            String provider, String deployment, boolean stream, int status, String outcome, long inputTokens,
            long outputTokens, long cachedInputTokens, long cacheWriteTokens, long reasoningTokens, String usage,
            boolean priced, double costUsd, long ttftNanos, long gatewayNanos, long upstreamNanos, long durationNanos,
            long bytesIn, long bytesOut, String limit) {

        static Entry of(ExchangeRecord r) {
            Outcome outcome = r.outcome();
            ExchangeRecord.UsageSource usage = r.usageSource();
            return new Entry(r.startEpochMillis(), r.requestId(), r.endpointLabel(), r.keyName(), r.model(),
                    r.provider(), r.deployment(), r.stream(), r.status(), outcome == null ? null : outcome.label(),
                    r.inputTokens(), r.outputTokens(), r.cachedInputTokens(), r.cacheWriteTokens(),
                    r.reasoningTokens(), usage == null ? null : usage.label(), r.priced(), r.costUsd(),
                    r.firstByteLatencyNanos(), r.gatewayLatencyNanos(), r.upstreamLatencyNanos(), r.durationNanos(),
                    r.bytesIn(), r.bytesOut(), r.limit());
        }
    }
}
