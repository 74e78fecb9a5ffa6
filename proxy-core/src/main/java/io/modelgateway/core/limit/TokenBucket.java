package io.modelgateway.core.limit;

import io.modelgateway.codecs.Saturating;

/**
 * A per-minute bucket (requests or tokens) of one scope. A bucket of capacity C refills C per minute,
 * continuously; a request takes its cost if what is in use, after refilling, leaves room for it.
 *
 * <p>The level never goes past an empty bucket: an exchange that used more than it reserved is charged the
 * difference, but at most up to C in use. So one exchange costs at most one window's worth (a minute of refill),
 * whatever an upstream claims it used, and a key is never told to wait longer than a minute. A level above C
 * (left by a reload that lowered C) reads as C for the same reason.
 *
 * <p>The capacity is not stored: every call passes the limit of the config in force, so a reload that changes
 * a limit applies it to the usage already counted. That is why the level is kept in tokens (or requests)
 * used and not in time (as GCRA does): a level in time units would silently change meaning with the rate.
 *
 * <p>Thread safety: called from every event loop at once. The state, two longs, is read and written under the
 * bucket's monitor, held for a few arithmetic operations and never across a call out: an update is never lost or
 * torn, and a loop that finds it taken waits those nanoseconds. (It was one immutable level swapped by
 * compare-and-set: as safe, but a new object on every take and on most settlements, two per request.)
 */
final class TokenBucket {
    /** The refill period: C per minute. */
    static final long WINDOW_NANOS = 60_000_000_000L;

    /**
     * {@code used} tokens (or requests) were in use at {@code atNanos}; time since then has refilled the bucket
     * but is not applied yet. {@code used} is at most the capacity in force when it was stored (it may exceed a
     * capacity lowered since, and is then read as that capacity). When {@code used} is 0, {@code atNanos} means
     * nothing: a full bucket banks no refill. A snapshot, for a refusal (see {@link #peek}).
     */
    record Level(long used, long atNanos) {
    }

    /** Where a take reports the level it left: what the rate-limit headers say. */
    interface Levels {
        /**
         * @param tokens      the tokens bucket (else the requests bucket)
         * @param remaining   what the bucket holds after the take
         * @param fullAtNanos when it will be full again, on the clock of {@code now}
         */
        void level(boolean tokens, long capacity, long remaining, long fullAtNanos);
    }

    /** The level, as in {@link Level}; guarded by {@code this}. */
    private long used;
    private long atNanos;

    /**
     * Takes {@code cost} if, after refilling up to {@code now}, {@code used + cost <= capacity}, and then tells
     * {@code to} the level it left.
     *
     * @param cost at most {@code capacity}, so a full bucket always admits
     * @return whether it was taken (when not, nothing changed and nothing was told)
     */
    boolean take(long cost, long capacity, long now, boolean tokens, Levels to) {
        long after;
        long at = now;
        synchronized (this) {
            long used = Math.min(this.used, capacity);
            if (used != 0) {
                long elapsed = now - atNanos;
                if (elapsed <= 0) {
                    at = atNanos; // another loop read the clock later
                } else {
                    long refilled = refilled(elapsed, capacity);
                    if (refilled >= used) {
                        used = 0;
                    } else {
                        used -= refilled;
                        at = refilledAt(atNanos, refilled, capacity, now);
                    }
                }
            }
            if (used > capacity - cost) {
                return false;
            }
            after = used + cost;
            this.used = after;
            this.atNanos = at;
        }
        to.level(tokens, capacity, capacity - after, now + nanosUntilFull(after, at, capacity, now));
        return true;
    }

    /**
     * Adds {@code delta} to what is in use, never going below 0 nor above {@code capacity} (an empty bucket: see
     * the class comment). Usage added now (delta > 0) is added after refilling up to {@code now}, so that time
     * that passed before it existed does not pay it off.
     */
    void add(long delta, long capacity, long now) {
        if (delta < 0) {
            giveBack(-delta);
            return;
        }
        if (delta == 0) {
            return;
        }
        synchronized (this) {
            Level base = refill(used, atNanos, capacity, now);
            used = Math.min(Saturating.add(base.used, delta), capacity);
            atNanos = base.atNanos;
        }
    }

    /**
     * Gives back {@code amount} (> 0) without reading the clock: subtracting commutes with refilling (both only
     * lower the level, clamped at 0), so the refill can wait for the next {@link #take}.
     */
    void giveBack(long amount) {
        synchronized (this) {
            long left = used - amount;
            if (left <= 0) {
                used = 0;
                atNanos = 0;
            } else {
                used = left;
            }
        }
    }

    /** The level refilled up to {@code now}, changing nothing: what a refusal reports and waits out. */
    Level peek(long capacity, long now) {
        long u;
        long at;
        synchronized (this) {
            u = used;
            at = atNanos;
        }
        return refill(u, at, capacity, now);
    }

    /**
     * The level {@code (used, at)} with the refill of the time up to {@code now} applied, and read under
     * {@code capacity}.
     */
    private static Level refill(long usedThen, long at, long capacity, long now) {
        if (usedThen == 0) {
            return new Level(0, now);
        }
        long used = Math.min(usedThen, capacity);
        long elapsed = now - at;
        long refilled = elapsed <= 0 ? 0 : refilled(elapsed, capacity); // <= 0: another loop read the clock later
        if (refilled >= used) {
            return new Level(0, now);
        }
        if (refilled == 0) {
            return new Level(used, at);
        }
        return new Level(used - refilled, refilledAt(at, refilled, capacity, now));
    }

    /**
     * The instant a level last exact at {@code at} is exact again after {@code refilled} whole tokens: advanced
     * only by the time those tokens took, so the fraction of the next one carries over. Otherwise callers
     * polling faster than one token's time would never see a refill.
     */
    private static long refilledAt(long at, long refilled, long capacity, long now) {
        return refilled <= Long.MAX_VALUE / WINDOW_NANOS ? at + nanosToRefill(refilled, capacity, false) : now;
    }

    /**
     * Nanoseconds from {@code level} until the bucket is full again (0 when it is); never more than one window,
     * as the level never exceeds the capacity (the bound here says so where the headers read it).
     */
    static long nanosUntilFull(Level level, long capacity, long now) {
        return nanosUntilFull(level.used, level.atNanos, capacity, now);
    }

    private static long nanosUntilFull(long used, long at, long capacity, long now) {
        if (used == 0) {
            return 0;
        }
        long nanos = Saturating.add(nanosToRefill(Math.min(used, capacity), capacity, true), at - now);
        return Math.min(WINDOW_NANOS, Math.max(0, nanos));
    }

    /**
     * Nanoseconds from {@code level} until {@code cost} (at most {@code capacity}) fits under {@code capacity}
     * (0 when it does); never more than one window, like {@link #nanosUntilFull}.
     */
    static long nanosUntilRoom(Level level, long cost, long capacity, long now) {
        long missing = Math.min(level.used, capacity) - (capacity - cost);
        if (missing <= 0) {
            return 0;
        }
        long nanos = Saturating.add(nanosToRefill(missing, capacity, true), level.atNanos - now);
        return Math.min(WINDOW_NANOS, Math.max(0, nanos));
    }

    /** Whole tokens a bucket of {@code capacity} per minute refills in {@code elapsedNanos} (> 0). */
    static long refilled(long elapsedNanos, long capacity) {
        long minutes = elapsedNanos / WINDOW_NANOS;
        long rest = elapsedNanos % WINDOW_NANOS;
        // Exact integer arithmetic while the product fits in a long (capacities up to ~150 million a minute);
        // beyond that a double is off by far less than one token in a minute's worth.
        long part = capacity <= Long.MAX_VALUE / WINDOW_NANOS ? rest * capacity / WINDOW_NANOS
                : (long) ((double) rest * capacity / WINDOW_NANOS);
        if (minutes == 0) {
            return part;
        }
        return Saturating.add(Saturating.multiply(minutes, capacity), part);
    }

    /** Nanoseconds a bucket of {@code capacity} per minute takes to refill {@code tokens} (>= 0). */
    static long nanosToRefill(long tokens, long capacity, boolean roundUp) {
        if (tokens <= Long.MAX_VALUE / WINDOW_NANOS) {
            long product = tokens * WINDOW_NANOS;
            long q = product / capacity;
            return roundUp && q * capacity != product ? q + 1 : q;
        }
        double d = (double) tokens * WINDOW_NANOS / capacity;
        return d >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) (roundUp ? Math.ceil(d) : d);
    }
}
