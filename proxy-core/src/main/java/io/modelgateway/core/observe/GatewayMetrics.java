package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.ExchangeObserver;

import io.modelgateway.codecs.Endpoint;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The gateway's Prometheus metrics, fed by the exchange records ({@link ExchangeObserver}) and read by
 * {@code GET /metrics} ({@link #scrape(OutputStream)}, see {@link MetricsResponder}).
 *
 * <p>Metrics (base unit seconds, Prometheus naming):
 * <pre>
 *   gateway_requests_total{endpoint,model,key,status,outcome}   counter
 *   gateway_request_duration_seconds{endpoint,model}            histogram, whole exchange
 *   gateway_time_to_first_token_seconds{endpoint,model}         histogram, streams that sent a body byte
 *   gateway_upstream_latency_seconds{provider}                  histogram, upstream request → response head
 *   gateway_upstream_errors_total{provider}                     counter, outcome upstream_error
 *   gateway_upstream_protocol_errors_total{provider,reason}     counter, an upstream answer broke a rule or limit
 *   gateway_memory_refusals_total{provider,reason}              counter, an exchange ended for want of memory
 *   gateway_tokens_total{direction,type,model,key}              counter, direction input|output; type
 *                                                                input|cached_input|cache_write (input),
 *                                                                output|reasoning (output): each token once
 *   gateway_cost_usd_total{model,key,provider}                  counter, priced exchanges' cost in US dollars
 *   gateway_limit_refusals_total{key,model,limit}               counter
 *   gateway_inflight_exchanges                                  gauge, started − ended
 *   gateway_upstream_connections                                gauge, from the supplier given
 *   gateway_access_log_dropped_total                            counter, when {@link #accessLogDrops} is set
 *   gateway_shared_state_up                                     gauge, when {@link #sharedState} is set
 *   gateway_shared_state_errors_total{reason}                   counter, reason timeout|connection|redis_error
 *   gateway_shared_state_fallbacks_total                        counter, limit checks the fallback decided
 *   gateway_shared_state_batched_total                          counter, limit checks a batch answered at once
 *   gateway_shared_state_check_seconds                          histogram, a limit check's Redis round trip
 *   gateway_event_loop_allocated_bytes_total                    counter, see {@link EventLoopAllocation}
 * </pre>
 * Label values: a missing key is {@code none}, a missing model {@code unknown}, a missing provider
 * {@code none}, no response head is status {@code 0}. Only configured model and key names (and the
 * gateway's own status codes and limit names) reach a record, so the number of series is bounded by the
 * config; a name dropped by a reload keeps its series (counters must not go backwards while the process
 * lives), a new one gets a series on first use.
 *
 * <p>Cost: {@link #ended} runs once per exchange on an event loop, from all loops at once. The client
 * library's {@code labelValues(...)} hashes the label list and probes its own map for every call (an
 * array and a list per call unless escape analysis removes them), and {@code ended} needs seven data
 * points. So the data points are cached here in a tree keyed by what the record already holds, with no
 * allocation and no lock once a combination has been seen: endpoint (array index) → model (map) → key
 * (map) → status × outcome (a small copy-on-write array, scanned). The first exchange of a new combination
 * takes the slow path once. The in-flight gauge is a {@link LongAdder} read at scrape time, not a
 * client-library gauge (whose {@code inc} is a CAS loop every loop would contend on). Measured on this
 * project's 2-core machine (JDK 17, single thread, records spread over 3,000 label combinations):
 * {@code started} + {@code ended} ≈ 100–250 ns and 0 bytes allocated per exchange, against ≈ 340–680 ns and
 * ≈ 610 bytes with a {@code labelValues(...)} call per data point. Two threads on the same series add ≈ 30 ns
 * (the histograms' striped counters).
 *
 * <p>Histograms are classic only (fixed buckets, no native-histogram bookkeeping) and nothing records
 * exemplars (no tracer lookups per observation).
 *
 * <p>Over 400 lines: every metric of the gateway is defined here, with its name, help text and labels, in one
 * place a reader of {@code /metrics} can check against; splitting them would scatter the one list.
 */
public final class GatewayMetrics implements ExchangeObserver {
    /** The content type of {@link #scrape(OutputStream)}'s output. */
    public static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    static final String NO_KEY = "none";
    static final String NO_MODEL = "unknown";
    static final String NO_PROVIDER = "none";

    /** Whole-exchange buckets: a cached refusal takes milliseconds, a long generation minutes. */
    static final double[] DURATION_BUCKETS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300};
    /** First-token and upstream-head buckets: tens of milliseconds to tens of seconds, finer in the middle. */
    static final double[] FIRST_BYTE_BUCKETS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60, 120};
    /** Shared-state check buckets: a Redis round trip on loopback takes tens of microseconds, past 50 ms it times out. */
    static final double[] CHECK_BUCKETS = {
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1};

    /**
     * Status × outcome pairs (and limits) cached per (endpoint, model, key); past this many, lookups go to the
     * library, so a surprise never grows the cache.
     */
    private static final int MAX_STATUS_PAIRS = 64;
    /** Distinct failures to render the exposition that are logged; a bound on what a broken metric can log. */
    static final int MAX_LOGGED_FAILURES = 32;
    private static final double NANOS_PER_SECOND = 1e9;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

    private final Counter requests;
    private final Histogram duration;
    private final Histogram firstToken;
    private final Histogram upstreamLatency;
    private final Counter upstreamErrors;
    private final Counter retriedFailures;
    private final Counter protocolErrors;
    private final Counter memoryRefusals;
    private final Counter tokens;
    private final Counter cost;
    private final Counter refusals;
    private final LongAdder inflight = new LongAdder();
    /** The distinct render failures {@link MetricsResponder} logged; at most {@link #MAX_LOGGED_FAILURES}. */
    private final Set<String> loggedScrapeFailures = ConcurrentHashMap.newKeySet();

    /** Indexed by {@link Endpoint#ordinal()}; the last slot is the model list (endpoint null). */
    private final EndpointSeries[] endpoints;
    private final ConcurrentHashMap<String, ProviderSeries> providers = new ConcurrentHashMap<>();

    /** Metrics without a connection gauge (tests, or no upstream pools). */
    public GatewayMetrics() {
        this(null);
    }

    /**
     * @param upstreamConnections read at every scrape (never on the hot path) for
     *        {@code gateway_upstream_connections}; it must be safe to call from any thread. Null leaves the
     *        gauge out.
     */
    public GatewayMetrics(LongSupplier upstreamConnections) {
        requests = Counter.builder()
                .name("gateway_requests_total")
                .help("API exchanges by endpoint, model, gateway key name, response status and outcome.")
                .labelNames("endpoint", "model", "key", "status", "outcome")
                .withoutExemplars()
                .register(registry);
        duration = Histogram.builder()
                .name("gateway_request_duration_seconds")
                .help("Time from the request to the end of the exchange.")
                .labelNames("endpoint", "model")
                .classicOnly()
                .classicUpperBounds(DURATION_BUCKETS)
                .withoutExemplars()
                .register(registry);
        firstToken = Histogram.builder()
                .name("gateway_time_to_first_token_seconds")
                .help("Streams only: time from the request to the first body byte sent to the client.")
                .labelNames("endpoint", "model")
                .classicOnly()
                .classicUpperBounds(FIRST_BYTE_BUCKETS)
                .withoutExemplars()
                .register(registry);
        upstreamLatency = Histogram.builder()
                .name("gateway_upstream_latency_seconds")
                .help("Time from sending the upstream request to the upstream's response head.")
                .labelNames("provider")
                .classicOnly()
                .classicUpperBounds(FIRST_BYTE_BUCKETS)
                .withoutExemplars()
                .register(registry);
        upstreamErrors = Counter.builder()
                .name("gateway_upstream_errors_total")
                .help("Exchanges that ended because the upstream failed (refused, lost, garbage, timed out).")
                .labelNames("provider")
                .withoutExemplars()
                .register(registry);
        retriedFailures = Counter.builder()
                .name("gateway_upstream_retried_failures_total")
                .help("Upstream attempts that failed before their answer began and were retried or fell back "
                        + "(the callers did not see them), by provider and reason: connect, connect_timeout, lost, "
                        + "first_byte_timeout, protocol_error or the upstream's status.")
                .labelNames("provider", "reason")
                .withoutExemplars()
                .register(registry);
        protocolErrors = Counter.builder()
                .name("gateway_upstream_protocol_errors_total")
                .help("Upstream answers the gateway cut off because they broke the protocol or a limit, by provider "
                        + "and reason: sse_event_too_large, error_body_too_large, answer_too_large, malformed_head, "
                        + "malformed_body or switching_protocols.")
                .labelNames("provider", "reason")
                .withoutExemplars()
                .register(registry);
        memoryRefusals = Counter.builder()
                .name("gateway_memory_refusals_total")
                .help("Exchanges ended for want of memory, by provider and reason: allocation_failed (a buffer could "
                        + "not be allocated) or collected_budget (upstream_limits.collected_budget_bytes was used up).")
                .labelNames("provider", "reason")
                .withoutExemplars()
                .register(registry);
        tokens = Counter.builder()
                .name("gateway_tokens_total")
                .help("Tokens by direction (input, output), type (input: uncached input, cached_input: read from the "
                        + "prompt cache, cache_write: written to it, output: output other than reasoning, reasoning), "
                        + "model and gateway key name. Each token is counted once: the types of a direction sum to it.")
                .labelNames("direction", "type", "model", "key")
                .withoutExemplars()
                .register(registry);
        cost = Counter.builder()
                .name("gateway_cost_usd_total")
                .help("Cost in US dollars of the exchanges whose deployment has a price, by model, gateway key name "
                        + "and provider.")
                .labelNames("model", "key", "provider")
                .withoutExemplars()
                .register(registry);
        refusals = Counter.builder()
                .name("gateway_limit_refusals_total")
                .help("Requests refused by a limit, by gateway key name, model and limit.")
                .labelNames("key", "model", "limit")
                .withoutExemplars()
                .register(registry);
        GaugeWithCallback.builder()
                .name("gateway_inflight_exchanges")
                .help("API exchanges started and not yet ended.")
                .callback(cb -> cb.call(inflight.sum()))
                .register(registry);
        if (upstreamConnections != null) {
            GaugeWithCallback.builder()
                    .name("gateway_upstream_connections")
                    .help("Open connections to upstreams (pooled idle and in use).")
                    .callback(cb -> cb.call(upstreamConnections.getAsLong()))
                    .register(registry);
        }
        Endpoint[] all = Endpoint.values();
        endpoints = new EndpointSeries[all.length + 1];
        for (Endpoint e : all) {
            endpoints[e.ordinal()] = new EndpointSeries(label(e));
        }
        endpoints[all.length] = new EndpointSeries(label(null));
    }

    /**
     * Adds {@code gateway_access_log_dropped_total}, read from {@code dropped} at scrape time (e.g.
     * {@code accessLog::dropped}). Call once, before serving.
     */
    public void accessLogDrops(LongSupplier dropped) {
        CounterWithCallback.builder()
                .name("gateway_access_log_dropped_total")
                .help("Access-log lines dropped because the writer fell behind (queue full) or failed.")
                .callback(cb -> cb.call(dropped.getAsLong()))
                .register(registry);
    }

    /**
     * Adds the metrics of the limits shared through Redis, read at scrape time from the suppliers (which must be
     * safe to call from any thread): {@code gateway_shared_state_up} (1 while limit checks go to Redis, 0 while the
     * fallback decides them), {@code gateway_shared_state_errors_total{reason}} (calls that got no reply within
     * the timeout, connections that failed or were lost, errors Redis answered),
     * {@code gateway_shared_state_fallbacks_total} and {@code gateway_shared_state_batched_total} (checks answered
     * at once from a batch the replica took: the README's Batches); and {@code gateway_shared_state_check_seconds},
     * the time from a limit check's call to Redis to its answer, fed by the returned recorder (nanoseconds; any
     * thread). Call once, when the config first has a redis block.
     */
    public LongConsumer sharedState(BooleanSupplier up, LongSupplier timeouts, LongSupplier connectionErrors,
            LongSupplier redisErrors, LongSupplier fallbacks, LongSupplier batched) {
        GaugeWithCallback.builder()
                .name("gateway_shared_state_up")
                .help("1 while rate-limit checks use the state shared through Redis, 0 while the fallback decides.")
                .callback(cb -> cb.call(up.getAsBoolean() ? 1 : 0))
                .register(registry);
        CounterWithCallback.builder()
                .name("gateway_shared_state_errors_total")
                .help("Failed calls to the shared rate-limit state, by reason: timeout (no reply within timeout_ms), "
                        + "connection (refused or lost), redis_error (an error Redis answered).")
                .labelNames("reason")
                .callback(cb -> {
                    cb.call(timeouts.getAsLong(), "timeout");
                    cb.call(connectionErrors.getAsLong(), "connection");
                    cb.call(redisErrors.getAsLong(), "redis_error");
                })
                .register(registry);
        CounterWithCallback.builder()
                .name("gateway_shared_state_fallbacks_total")
                .help("Rate-limit checks decided by the fallback because the shared state could not answer.")
                .callback(cb -> cb.call(fallbacks.getAsLong()))
                .register(registry);
        CounterWithCallback.builder()
                .name("gateway_shared_state_batched_total")
                .help("Rate-limit checks answered at once from a batch this replica took from the shared counts.")
                .callback(cb -> cb.call(batched.getAsLong()))
                .register(registry);
        Histogram checks = Histogram.builder()
                .name("gateway_shared_state_check_seconds")
                .help("Rate-limit checks answered by Redis: time from the call to its answer on the event loop.")
                .classicOnly()
                .classicUpperBounds(CHECK_BUCKETS)
                .withoutExemplars()
                .register(registry);
        return nanos -> checks.observe(nanos / 1e9);
    }

    /** The registry, for metrics other parts of the gateway own. */
    public PrometheusRegistry registry() {
        return registry;
    }

    @Override
    public void started(ExchangeRecord record) {
        inflight.increment();
    }

    @Override
    public void ended(ExchangeRecord record) {
        inflight.decrement();
        Endpoint endpoint = record.endpoint();
        EndpointSeries es = endpoints[endpoint == null ? endpoints.length - 1 : endpoint.ordinal()];
        String model = record.model();
        ModelSeries ms = es.model(model == null ? NO_MODEL : model);
        String keyName = record.keyName();
        KeySeries ks = ms.key(keyName == null ? NO_KEY : keyName);

        Outcome outcome = record.outcome();
        ks.requests(record.status(), outcome).inc();
        ms.duration.observe(record.durationNanos() / NANOS_PER_SECOND);
        long firstByte = record.firstByteLatencyNanos();
        if (record.stream() && firstByte >= 0) {
            ms.firstToken().observe(firstByte / NANOS_PER_SECOND);
        }
        // Tokens are added as doubles, on purpose: the client library keeps a long and a double sum per counter and
        // renders their total. The long one wraps negative past Long.MAX_VALUE (ten answers claiming 10^18 tokens
        // did it), and the library then refuses to render the counter at all, failing every scrape from then on. A
        // double sum cannot wrap: past 2^53 it only stops counting exactly, and it never goes down. Same cost.
        ks.tokens(TOKEN_INPUT, record.uncachedInputTokens());
        ks.tokens(TOKEN_CACHED_INPUT, record.cachedInputTokens());
        ks.tokens(TOKEN_CACHE_WRITE, record.cacheWriteTokens());
        ks.tokens(TOKEN_OUTPUT, record.nonReasoningOutputTokens());
        ks.tokens(TOKEN_REASONING, record.reasoningTokens());
        if (record.priced()) {
            double usd = record.costUsd();
            if (usd >= 0 && usd < Double.POSITIVE_INFINITY) {
                String provider = record.provider();
                ks.cost(provider == null ? NO_PROVIDER : provider).inc(usd);
            }
        }
        long upstream = record.upstreamLatencyNanos();
        if (upstream >= 0 || outcome == Outcome.UPSTREAM_ERROR) {
            String provider = record.provider();
            ProviderSeries ps = provider(provider == null ? NO_PROVIDER : provider);
            if (upstream >= 0) {
                ps.latency.observe(upstream / NANOS_PER_SECOND);
            }
            if (outcome == Outcome.UPSTREAM_ERROR) {
                ps.errors.inc();
            }
        }
        // Rare (only when an attempt failed and another one followed): the label lookup may allocate.
        java.util.List<String[]> failed = record.retriedFailures();
        for (int i = 0; i < failed.size(); i++) {
            retriedFailures.labelValues(failed.get(i)[0], failed.get(i)[1]).inc();
        }
        // Rarer still: an upstream that broke a rule, or memory that ran short.
        java.util.List<String[]> broken = record.protocolErrors();
        for (int i = 0; i < broken.size(); i++) {
            protocolErrors.labelValues(broken.get(i)[0], broken.get(i)[1]).inc();
        }
        java.util.List<String[]> refused = record.memoryRefusals();
        for (int i = 0; i < refused.size(); i++) {
            memoryRefusals.labelValues(refused.get(i)[0], refused.get(i)[1]).inc();
        }
        String limit = record.limit();
        if (limit != null) {
            // Cached too: a client hammering past its limit makes this the hottest path of all.
            ks.refusals(limit).inc();
        }
    }

    /**
     * Records that rendering failed with {@code signature} (see {@link MetricsResponder}); true the first time a
     * signature is seen, so a scrape flood on one failure logs it once. Bounded: past {@link #MAX_LOGGED_FAILURES}
     * distinct signatures nothing more is logged (the 500s go on).
     */
    boolean firstScrapeFailure(String signature) {
        if (loggedScrapeFailures.size() >= MAX_LOGGED_FAILURES) {
            return false;
        }
        return loggedScrapeFailures.add(signature);
    }

    /** Writes the Prometheus text exposition (format 0.0.4, {@link #CONTENT_TYPE}) of every metric. */
    public void scrape(OutputStream out) throws IOException {
        writer.write(out, registry.scrape());
    }

    /** The exposition as a string (tests, debugging). */
    public String scrapeText() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try {
            scrape(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private ProviderSeries provider(String provider) {
        ProviderSeries ps = providers.get(provider);
        return ps != null ? ps : providers.computeIfAbsent(provider, ProviderSeries::new);
    }

    private static String label(Endpoint endpoint) {
        // ExchangeRecord owns the mapping; a throwaway record asks it, once per endpoint at construction.
        return new ExchangeRecord(null, endpoint, 0, 0, 0).endpointLabel();
    }

    // ---- the cache of data points. Every level is immutable once built except for its maps / arrays,
    // which only grow and are safe to read from any thread without a lock.

    private final class EndpointSeries {
        final String endpointLabel;
        final ConcurrentHashMap<String, ModelSeries> models = new ConcurrentHashMap<>();

        EndpointSeries(String endpointLabel) {
            this.endpointLabel = endpointLabel;
        }

        ModelSeries model(String model) {
            // get first: computeIfAbsent may lock the bin even when the key is there.
            ModelSeries ms = models.get(model);
            return ms != null ? ms : models.computeIfAbsent(model, m -> new ModelSeries(this, m));
        }
    }

    private final class ModelSeries {
        final EndpointSeries endpoint;
        final String modelLabel;
        final DistributionDataPoint duration;
        /**
         * Made on the first stream, so endpoints and models that never stream show no empty histogram.
         * Volatile for safe publication; two loops racing to make it get the same data point from the library.
         */
        private volatile DistributionDataPoint firstToken;
        final ConcurrentHashMap<String, KeySeries> keys = new ConcurrentHashMap<>();

        ModelSeries(EndpointSeries endpoint, String modelLabel) {
            this.endpoint = endpoint;
            this.modelLabel = modelLabel;
            this.duration = GatewayMetrics.this.duration.labelValues(endpoint.endpointLabel, modelLabel);
        }

        DistributionDataPoint firstToken() {
            DistributionDataPoint ft = firstToken;
            if (ft == null) {
                ft = GatewayMetrics.this.firstToken.labelValues(endpoint.endpointLabel, modelLabel);
                firstToken = ft;
            }
            return ft;
        }

        KeySeries key(String key) {
            KeySeries ks = keys.get(key);
            return ks != null ? ks : keys.computeIfAbsent(key, k -> new KeySeries(this, k));
        }
    }

    /** One (status, outcome) pair's counter. */
    /** The {@code type} label of {@code gateway_tokens_total}, and the direction each type belongs to. */
    private static final String[] TOKEN_TYPES = {"input", "cached_input", "cache_write", "output", "reasoning"};
    private static final String[] TOKEN_DIRECTIONS = {"input", "input", "input", "output", "output"};
    private static final int TOKEN_INPUT = 0;
    private static final int TOKEN_CACHED_INPUT = 1;
    private static final int TOKEN_CACHE_WRITE = 2;
    private static final int TOKEN_OUTPUT = 3;
    private static final int TOKEN_REASONING = 4;

    private record StatusCounter(int status, Outcome outcome, CounterDataPoint counter) {
    }

    /** One limit's refusal counter. */
    private record LimitCounter(String limit, CounterDataPoint counter) {
    }

    /** One provider's cost counter. */
    private record ProviderCost(String provider, CounterDataPoint counter) {
    }

    private final class KeySeries {
        final ModelSeries model;
        final String keyLabel;
        /**
         * By token type ({@link #TOKEN_TYPES}); each made on first use (as {@link ModelSeries#firstToken()}), so
         * refusals and types an exchange never had add no zero series.
         */
        private final AtomicReferenceArray<CounterDataPoint> tokenSeries =
                new AtomicReferenceArray<>(TOKEN_TYPES.length);
        /** Copy-on-write, replaced by CAS; a handful of entries in practice (200, 429, 400, 502, …). */
        final AtomicReference<StatusCounter[]> byStatus = new AtomicReference<>(new StatusCounter[0]);
        /** Copy-on-write like {@link #byStatus}; one entry per configured limit that refused this key. */
        final AtomicReference<LimitCounter[]> byLimit = new AtomicReference<>(new LimitCounter[0]);
        /** Copy-on-write like {@link #byStatus}; one entry per provider that served this key a priced exchange. */
        final AtomicReference<ProviderCost[]> byProvider = new AtomicReference<>(new ProviderCost[0]);

        KeySeries(ModelSeries model, String keyLabel) {
            this.model = model;
            this.keyLabel = keyLabel;
        }

        /** Adds {@code n} tokens of one type; none when {@code n} is 0 (no series is made). */
        void tokens(int type, long n) {
            if (n <= 0) {
                return;
            }
            CounterDataPoint c = tokenSeries.get(type);
            if (c == null) {
                // labelValues gives the same point for the same labels: a race only looks it up twice.
                c = tokens.labelValues(TOKEN_DIRECTIONS[type], TOKEN_TYPES[type],
                        model.modelLabel, keyLabel);
                tokenSeries.set(type, c);
            }
            c.inc((double) n);
        }

        CounterDataPoint requests(int status, Outcome outcome) {
            StatusCounter[] current = byStatus.get();
            for (StatusCounter sc : current) {
                if (sc.status == status && sc.outcome == outcome) {
                    return sc.counter;
                }
            }
            return addRequests(status, outcome);
        }

        private CounterDataPoint addRequests(int status, Outcome outcome) {
            // The library deduplicates the data point itself, so a race here at worst caches it twice.
            String outcomeLabel = outcome == null ? "unknown" : outcome.label();
            CounterDataPoint counter = GatewayMetrics.this.requests.labelValues(model.endpoint.endpointLabel,
                    model.modelLabel, keyLabel, Integer.toString(status), outcomeLabel);
            StatusCounter entry = new StatusCounter(status, outcome, counter);
            while (true) {
                StatusCounter[] current = byStatus.get();
                if (current.length >= MAX_STATUS_PAIRS) {
                    return counter;
                }
                StatusCounter[] next = Arrays.copyOf(current, current.length + 1);
                next[current.length] = entry;
                if (byStatus.compareAndSet(current, next)) {
                    return counter;
                }
            }
        }

        CounterDataPoint cost(String provider) {
            ProviderCost[] current = byProvider.get();
            for (ProviderCost pc : current) {
                if (pc.provider.equals(provider)) {
                    return pc.counter;
                }
            }
            CounterDataPoint counter = GatewayMetrics.this.cost.labelValues(model.modelLabel, keyLabel, provider);
            ProviderCost entry = new ProviderCost(provider, counter);
            while (current.length < MAX_STATUS_PAIRS) {
                ProviderCost[] next = Arrays.copyOf(current, current.length + 1);
                next[current.length] = entry;
                if (byProvider.compareAndSet(current, next)) {
                    break;
                }
                current = byProvider.get();
            }
            return counter;
        }

        CounterDataPoint refusals(String limit) {
            LimitCounter[] current = byLimit.get();
            for (LimitCounter lc : current) {
                if (lc.limit.equals(limit)) {
                    return lc.counter;
                }
            }
            CounterDataPoint counter = GatewayMetrics.this.refusals.labelValues(keyLabel, model.modelLabel, limit);
            LimitCounter entry = new LimitCounter(limit, counter);
            while (current.length < MAX_STATUS_PAIRS) {
                LimitCounter[] next = Arrays.copyOf(current, current.length + 1);
                next[current.length] = entry;
                if (byLimit.compareAndSet(current, next)) {
                    break;
                }
                current = byLimit.get();
            }
            return counter;
        }
    }

    private final class ProviderSeries {
        final DistributionDataPoint latency;
        final CounterDataPoint errors;

        ProviderSeries(String provider) {
            latency = upstreamLatency.labelValues(provider);
            errors = upstreamErrors.labelValues(provider);
        }
    }
}
