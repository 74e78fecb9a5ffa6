package io.modelgateway.core.route;

import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.RetryConfig;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.AttemptHook;
import io.modelgateway.core.exchange.Exchange;
import io.modelgateway.core.exchange.UpstreamFailure;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.random.RandomGenerator;

/**
 * One request tried on several deployments, and fallback models, until an upstream begins an answer. Each
 * attempt is a plain single-upstream {@link Exchange} ({@code ProxyExchange}, {@code SimulatorExchange}) given
 * this object as its {@link AttemptHook}: a failure before the first byte reached the caller comes here first,
 * and when another attempt is worth it this takes over — the failed attempt ends silently (buffers released, its
 * connection drained back to the pool or closed) and the next one starts after its wait. Once an upstream's
 * answer has begun, nothing is ever retried: a stream cut half-way ends as it would without retries (GD-10),
 * because replaying it would send the caller a second beginning.
 *
 * <p>The plan, per failure:
 * <ul>
 *   <li>Retried: connect failure or timeout, the connection lost before the answer, an answer that broke HTTP
 *       before anything reached the caller (a malformed head, a 101), 408, 429, 500, 502, 503, 504 and 529. Any other status is the request's own fault (or, for 401/403, our credentials) and is answered
 *       as it is: trying elsewhere would not change a 400.</li>
 *   <li>Each model gets {@code retries.max + 1} attempts, then the requested model's {@code fallbacks} in
 *       order, each with its own budget; the fallbacks' fallbacks are not followed, so the total is bounded by
 *       the sum and no cycle can form. A fallback the request would not pass (e.g. a temperature on a model that
 *       takes none) is skipped.</li>
 *   <li>Within a model, the next deployment is one not yet tried, not cooling down, not the one that just failed
 *       (see {@link ModelRoute#select}). A deployment not yet tried is asked at once: its upstream told us nothing
 *       yet. A deployment asked again waits a backoff with full jitter — uniform in
 *       {@code [0, min(max_backoff_ms, backoff_ms * 2^retry)]} — and at least the upstream's {@code Retry-After}.
 *       A {@code Retry-After} longer than {@code max_backoff_ms} is not waited for: the model is left for its
 *       fallbacks, or the failure is answered with that {@code Retry-After}, so the caller (whose SDK honours it)
 *       decides, rather than a gateway holding its connection.</li>
 *   <li>When nothing is left the last failure is answered by its own attempt, exactly as without retries (same
 *       status, body, style and {@code Retry-After}).</li>
 * </ul>
 *
 * <p>Waits are {@code schedule}d on the client's event loop, never slept. A client that leaves during a wait
 * cancels the timer and the unstarted attempt: no upstream request goes out after that, and the exchange ends as
 * cancelled. The request was admitted by the limits once and is settled once, when this ends; a retry is not a
 * new admission. The record keeps the deployment of the last attempt (the one that served, or failed last) and
 * counts the attempts.
 *
 * <p>Health: every attempt counts in flight on its deployment from its start to its end; a failure of the
 * deployment's own (connect, lost, 408, 429, 5xx, 401/403, or a stream lost mid-answer) counts towards its
 * cool-down, an answer that began closes it.
 *
 * <p>Threading: confined to the client channel's event loop, like the attempts; only the
 * {@link DeploymentHealth} it updates is shared.
 *
 * <p>It is itself every attempt's {@code onDone} ({@link #accept}): one object for the request, no function per
 * request or attempt.
 */
final class RetryingExchange implements Exchange, AttemptHook, Consumer<Outcome> {
    private static final Logger LOG = Logger.getLogger(RetryingExchange.class.getName());

    private final ChannelHandlerContext ctx;
    private final GatewayRequest request;
    private final AttemptFactory factory;
    private final Consumer<Outcome> onDone;
    /** The requested model; its fallbacks are the ones followed. */
    private final ModelRoute primary;
    private final RandomGenerator random;

    /** The model being tried, and its place: -1 for the requested model, else the fallback's index. */
    private ModelRoute route;
    private int fallback = -1;
    /** Attempts made on {@link #route} so far, and which of its deployments they went to. */
    private int attemptsOnModel;
    private long tried;
    /** Retries made so far by this request: the exponent of the backoff. */
    private int retries;

    /** The current attempt: started, or built and waiting for {@link #timer}. */
    private Exchange attempt;
    private int index;
    /** The attempt is its deployment's half-open probe and has not reported yet. */
    private boolean probe;
    /** The attempt counts in flight on its deployment. */
    private boolean started;
    /** The attempt's upstream began a successful answer. */
    private boolean answered;
    private ScheduledFuture<?> timer;
    private boolean done;

    RetryingExchange(ChannelHandlerContext ctx, GatewayRequest request, ModelRoute primary, AttemptFactory factory,
            Consumer<Outcome> onDone) {
        this(ctx, request, primary, factory, onDone, ThreadLocalRandom.current());
    }

    RetryingExchange(ChannelHandlerContext ctx, GatewayRequest request, ModelRoute primary, AttemptFactory factory,
            Consumer<Outcome> onDone, RandomGenerator random) {
        this.ctx = ctx;
        this.request = request;
        this.primary = primary;
        this.factory = factory;
        this.onDone = onDone;
        this.random = random;
        this.route = primary;
    }

    /**
     * Chooses and builds the first attempt, before {@link #start}. A request that cannot be expressed for the chosen
     * deployment is refused as it would be without retries: the exception goes to the handler, which answers it.
     */
    void prepare() throws TranslationException {
        int pick = route.select(System.nanoTime(), 0, -1, random);
        index = pick & ModelRoute.INDEX;
        probe = (pick & ModelRoute.PROBE) != 0;
        try {
            attempt = factory.attempt(ctx, request, route.model(), route.deployment(index), this, this);
        } catch (TranslationException | RuntimeException e) {
            releaseProbe();
            throw e;
        }
    }

    @Override
    public void start() {
        begin();
    }

    private void begin() {
        DeploymentConfig d = route.deployment(index);
        ExchangeRecord record = request.record();
        record.deployment(d);
        record.newAttempt();
        if (request.trace() != null) {
            request.trace().attemptStarted(d);
        }
        attemptsOnModel++;
        tried |= 1L << index;
        route.health(index).started();
        started = true;
        answered = false;
        attempt.start();
    }

    /** The wait before the next attempt is over. */
    private void fire() {
        timer = null;
        if (done || !ctx.channel().isActive()) {
            return; // a client gone but not yet reported: its channelInactive cancels us next
        }
        try {
            begin();
        } catch (RuntimeException e) {
            // Nothing can be answered reliably from here; closing the client runs cancel() through the handler.
            LOG.log(Level.WARNING, "request " + request.requestId() + ": a retry failed to start", e);
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ the attempts' hook

    @Override
    public boolean onFailureBeforeHead(UpstreamFailure failure) {
        long now = System.nanoTime();
        DeploymentHealth failed = route.health(index);
        if (deploymentFault(failure)) {
            failed.failed(probe, now, route.cooldown(index));
        } else {
            failed.succeeded(); // it answered; the request was wrong
        }
        probe = false;
        answered = false; // whatever began did not reach the caller
        if (done || !retryable(failure)) {
            return false;
        }
        String provider = route.deployment(index).provider().name();
        boolean next = planNext(failure, now, failed);
        if (next) {
            String reason = reason(failure);
            request.record().retriedFailure(provider, reason);
            if (request.trace() != null) {
                request.trace().attemptFailed(reason);
            }
        }
        return next;
    }

    /** The {@code reason} label of a failure in {@code gateway_upstream_retried_failures_total}. */
    static String reason(UpstreamFailure f) {
        return switch (f.kind()) {
            case CONNECT -> "connect";
            case CONNECT_TIMEOUT -> "connect_timeout";
            case LOST -> "lost";
            case FIRST_BYTE_TIMEOUT -> "first_byte_timeout";
            case PROTOCOL -> "protocol_error";
            case STATUS -> Integer.toString(f.status());
        };
    }

    @Override
    public void onAnswerStarted() {
        answered = true;
        route.health(index).succeeded();
        probe = false;
    }

    /**
     * Finds and builds the next attempt; on success the failed attempt is over (taken over) and the next one is
     * scheduled. Works on locals until it commits, so a false return leaves the failed attempt as it was.
     */
    private boolean planNext(UpstreamFailure failure, long now, DeploymentHealth failed) {
        ModelRoute r = route;
        int fb = fallback;
        boolean fresh = false;
        while (r != null) {
            RetryConfig rc = r.retries();
            int left = rc.max() + 1 - (fresh ? 0 : attemptsOnModel);
            if (left > 0 && (!fresh || factory.accepts(request, r.model()))) {
                long triedHere = fresh ? 0 : tried;
                int pick = r.select(now, triedHere, fresh ? -1 : index, random);
                int i = pick & ModelRoute.INDEX;
                boolean p = (pick & ModelRoute.PROBE) != 0;
                boolean again = r.health(i) == failed || (triedHere & (1L << i)) != 0;
                long waitMs = 0;
                boolean go = true;
                if (again) {
                    long retryAfter = failure.retryAfterMillis();
                    if (retryAfter > rc.maxBackoffMs()) {
                        go = false; // too long to hold the caller: leave this model
                    } else {
                        waitMs = Math.max(retryAfter, backoff(rc, retries, random));
                    }
                }
                if (go) {
                    Exchange next = build(r, i);
                    if (next != null) {
                        commit(r, fb, fresh, i, p, next, waitMs);
                        return true;
                    }
                }
                if (p) {
                    r.health(i).releaseProbe();
                }
            }
            fb++;
            r = fb < primary.fallbacks().length ? primary.fallbacks()[fb] : null;
            fresh = true;
        }
        return false;
    }

    /** The next attempt, or null when the request cannot be expressed for that deployment (the model is left). */
    private Exchange build(ModelRoute r, int i) {
        try {
            return factory.attempt(ctx, request, r.model(), r.deployment(i), this, this);
        } catch (TranslationException e) {
            LOG.log(Level.FINE, "request " + request.requestId() + ": cannot go to " + r.deployment(i), e);
            return null;
        }
    }

    private void commit(ModelRoute r, int fb, boolean fresh, int i, boolean p, Exchange next, long waitMs) {
        if (started) {
            route.health(index).ended(); // the failed attempt is over
            started = false;
        }
        if (fresh) {
            attemptsOnModel = 0;
            tried = 0;
        }
        route = r;
        fallback = fb;
        index = i;
        probe = p;
        attempt = next;
        retries++;
        // Never started from inside the failed attempt's call stack: it finishes its own cleanup first.
        timer = ctx.executor().schedule(this::fire, waitMs, TimeUnit.MILLISECONDS);
    }

    /** An attempt's {@code onDone}: it ended; see {@link #attemptEnded}. */
    @Override
    public void accept(Outcome outcome) {
        attemptEnded(outcome);
    }

    /** The current attempt ended (answered, failed as answered, or cancelled): so does the request. */
    private void attemptEnded(Outcome outcome) {
        if (done) {
            return;
        }
        done = true;
        DeploymentHealth h = route.health(index);
        if (started) {
            h.ended();
            started = false;
        }
        if (answered && outcome == Outcome.UPSTREAM_ERROR) {
            h.failed(false, System.nanoTime(), route.cooldown(index)); // lost mid-answer
        }
        releaseProbe();
        attempt = null;
        onDone.accept(outcome);
    }

    private void releaseProbe() {
        if (probe) {
            probe = false;
            route.health(index).releaseProbe();
        }
    }

    // ------------------------------------------------------------------ client side

    @Override
    public void clientWritabilityChanged(boolean writable) {
        if (attempt != null && started) {
            attempt.clientWritabilityChanged(writable);
        }
    }

    @Override
    public void clientFailed(Throwable cause) {
        if (attempt != null && started) {
            attempt.clientFailed(cause);
        }
    }

    /** The client left: a wait is cancelled with its unstarted attempt, a running attempt is cancelled. */
    @Override
    public void cancel() {
        if (done) {
            return;
        }
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        Exchange a = attempt;
        if (a != null) {
            a.cancel(); // ends through attemptEnded(CANCELLED)
        }
    }

    // ------------------------------------------------------------------ policy

    /** Worth another attempt: the upstream, not the request, failed. */
    static boolean retryable(UpstreamFailure f) {
        if (f.kind() != UpstreamFailure.Kind.STATUS) {
            return true;
        }
        return switch (f.status()) {
            case 408, 429, 500, 502, 503, 504, 529 -> true;
            default -> false;
        };
    }

    /**
     * Counts against the deployment's health: everything retryable, any other 5xx, and 401/403 (the upstream
     * refused our provider credentials — the caller's request is fine, the deployment is not).
     */
    static boolean deploymentFault(UpstreamFailure f) {
        if (f.kind() != UpstreamFailure.Kind.STATUS) {
            return true;
        }
        int s = f.status();
        return s == 401 || s == 403 || s == 408 || s == 429 || s >= 500;
    }

    /** Full jitter: uniform in {@code [0, min(max, base * 2^retry)]} milliseconds. */
    static long backoff(RetryConfig rc, int retry, RandomGenerator random) {
        long cap = rc.backoffMs() << Math.min(retry, 30);
        cap = cap <= 0 ? rc.maxBackoffMs() : Math.min(rc.maxBackoffMs(), cap);
        return random.nextLong(cap + 1);
    }
}
