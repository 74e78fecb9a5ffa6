package io.modelgateway.core.limit;

import io.modelgateway.core.exchange.Admission;

import io.modelgateway.codecs.Saturating;
import io.modelgateway.codecs.error.GatewayError;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An admission where at least one scope has limits: either admitted, holding what each scope reserved until
 * {@link #settle}, or refused, having given everything back already. Built by {@link RateLimiter#admit} one
 * scope at a time.
 *
 * <p>Confined to the exchange's event loop (the {@link Admission} contract), so its own fields are plain;
 * the scope state it points at is shared and changed atomically (counters, and buckets under their monitors).
 */
final class LimitedAdmission extends CountedAdmission implements TokenBucket.Levels {
    /** The limits a single scope holds for this exchange; a linked list, newest first. */
    static final class Hold {
        final ScopeState state;
        final AtomicInteger inFlight;
        final Hold next;
        /** Capacities in force at admission (0: nothing held), reused to refill when settling. */
        long requestsCapacity;
        long tokensCapacity;
        long tokensReserved;
        boolean slotHeld;
        boolean dailyHeld;
        long day;
        long dailyReserved;

        Hold(ScopeState state, AtomicInteger inFlight, Hold next) {
            this.state = state;
            this.inFlight = inFlight;
            this.next = next;
        }
    }

    private final RateLimiter limiter;
    final long admitNanos;
    private Hold holds;

    LimitedAdmission(RateLimiter limiter, boolean familyHeaders, long admitNanos) {
        super(familyHeaders, Long.MAX_VALUE);
        this.limiter = limiter;
        this.admitNanos = admitNanos;
    }

    Hold hold(ScopeState state, AtomicInteger inFlight) {
        holds = new Hold(state, inFlight, holds);
        return holds;
    }

    /** A bucket's level after a take: {@link #reportTokens} or {@link #reportRequests}. */
    @Override
    public void level(boolean tokens, long capacity, long remaining, long fullAtNanos) {
        if (tokens) {
            reportTokens(capacity, remaining, fullAtNanos);
        } else {
            reportRequests(capacity, remaining, fullAtNanos);
        }
    }

    /** Records a requests bucket's state for the headers; the scope with the fewest remaining wins. */
    void reportRequests(long limit, long remaining, long fullAtNanos) {
        if (remaining < requestsRemaining) {
            requestsLimit = limit;
            requestsRemaining = remaining;
            requestsFullAtNanos = fullAtNanos;
        }
    }

    /** Same as {@link #reportRequests} for a tokens bucket. */
    void reportTokens(long limit, long remaining, long fullAtNanos) {
        if (remaining < tokensRemaining) {
            tokensLimit = limit;
            tokensRemaining = remaining;
            tokensFullAtNanos = fullAtNanos;
        }
    }

    /** Turns this into a refusal and gives back everything held so far, this scope's partial holds included. */
    void refuse(GatewayError error, long retryAfterMillis, String refusedLimit, boolean shouldRetry) {
        this.error = error;
        this.retryAfterMillis = Math.max(1, retryAfterMillis);
        this.refusedLimit = refusedLimit;
        this.shouldRetry = shouldRetry;
        release(0, true);
        holds = null;
    }

    @Override
    public void settle(long actualTokens) {
        if (settled || holds == null) {
            return; // settled before, or a refusal (which gave everything back when it was made)
        }
        settled = true;
        release(Math.max(0, actualTokens), false);
    }

    /**
     * Frees slots and corrects token reservations to {@code actualTokens}; {@code refund} also gives back the
     * request taken from each requests bucket (a refused request does not count). Reads the clock only when
     * usage exceeded a reservation: giving back needs no time, and it is the common case, since estimates
     * include the whole output allowance.
     */
    private void release(long actualTokens, boolean refund) {
        long now = 0;
        boolean haveNow = false;
        for (Hold h = holds; h != null; h = h.next) {
            if (refund && h.requestsCapacity > 0) {
                h.state.requests.giveBack(1);
            }
            if (h.tokensCapacity > 0) {
                long delta = Saturating.subtract(actualTokens, h.tokensReserved);
                if (delta > 0 && !haveNow) {
                    now = limiter.nanoTime();
                    haveNow = true;
                }
                h.state.tokens.add(delta, h.tokensCapacity, now);
            }
            if (h.slotHeld) {
                h.inFlight.decrementAndGet();
            }
            if (h.dailyHeld) {
                h.state.daily.adjust(h.day, Saturating.subtract(actualTokens, h.dailyReserved));
            }
        }
    }

    @Override
    public String toString() {
        return error == null ? "Admission[admitted]" : "Admission[refused " + refusedLimit + "]";
    }

    @Override
    long nanoTime() {
        return limiter.nanoTime();
    }

    @Override
    long epochMillis() {
        return limiter.epochMillis();
    }
}
