package io.modelgateway.core.limit;

import io.modelgateway.core.config.RedisConfig;
import io.modelgateway.core.exchange.Transport;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.logging.Logger;

/**
 * The limits of one server: the local {@link RateLimiter} (this replica's own counts) and, while the config has a
 * {@code redis} block, the {@link SharedLimiter} whose counts every replica shares. The limit check reads
 * {@link #shared()} once per request: null, the local limiter decides at once, as it always did; otherwise Redis
 * does. Both outlive reloads; {@link #configure} takes each config's {@code redis} block.
 *
 * <p>Reloads: the same block, or another server, is handed to the running shared limiter
 * ({@link SharedLimiter#reconfigure}). A block added makes a shared limiter (until it reaches Redis, its fallback
 * decides). A block removed sends the next check back to the local limiter at once; the shared one is retired, not
 * closed: it keeps renewing the leases of the exchanges it admitted and delivering their settlements for
 * {@link #RETIRED_MILLIS}, then closes (what is still held then expires in Redis on its own).
 *
 * <p>Metrics: the shared-state metrics read through here, so they follow whichever limiter is current; the counts
 * of limiters no longer current are kept, so the counters never go backwards. Thread-safe: {@link #shared()} is a
 * volatile read; configuration and the metrics' reads take this object's lock (never on a request's path).
 */
public final class Limiters implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Limiters.class.getName());

    /** How a shared limiter is made for a {@code redis} block: {@link #REDIS}, or (tests) one on a stopped clock. */
    @FunctionalInterface
    public interface SharedFactory {
        SharedLimiter create(RedisConfig config, EventLoopGroup group);
    }

    /** The shared limiter on the process's transport, on Redis's clock. */
    public static final SharedFactory REDIS = (config, group) -> new SharedLimiter(config, group,
            Transport.socketChannel(), Transport.datagramChannel());

    /** How long a shared limiter retired by a reload keeps settling what it admitted. */
    static final long RETIRED_MILLIS = 600_000;
    /** At shutdown, how long the settlements on their way to Redis get to land. */
    static final Duration SETTLE_AT_CLOSE = Duration.ofSeconds(1);

    private final RateLimiter local;
    /** The server's event loops, which the shared limiter's connections live on; null: no shared limits here. */
    private final EventLoopGroup group;
    private final SharedFactory factory;
    /** Told once, when the first shared limiter is made (the metrics register then). */
    private final Consumer<Limiters> firstShared;

    private volatile SharedLimiter shared;
    /** Told each shared limit check's Redis round trip, in nanoseconds; set once (the metrics), kept across reloads. */
    private volatile LongConsumer checkTimer;
    /** What the limit check asks while limits are shared: the shared limiter, or (tests) a hand-driven stand-in. */
    private volatile SharedAdmissions checks;
    // guarded by this
    private final List<SharedLimiter> retired = new ArrayList<>();
    private boolean everShared;
    private boolean closed;
    private long retiredTimeouts;
    private long retiredConnectionErrors;
    private long retiredRedisErrors;
    private long retiredFallbacks;
    private long retiredBatched;

    /** Local limits only (a {@code redis} block cannot be taken: there are no event loops to connect from). */
    public Limiters(RateLimiter local) {
        this(local, null, REDIS, l -> { });
    }

    /**
     * @param group       the server's event loops
     * @param factory     makes the shared limiter of a {@code redis} block
     * @param firstShared called once, with this, when the first shared limiter is made (at start or by a reload)
     */
    public Limiters(RateLimiter local, EventLoopGroup group, SharedFactory factory, Consumer<Limiters> firstShared) {
        this.local = local;
        this.group = group;
        this.factory = factory;
        this.firstShared = firstShared;
    }

    /** This replica's own counts; its state outlives reloads. */
    public RateLimiter local() {
        return local;
    }

    /** The limiter of the config's {@code redis} block; null while there is none. */
    public SharedLimiter shared() {
        return shared;
    }

    /** What the limit check asks for each request while limits are shared; null while they are not (local limits). */
    SharedAdmissions sharedAdmissions() {
        return checks;
    }

    /** Tests of the limit check: its requests are decided by {@code standIn} (null: local limits again). */
    void checkWith(SharedAdmissions standIn) {
        checks = standIn;
    }

    /**
     * Takes a config's {@code redis} block (null: none), at start and on every reload; see the class comment.
     *
     * @throws IllegalStateException for a block when these limits have no event loops
     */
    public synchronized void configure(RedisConfig redis) {
        if (closed) {
            return;
        }
        SharedLimiter current = shared;
        if (redis == null) {
            if (current != null) {
                shared = null;
                checks = null;
                retire(current);
                LOG.info("shared limits: the redis block was removed; each replica counts on its own again");
            }
            return;
        }
        if (current != null) {
            current.reconfigure(redis);
            return;
        }
        if (group == null) {
            throw new IllegalStateException("shared limits need the server's event loops");
        }
        SharedLimiter made = factory.create(redis, group);
        if (checkTimer != null) {
            made.timeChecks(checkTimer);
        }
        shared = made;
        checks = made;
        if (!everShared) {
            everShared = true;
            firstShared.accept(this);
        }
    }

    /** Times every shared limiter's checks, this one's and those later reloads make: {@code nanos} hears each. */
    public synchronized void timeChecks(LongConsumer nanos) {
        checkTimer = nanos;
        SharedLimiter l = shared;
        if (l != null) {
            l.timeChecks(nanos);
        }
    }

    /** Keeps {@code l} settling what it admitted for a while, then closes it. Under the lock. */
    private void retire(SharedLimiter l) {
        retired.add(l);
        group.schedule(() -> {
            synchronized (this) {
                if (!closed && retired.remove(l)) {
                    forget(l);
                    l.close();
                }
            }
        }, RETIRED_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Moves the counts of a limiter that goes away into the kept totals. Under the lock. */
    private void forget(SharedLimiter l) {
        retiredTimeouts += l.timeouts();
        retiredConnectionErrors += l.connectionErrors();
        retiredRedisErrors += l.redisErrors();
        retiredFallbacks += l.fallbacks();
        retiredBatched += l.batched();
    }

    /**
     * Waits (blocking: not on an event loop) until the shared limiter reached Redis, at most {@code max}; true when
     * it did, or when there is none. A start that should not send its first requests to the fallback.
     */
    public boolean awaitUp(Duration max) throws InterruptedException {
        SharedLimiter l = shared;
        return l == null || l.awaitUp(max);
    }

    /** Whether checks go to Redis now: the {@code gateway_shared_state_up} gauge. */
    public boolean up() {
        SharedLimiter l = shared;
        return l != null && l.up();
    }

    public synchronized long timeouts() {
        return retiredTimeouts + sum(SharedLimiter::timeouts);
    }

    public synchronized long connectionErrors() {
        return retiredConnectionErrors + sum(SharedLimiter::connectionErrors);
    }

    public synchronized long redisErrors() {
        return retiredRedisErrors + sum(SharedLimiter::redisErrors);
    }

    public synchronized long fallbacks() {
        return retiredFallbacks + sum(SharedLimiter::fallbacks);
    }

    /** Checks answered at once from a batch ({@code gateway_shared_state_batched_total}). */
    public synchronized long batched() {
        return retiredBatched + sum(SharedLimiter::batched);
    }

    private long sum(java.util.function.ToLongFunction<SharedLimiter> count) {
        long n = 0;
        SharedLimiter l = shared;
        if (l != null) {
            n += count.applyAsLong(l);
        }
        for (SharedLimiter r : retired) {
            n += count.applyAsLong(r);
        }
        return n;
    }

    /**
     * Closes every shared limiter, after the settlements on their way have had {@link #SETTLE_AT_CLOSE} to land.
     * Blocking (not on an event loop): after the server's drain, before its event loops stop.
     */
    @Override
    public void close() {
        List<SharedLimiter> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(retired);
            if (shared != null) {
                all.add(shared);
            }
        }
        for (SharedLimiter l : all) {
            l.close(SETTLE_AT_CLOSE);
        }
    }
}
