package io.modelgateway.core.limit;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.exchange.Admission;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * A key's spend for one exchange ({@link SpendBudgets#admit}): either a refusal (a spend budget is used up: 429 with
 * {@code x-should-retry: false} and {@code Retry-After} to the end of the period), or a hold of the estimated cost
 * around the rate limits' own admission ({@link #wrap}), which settles both when the exchange ends: the tokens with the
 * rate limits, the record's cost with the spend ({@link #settle(ExchangeRecord)}).
 *
 * <p>Serves the local limits and the shared limits' local fallback; while Redis answers, the shared limits hold the
 * spend in Redis themselves ({@link SharedAdmission}), settled with the same record.
 *
 * <p>Confined to the exchange's event loop, like every admission; the spend it changes is lock-free.
 */
public final class SpendAdmission extends Admission {
    private final SpendBudgets.KeySpend spend;
    private final long day;
    private final long month;
    private final long dayReserved;
    private final long monthReserved;
    private final GatewayError error;
    private final long retryAfterMillis;
    private final String refusedLimit;
    /** The rate limits' admission this one wraps, once admitted by them too. */
    private Admission inner = Admission.UNLIMITED;
    private boolean settled;

    /** A hold. */
    SpendAdmission(SpendBudgets.KeySpend spend, long day, long month, long dayReserved,
            long monthReserved) {
        this.spend = spend;
        this.day = day;
        this.month = month;
        this.dayReserved = dayReserved;
        this.monthReserved = monthReserved;
        this.error = null;
        this.retryAfterMillis = 0;
        this.refusedLimit = null;
    }

    /** A refusal. */
    SpendAdmission(GatewayError error, long retryAfterMillis, String refusedLimit) {
        this.spend = null;
        this.day = 0;
        this.month = 0;
        this.dayReserved = 0;
        this.monthReserved = 0;
        this.error = error;
        this.retryAfterMillis = retryAfterMillis;
        this.refusedLimit = refusedLimit;
    }

    /** This hold around {@code rateLimits}, the rate limits' admission of the same request (which admitted it). */
    public Admission wrap(Admission rateLimits) {
        this.inner = rateLimits;
        return this;
    }

    /** The rate limits refused the request after the spend check admitted it: the reservation goes back. */
    public void release() {
        if (spend != null && !settled) {
            settled = true;
            SpendBudgets.release(spend, day, month, dayReserved, monthReserved);
        }
    }

    @Override
    public boolean admitted() {
        return error == null;
    }

    @Override
    public GatewayError error() {
        return error;
    }

    @Override
    public long retryAfterMillis() {
        return error == null ? 0 : retryAfterMillis;
    }

    @Override
    public String refusedLimit() {
        return refusedLimit;
    }

    @Override
    public int headerCount() {
        return error != null ? 3 : inner.headerCount();
    }

    @Override
    public void addHeaders(HttpHeaders headers, ApiStyle style) {
        if (error != null) {
            // No retry an SDK makes within its minute of patience can pass: x-should-retry: false.
            RateLimitHeaders.writeRetry(headers, retryAfterMillis, false);
            return;
        }
        inner.addHeaders(headers, style);
    }

    @Override
    public void settle(long actualTokens) {
        inner.settle(actualTokens);
    }

    @Override
    public void settle(ExchangeRecord record) {
        inner.settle(record);
        if (spend == null || settled) {
            return;
        }
        settled = true;
        SpendBudgets.settle(spend, day, month, dayReserved, monthReserved, SpendBudgets.micros(record.costUsd()));
    }

    // For tests: what the hold holds.
    SpendBudgets.KeySpend spendOf() {
        return spend;
    }

    long dayOf() {
        return day;
    }

    long monthOf() {
        return month;
    }

    long dayReservedMicros() {
        return dayReserved;
    }

    long monthReservedMicros() {
        return monthReserved;
    }

    @Override
    public String toString() {
        return error == null ? "Admission[spend held, " + inner + "]" : "Admission[refused " + refusedLimit + "]";
    }
}
