package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.ExchangeObserver;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The dashboard's source: an {@link ExchangeObserver} that keeps, per <em>series</em> — all traffic, each model,
 * each key name, each provider — cumulative counts of requests, errors, refusals, tokens and cost, and histograms
 * of latency and time to first token ({@link LatencyBuckets}). {@link LiveHistory} reads them once a second and
 * turns the differences into the page's per-second history.
 *
 * <p><b>Cost on the event loops.</b> {@link #ended} runs at the end of every exchange, on every event loop at once.
 * Each thread writes only its own shard (found through a {@link ThreadLocal}), so there is no lock, no CAS and no
 * shared cache line: a count is the owner's plain read and an opaque write (a plain store on x86, but one the JIT
 * may not drop or tear, so the reader sees every count within its next read). Up to four series are updated with
 * about eight such writes each; the series are found by three map reads. Nothing is allocated once a thread and a
 * name have been seen. Measured on this project's 2-core machine while other builds ran (JDK 17, one thread,
 * records of 4 models × 8 keys × 2 providers, half of them streams): {@code started} + {@code ended} ≈ 60–70 ns.
 *
 * <p><b>Memory.</b> Bounded whatever the traffic: at most {@value #MAX_NAMES} names per dimension get a series of
 * their own, the rest share one series called {@value #OTHER}; a thread holds a {@value #WIDTH}-long array for each
 * series it has written (1.6 KB), so at most {@code threads × }{@value #MAX_SERIES}{@code  × 1.6 KB}. Names come from
 * the config (configured model, key and provider names), so in practice far fewer. A name dropped by a reload
 * keeps its series (its counts must not vanish from a running total).
 *
 * <p><b>Failures.</b> Upstream failures (an exchange that ended on one, or an attempt retried past) also go into a
 * small ring of the last {@value #RECENT_FAILURES}, allocated only when they happen.
 */
public final class LiveStats implements ExchangeObserver {
    /** Names per dimension with a series of their own. */
    static final int MAX_NAMES = 16;
    /** The series that the names past {@link #MAX_NAMES} share. */
    static final String OTHER = "(other)";
    /** All traffic, then per dimension the names and the overflow series. */
    static final int MAX_SERIES = 1 + 3 * (MAX_NAMES + 1);
    /** The series of all traffic. */
    static final int TOTAL = 0;

    // The layout of one series' counters.
    static final int REQUESTS = 0;
    /** Exchanges that ended on an upstream failure or with a 5xx. */
    static final int ERRORS = 1;
    /** Exchanges answered 4xx (the caller's mistake, or a limit). */
    static final int REFUSED = 2;
    static final int INPUT_TOKENS = 3;
    static final int OUTPUT_TOKENS = 4;
    /** A double's bits: the sum of {@link ExchangeRecord#costUsd()}. */
    static final int COST = 5;
    static final int LATENCY = 6;
    static final int TTFT = LATENCY + LatencyBuckets.COUNT;
    static final int WIDTH = TTFT + LatencyBuckets.COUNT;

    static final int RECENT_FAILURES = 32;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    /** The dimensions a series may belong to, with the label the page shows. */
    public enum Dimension {
        MODEL("model"), KEY("key"), PROVIDER("provider");

        private final String label;

        Dimension(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One series: all traffic ({@code dimension} null) or one name of a dimension. */
    public record Series(int id, Dimension dimension, String name) {
        /** {@code total}, or {@code model:NAME}: how the page names a series. */
        public String selector() {
            return dimension == null ? "total" : dimension.label() + ":" + name;
        }
    }

    /** An upstream failure: when, which provider and model, and why (a status, or what happened). */
    public record Failure(long epochMillis, String provider, String model, String reason, boolean retried) {
    }

    private final ConcurrentHashMap<String, Integer>[] ids;
    private final AtomicInteger[] named = new AtomicInteger[Dimension.values().length];
    private final int[] otherIds = new int[Dimension.values().length];
    private final AtomicReferenceArray<Series> series = new AtomicReferenceArray<>(MAX_SERIES);
    private final AtomicInteger seriesCount = new AtomicInteger();

    private final CopyOnWriteArrayList<Shard> shards = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Shard> shard = ThreadLocal.withInitial(this::newShard);

    private final AtomicReferenceArray<Failure> failures = new AtomicReferenceArray<>(RECENT_FAILURES);
    private final AtomicLong failureCount = new AtomicLong();

    @SuppressWarnings("unchecked")
    public LiveStats() {
        ids = new ConcurrentHashMap[Dimension.values().length];
        newSeries(null, "all");
        for (Dimension d : Dimension.values()) {
            ids[d.ordinal()] = new ConcurrentHashMap<>();
            named[d.ordinal()] = new AtomicInteger();
            otherIds[d.ordinal()] = -1;
        }
    }

    /** One thread's counters: written by that thread only, read by {@link #read} from any. */
    private static final class Shard {
        final AtomicReferenceArray<long[]> series = new AtomicReferenceArray<>(MAX_SERIES);
        /** Exchanges started and ended by this thread. */
        final long[] flow = new long[2];

        long[] counters(int id) {
            long[] a = series.getPlain(id);
            if (a == null) {
                a = new long[WIDTH];
                series.set(id, a); // a volatile write publishes the zeroed array
            }
            return a;
        }
    }

    private Shard newShard() {
        Shard s = new Shard();
        shards.add(s);
        return s;
    }

    @Override
    public void started(ExchangeRecord record) {
        long[] flow = shard.get().flow;
        LONGS.setOpaque(flow, 0, flow[0] + 1);
    }

    @Override
    public void ended(ExchangeRecord record) {
        Shard s = shard.get();
        int status = record.status();
        Outcome outcome = record.outcome();
        int kind = outcome == Outcome.UPSTREAM_ERROR || status >= 500 ? ERRORS : status >= 400 ? REFUSED : -1;
        int latency = LATENCY + LatencyBuckets.index(record.durationNanos());
        long firstByte = record.firstByteLatencyNanos();
        int ttft = record.stream() && firstByte >= 0 ? TTFT + LatencyBuckets.index(firstByte) : -1;
        long in = Math.max(0, record.inputTokens());
        long out = Math.max(0, record.outputTokens());
        double cost = record.costUsd();

        count(s.counters(TOTAL), kind, latency, ttft, in, out, cost);
        String model = record.model();
        if (model != null) {
            count(s.counters(id(Dimension.MODEL, model)), kind, latency, ttft, in, out, cost);
        }
        String key = record.keyName();
        if (key != null) {
            count(s.counters(id(Dimension.KEY, key)), kind, latency, ttft, in, out, cost);
        }
        String provider = record.provider();
        if (provider != null) {
            count(s.counters(id(Dimension.PROVIDER, provider)), kind, latency, ttft, in, out, cost);
        }
        LONGS.setOpaque(s.flow, 1, s.flow[1] + 1);

        // Rare: allocates, only when an upstream failed.
        List<String[]> retried = record.retriedFailures();
        for (int i = 0; i < retried.size(); i++) {
            failure(new Failure(System.currentTimeMillis(), retried.get(i)[0], model, retried.get(i)[1], true));
        }
        if (outcome == Outcome.UPSTREAM_ERROR) {
            String reason = status >= 400 ? Integer.toString(status) : status == 0 ? "no answer" : "mid-answer";
            failure(new Failure(System.currentTimeMillis(), provider == null ? "none" : provider, model, reason,
                    false));
        }
    }

    /** The owner thread adds to its own counters: a plain read, an opaque write. */
    private static void count(long[] a, int kind, int latency, int ttft, long in, long out, double cost) {
        LONGS.setOpaque(a, REQUESTS, a[REQUESTS] + 1);
        if (kind >= 0) {
            LONGS.setOpaque(a, kind, a[kind] + 1);
        }
        LONGS.setOpaque(a, latency, a[latency] + 1);
        if (ttft >= 0) {
            LONGS.setOpaque(a, ttft, a[ttft] + 1);
        }
        if (in != 0) {
            LONGS.setOpaque(a, INPUT_TOKENS, saturatingAdd(a[INPUT_TOKENS], in));
        }
        if (out != 0) {
            LONGS.setOpaque(a, OUTPUT_TOKENS, saturatingAdd(a[OUTPUT_TOKENS], out));
        }
        if (cost > 0 && Double.isFinite(cost)) {
            LONGS.setOpaque(a, COST, Double.doubleToRawLongBits(Double.longBitsToDouble(a[COST]) + cost));
        }
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return r < a ? Long.MAX_VALUE : r;
    }

    private void failure(Failure f) {
        long n = failureCount.getAndIncrement();
        failures.set((int) (n % RECENT_FAILURES), f);
    }

    /** The series id of {@code name} in {@code dimension}: its own while there is room, else the shared one. */
    private int id(Dimension dimension, String name) {
        Integer id = ids[dimension.ordinal()].get(name);
        return id != null ? id : newId(dimension, name);
    }

    private synchronized int newId(Dimension dimension, String name) {
        // Rare (the first exchange of a name), so a lock is fine here; it keeps the bound exact.
        ConcurrentHashMap<String, Integer> map = ids[dimension.ordinal()];
        Integer id = map.get(name);
        if (id != null) {
            return id;
        }
        if (named[dimension.ordinal()].get() < MAX_NAMES) {
            named[dimension.ordinal()].incrementAndGet();
            int n = newSeries(dimension, name);
            map.put(name, n);
            return n;
        }
        if (otherIds[dimension.ordinal()] < 0) {
            otherIds[dimension.ordinal()] = newSeries(dimension, OTHER);
        }
        return otherIds[dimension.ordinal()];
    }

    private int newSeries(Dimension dimension, String name) {
        int n = seriesCount.get();
        series.set(n, new Series(n, dimension, name));
        seriesCount.set(n + 1); // after the entry, so a reader that sees the count sees the series
        return n;
    }

    // ---- read side (any thread; the dashboard's, once a second)

    /** Series made so far; ids are {@code 0 .. seriesCount() - 1}, 0 being all traffic. */
    int seriesCount() {
        return seriesCount.get();
    }

    Series series(int id) {
        return series.get(id);
    }

    /**
     * The cumulative counters of series {@code id}, summed over the threads, into {@code into} ({@link #WIDTH}
     * longs; {@link #COST} as a double's bits).
     */
    void read(int id, long[] into) {
        java.util.Arrays.fill(into, 0);
        double cost = 0;
        for (Shard s : shards) {
            long[] a = s.series.get(id);
            if (a == null) {
                continue;
            }
            for (int i = 0; i < WIDTH; i++) {
                if (i == COST) {
                    cost += Double.longBitsToDouble((long) LONGS.getOpaque(a, i));
                } else {
                    into[i] += (long) LONGS.getOpaque(a, i);
                }
            }
        }
        into[COST] = Double.doubleToRawLongBits(cost);
    }

    /** Exchanges started and not yet ended. */
    public long inFlight() {
        long n = 0;
        for (Shard s : shards) {
            n += (long) LONGS.getOpaque(s.flow, 0) - (long) LONGS.getOpaque(s.flow, 1);
        }
        return Math.max(0, n);
    }

    /** The recent upstream failures, newest first (at most {@value #RECENT_FAILURES}). */
    List<Failure> recentFailures() {
        long n = failureCount.get();
        java.util.ArrayList<Failure> list = new java.util.ArrayList<>(RECENT_FAILURES);
        for (long i = n - 1; i >= 0 && i >= n - RECENT_FAILURES; i--) {
            Failure f = failures.get((int) (i % RECENT_FAILURES));
            if (f != null) {
                list.add(f);
            }
        }
        return list;
    }
}
