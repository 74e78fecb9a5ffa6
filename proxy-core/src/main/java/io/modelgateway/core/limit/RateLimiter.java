package io.modelgateway.core.limit;

import io.modelgateway.core.exchange.Admission;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Admission control for every API request (issue: keys, limits and accounting): runs after authentication and
 * before routing, and its {@link Admission} either answers the request (429) or travels with the exchange
 * until it settles.
 *
 * <p>Scopes checked, each only when it has limits: the key ({@link KeyConfig#limits()}), the key on this model
 * ({@link KeyConfig#limitsFor(String)}), and the model across keys ({@link ModelConfig#limits()}). State lives
 * in Caffeine caches keyed by names (key name, model name), not by config objects, so it survives a config
 * reload and a reload that changes a limit applies it to the state already there (3 requests used under a
 * new limit of 2 → refused).
 *
 * <p>Within a scope the limits are checked in the order requests per minute, tokens per minute, concurrent
 * requests, daily tokens; scopes in the order key, key on model, model. The first limit that refuses decides
 * the 429 and everything reserved before it is given back.
 *
 * <p>Thread safety: called on event loops, any of them, concurrently; the counters are atomic, each bucket takes
 * its monitor for a few arithmetic operations (see {@link TokenBucket}), nothing waits for anything else.
 */
public final class RateLimiter {
    /**
     * How many scopes' usage is kept. A scope is a key, a model, or a key on a model, all names from the config,
     * so the scopes in use are bounded by the config; the bound is there for the entries that reloads leave
     * behind (renamed keys), which are the least used and go first. Far above any sane config: evicting a scope
     * in use would forget its usage (one burst over the limit), never block.
     *
     * <p>Size, not idle time: an idle-time policy makes every lookup read the clock and reorder the entry, and
     * {@code LimitCheckBenchmark} measured admit + settle at about 270 ns with {@code expireAfterAccess} against
     * 95 to 120 ns with this bound (2-core VM, JDK 17).
     */
    static final long MAX_SCOPES = 100_000;
    /** A concurrency refusal cannot know when a slot frees; a second is what the SDKs would wait anyway. */
    static final long CONCURRENCY_RETRY_MILLIS = 1000;

    static final String REQUESTS_PER_MINUTE = "requests_per_minute";
    static final String TOKENS_PER_MINUTE = "tokens_per_minute";
    static final String CONCURRENT_REQUESTS = "concurrent_requests";
    static final String DAILY_TOKENS = "daily_tokens";

    // Non-capturing, hence allocated once: the cache's compute path takes them on every miss.
    private static final Function<Scope, ScopeState> NEW_STATE = s -> new ScopeState();
    private static final Function<Scope, AtomicInteger> NEW_COUNTER = s -> new AtomicInteger();

    private final LongSupplier nanoTime;
    private final LongSupplier epochMillis;
    /** Per-minute buckets and daily usage by scope, at most {@link #MAX_SCOPES}. */
    private final Cache<Scope, ScopeState> usage;
    /**
     * Exchanges in flight by scope. Never expires: an exchange may outlive any idle period (a long stream with
     * no other request on its key), and a counter dropped while in use would reset to 0 and over-admit. The
     * entries are bounded by the names in the config, one small counter each.
     */
    private final Cache<Scope, AtomicInteger> inFlight;

    public RateLimiter() {
        this(System::nanoTime, System::currentTimeMillis);
    }

    /**
     * @param nanoTime    the monotonic clock of the per-minute buckets
     * @param epochMillis the wall clock of the daily budgets (UTC days) and of the Anthropic reset instants
     */
    public RateLimiter(LongSupplier nanoTime, LongSupplier epochMillis) {
        this.nanoTime = nanoTime;
        this.epochMillis = epochMillis;
        this.usage = Caffeine.newBuilder().maximumSize(MAX_SCOPES).build();
        this.inFlight = Caffeine.newBuilder().build();
    }

    /**
     * Checks every limit that applies and, if all admit, reserves: one request, {@code estimatedTokens}
     * tokens (per-minute and daily), one concurrency slot. If one scope refuses, what earlier scopes reserved
     * is given back. Returns {@link Admission#UNLIMITED} (no allocation) when no scope has any limit.
     */
    public Admission admit(KeyConfig key, ModelConfig model, long estimatedTokens) {
        return admit(key, model, estimatedTokens, 1);
    }

    /**
     * As {@link #admit(KeyConfig, ModelConfig, long)}, with every limit divided by {@code divisor} (rounded down,
     * at least 1): the share of one replica among {@code divisor} while the counts they normally share (Redis) are
     * out of reach. The state is the same as for divisor 1, so a limiter should be used with one divisor.
     */
    public Admission admit(KeyConfig key, ModelConfig model, long estimatedTokens, int divisor) {
        if (divisor < 1) {
            throw new IllegalArgumentException("divisor must be at least 1");
        }
        LimitsConfig keyLimits = key.limits();
        LimitsConfig pairLimits = key.limitsFor(model.name());
        LimitsConfig modelLimits = model.limits();
        if (keyLimits.isEmpty() && pairLimits.isEmpty() && modelLimits.isEmpty()) {
            return Admission.UNLIMITED;
        }
        long estimate = Math.max(0, estimatedTokens);
        LimitedAdmission a = new LimitedAdmission(this, key.rateLimitHeaders(), nanoTime.getAsLong());
        // Stop at the first refusal: later scopes are neither checked nor charged.
        if (!keyLimits.isEmpty() && !hold(a, Scope.key(key.name()), keyLimits, estimate, divisor)) {
            return a;
        }
        if (!pairLimits.isEmpty()
                && !hold(a, Scope.keyOnModel(key.name(), model.name()), pairLimits, estimate, divisor)) {
            return a;
        }
        if (!modelLimits.isEmpty()) {
            hold(a, Scope.model(model.name()), modelLimits, estimate, divisor);
        }
        return a;
    }

    /**
     * Reserves in one scope what its limits cover. On a refusal turns {@code a} into the refusal (which gives
     * back every hold, this scope's included) and returns false.
     */
    private boolean hold(LimitedAdmission a, Scope scope, LimitsConfig limits, long estimate, int divisor) {
        long now = a.admitNanos;
        long rpm = share(limits.requestsPerMinute(), divisor);
        long tpm = share(limits.tokensPerMinute(), divisor);
        int concurrent = (int) share(limits.concurrentRequests(), divisor);
        long daily = share(limits.dailyTokens(), divisor);
        ScopeState state = rpm > 0 || tpm > 0 || daily > 0 ? usage.get(scope, NEW_STATE) : null;
        AtomicInteger counter = concurrent > 0 ? inFlight.get(scope, NEW_COUNTER) : null;
        LimitedAdmission.Hold h = a.hold(state, counter);

        if (rpm > 0) {
            if (!state.requests.take(1, rpm, now, false, a)) {
                TokenBucket.Level seen = state.requests.peek(rpm, now);
                a.reportRequests(rpm, rpm - seen.used(), now + TokenBucket.nanosUntilFull(seen, rpm, now));
                long wait = Math.max(1, millis(TokenBucket.nanosUntilRoom(seen, 1, rpm, now)));
                a.refuse(requestsRefusal(scope, wait), wait, REQUESTS_PER_MINUTE, true);
                return false;
            }
            h.requestsCapacity = rpm;
        }

        if (tpm > 0) {
            // Never more than the whole bucket: a request estimated above the limit still passes on a full bucket
            // (and its real usage then empties the bucket), rather than being refused forever.
            long reserve = Math.min(estimate, tpm);
            if (!state.tokens.take(reserve, tpm, now, true, a)) {
                TokenBucket.Level seen = state.tokens.peek(tpm, now);
                a.reportTokens(tpm, tpm - seen.used(), now + TokenBucket.nanosUntilFull(seen, tpm, now));
                long wait = Math.max(1, millis(TokenBucket.nanosUntilRoom(seen, reserve, tpm, now)));
                a.refuse(tokensRefusal(scope, tpm, seen.used(), reserve, wait), wait, TOKENS_PER_MINUTE, true);
                return false;
            }
            h.tokensCapacity = tpm;
            h.tokensReserved = reserve;
        }

        if (concurrent > 0) {
            for (;;) {
                int n = counter.get();
                if (n >= concurrent) {
                    a.refuse(concurrencyRefusal(scope, concurrent), CONCURRENCY_RETRY_MILLIS, CONCURRENT_REQUESTS,
                            true);
                    return false;
                }
                if (counter.compareAndSet(n, n + 1)) {
                    break;
                }
            }
            h.slotHeld = true;
        }

        if (daily > 0) {
            long wall = epochMillis.getAsLong();
            long today = DailyBudget.dayOf(wall);
            if (!state.daily.take(estimate, daily, today)) {
                long wait = (today + 1) * DailyBudget.DAY_MILLIS - wall;
                // x-should-retry: false, since no retry an SDK would make within its minute of patience can pass.
                a.refuse(dailyRefusal(scope, daily, wait), wait, DAILY_TOKENS, false);
                return false;
            }
            h.dailyHeld = true;
            h.day = today;
            h.dailyReserved = estimate;
        }
        return true;
    }

    /** One replica's share of {@code limit} (0: none) among {@code divisor}: rounded down, never below 1. */
    static long share(long limit, int divisor) {
        return limit == 0 || divisor == 1 ? limit : Math.max(1, limit / divisor);
    }

    // The 429 messages, one per limit; the shared limiter words its refusals with these too, so a caller cannot
    // tell which of the two refused.

    static GatewayError requestsRefusal(Scope scope, long waitMillis) {
        return GatewayError.of(ErrorKind.RATE_LIMIT, "Rate limit reached for requests per minute on "
                + scope.describe() + ". Please try again in " + RateLimitHeaders.goDuration(waitMillis) + ".");
    }

    static GatewayError tokensRefusal(Scope scope, long tpm, long used, long requested, long waitMillis) {
        return GatewayError.of(ErrorKind.RATE_LIMIT_TOKENS, "Rate limit reached for tokens per minute on "
                + scope.describe() + " (limit " + tpm + ", used " + used + ", requested " + requested
                + "). Please try again in " + RateLimitHeaders.goDuration(waitMillis) + ".");
    }

    static GatewayError concurrencyRefusal(Scope scope, long concurrent) {
        return GatewayError.of(ErrorKind.RATE_LIMIT, "Rate limit reached for concurrent requests on "
                + scope.describe() + " (limit " + concurrent + " in flight). Please try again in "
                + RateLimitHeaders.goDuration(CONCURRENCY_RETRY_MILLIS) + ".");
    }

    static GatewayError dailyRefusal(Scope scope, long daily, long waitMillis) {
        return GatewayError.of(ErrorKind.RATE_LIMIT_TOKENS, "Daily token limit reached on " + scope.describe()
                + " (limit " + daily + " tokens per UTC day). It resets at 00:00 UTC, in "
                + RateLimitHeaders.goDuration(waitMillis) + ".");
    }

    /**
     * Nanoseconds to whole milliseconds, rounded up so that a client waiting that long finds room. Callers keep
     * at least 1: a slot freed by another loop between the refusal and this arithmetic must not read "0s".
     */
    private static long millis(long nanos) {
        return RateLimitHeaders.ceilDiv(nanos, 1_000_000);
    }

    long nanoTime() {
        return nanoTime.getAsLong();
    }

    long epochMillis() {
        return epochMillis.getAsLong();
    }
}
