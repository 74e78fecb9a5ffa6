package io.modelgateway.core.limit;

import io.modelgateway.core.exchange.Admission;

import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.RedisConfig;
import io.modelgateway.core.limit.shared.IntegerArrayReply;
import io.modelgateway.core.limit.shared.LuaScript;
import io.modelgateway.core.limit.shared.RedisCall;
import io.modelgateway.core.limit.shared.RedisLink;
import io.modelgateway.core.limit.shared.Resp;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.net.ssl.SSLException;

/**
 * Rate limits whose counts all replicas share through Redis (the config's {@code redis} block): requests and tokens
 * per minute, daily token budgets and concurrent requests of every key, key on a model, and model, with the
 * semantics of {@link RateLimiter} (the same buckets, the same 429s and headers), kept in Redis and changed by
 * Lua scripts ({@code admit.lua}, {@code settle.lua}, {@code renew.lua} in {@code limit/shared}), one atomic
 * {@code EVALSHA} per check.
 *
 * <p><b>Threads.</b> {@link #admit} is called on the exchange's event loop and returns a future that completes on
 * that loop: the check goes out on that loop's own connection ({@link RedisLink}) and the reply completes it
 * there, so the request waits without holding a thread and nothing crosses threads. A check that is decided at
 * once (no limit, or Redis known to be away) returns a future already done.
 *
 * <p><b>Faults.</b> The state machine has three states: starting, up, down; each change is logged once. A check
 * that gets no reply within {@code timeout_ms}, a connection that fails, or an error from Redis turns the state to
 * down (and counts an error); while down, every check is decided by the fallback at once ({@code local}: the
 * local {@link RateLimiter} with every limit divided by {@code replicas_hint}; {@code deny}: 429;
 * {@code allow}: admitted). A probe on one loop, every {@link #PROBE_MILLIS}, runs a script on Redis; when it
 * answers in time the state is up again and every loop reconnects. No exception reaches a caller; a future never
 * fails.
 *
 * <p><b>Counting once.</b> Every shared admission has an id and a hold in Redis; its settlement deletes the hold
 * first and does nothing when it is gone. So a settlement is resent (after a timeout or a lost connection) without
 * counting twice, and a check that timed out is cancelled (a settlement that also gives back the request) without
 * knowing whether it ran. Concurrency slots are leases with a TTL ({@code lease_ttl_ms}), renewed by this replica
 * every third of it while their exchange runs: the slots of a replica that dies free themselves.
 *
 * <p><b>Batches.</b> Where no concurrency and no spend is counted, a check asks for a batch of up to
 * {@code redis.batch} requests' worth; admit.lua grants it only while every limit stays far from reached
 * ({@link SharedBatch}), and the loop's next requests of the same key on the same model are admitted from it at once.
 * Requests that arrive while a batch is being asked for wait for its answer; a check that could take no batch makes
 * the key on the model be checked alone for {@link #ALONE_MILLIS}.
 */
public final class SharedLimiter implements SharedAdmissions, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SharedLimiter.class.getName());

    /** The probe's period while Redis is away: how soon shared counts take over again once it answers. */
    static final long PROBE_MILLIS = 200;
    /** A settlement not delivered (Redis away) is retried this often, as long as it is kept. */
    static final long RETRY_MILLIS = 200;
    /** Settlements kept per loop for delivery later; past it the oldest is dropped (its reservations expire). */
    static final int MAX_DEFERRED = 100_000;
    /** A hold outlives any exchange (total_ms is at most a day), so that its settlement still finds it. */
    static final long HOLD_TTL_MILLIS = 25 * 3_600_000L;
    /** Leases renewed per script call, at most. */
    static final int RENEW_BATCH = 256;
    /** Token counts sent to Redis are clamped here: Lua numbers are doubles, exact up to 2^53. */
    static final long MAX_TOKENS = 1L << 53;
    /** A batch ({@link SharedBatch}) admits for this long after it was taken, at most; then what is left goes back. */
    static final long BATCH_MILLIS = 250;
    /** After a check that could take no batch (a limit not far from reached), the key on the model is checked alone
     * for this long before a batch is asked for again. */
    static final long ALONE_MILLIS = 1_000;

    /** What a {@code deny} fallback refuses with, in metrics and records. */
    public static final String SHARED_STATE_UNAVAILABLE = "shared_state_unavailable";

    static final LuaScript ADMIT = LuaScript.load("admit.lua");
    static final LuaScript SETTLE = LuaScript.load("settle.lua");
    static final LuaScript RENEW = LuaScript.load("renew.lua");
    static final LuaScript SPEND = LuaScript.load("spend.lua");
    private static final List<LuaScript> SCRIPTS = List.of(ADMIT, SETTLE, RENEW, SPEND);

    private static final int STARTING = 0;
    private static final int UP = 1;
    private static final int DOWN = 2;

    private final EventLoopGroup group;
    private final EventLoop home;
    private final Class<? extends SocketChannel> channelType;
    private final DnsAddressResolverGroup resolver;
    private final LongSupplier redisMicros;
    private final LongSupplier nanoTime;
    private final LongSupplier epochMillis;
    private final RateLimiter local;
    /** The spend budgets of the local fallback: this replica's share of each budget while Redis is away. */
    private final SpendBudgets localSpend;
    /** This replica's part of every admission id; random, so replicas (and restarts) never share ids. */
    private final String replicaId;
    private final AtomicLong sequence = new AtomicLong();

    private volatile RedisConfig config;
    /** The scripts' parts under the config's key prefix; replaced when a reload changes the prefix. */
    private volatile ScriptParts parts;
    private volatile SslContext ssl;
    /** One lane (a connection and its undelivered settlements) per event loop that asked; replaced on a new server. */
    private volatile Map<EventLoop, Lane> lanes = new ConcurrentHashMap<>();
    private final AtomicInteger state = new AtomicInteger(STARTING);
    private volatile boolean closed;
    /** Admitted shared admissions holding concurrency leases, until settled: what the renewal renews. */
    private final Set<SharedAdmission> leases = ConcurrentHashMap.newKeySet();

    private final LongAdder timeouts = new LongAdder();
    private final LongAdder connectionErrors = new LongAdder();
    private final LongAdder redisErrors = new LongAdder();
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder batched = new LongAdder();

    /** Hears each admission's Redis round trip in nanoseconds (the metrics); set once, read on the loops. */
    private volatile LongConsumer checkTimer = nanos -> { };

    private final ScheduledFuture<?> prober;
    private volatile ScheduledFuture<?> renewer;
    /** On the home loop: a probe is on its way. */
    private boolean probing;

    /**
     * Starts connecting at once (each loop's connection on first use; the probe's on the home loop now). Until
     * Redis answered, checks are decided by the fallback; {@link #awaitUp} waits for it.
     *
     * @param group        the gateway's event loops: connections live on them
     * @param channelType  the socket channel class of {@code group}'s transport
     * @param datagramType the datagram channel class of that transport (DNS lookups of the Redis host)
     */
    public SharedLimiter(RedisConfig config, EventLoopGroup group, Class<? extends SocketChannel> channelType,
            Class<? extends DatagramChannel> datagramType) {
        this(config, group, channelType, datagramType, null, System::nanoTime, System::currentTimeMillis);
    }

    /**
     * @param redisMicros the clock of the shared buckets in microseconds since the epoch, or null for Redis's own
     *                    ({@code TIME}), which every replica then agrees on; tests pass theirs to stop time
     * @param nanoTime    the monotonic clock of the reset headers (and of the local fallback)
     * @param epochMillis the wall clock of the Anthropic reset instants (and of the local fallback's days)
     */
    SharedLimiter(RedisConfig config, EventLoopGroup group, Class<? extends SocketChannel> channelType,
            Class<? extends DatagramChannel> datagramType, LongSupplier redisMicros, LongSupplier nanoTime,
            LongSupplier epochMillis) {
        this.config = config;
        this.group = group;
        this.home = group.next();
        this.channelType = channelType;
        this.resolver = new DnsAddressResolverGroup(new DnsNameResolverBuilder().datagramChannelType(datagramType));
        this.redisMicros = redisMicros;
        this.nanoTime = nanoTime;
        this.epochMillis = epochMillis;
        this.local = new RateLimiter(nanoTime, epochMillis);
        this.localSpend = new SpendBudgets(epochMillis);
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        this.replicaId = HexFormat.of().formatHex(random);
        this.parts = new ScriptParts(config.keyPrefix(), replicaId);
        this.ssl = config.tls() ? newSslContext() : null;
        connectAll();
        this.prober = home.scheduleWithFixedDelay(this::probe, 0, PROBE_MILLIS, TimeUnit.MILLISECONDS);
        scheduleRenewal(config.leaseTtlMs());
    }

    /**
     * Makes a lane for every loop of the group and starts connecting it: a check on a loop whose connection is not
     * up yet is decided by the fallback, so every loop should have one before the first request.
     */
    private void connectAll() {
        for (EventExecutor e : group) {
            lane((EventLoop) e).link.connect();
        }
    }

    // ---- admission

    /**
     * Checks every limit of {@code key} on {@code model} against the shared counts and, if all admit, reserves (one
     * request, {@code estimatedTokens} per minute and on the day, a concurrency slot), as
     * {@link RateLimiter#admit(KeyConfig, ModelConfig, long)} does; first, when {@code costEstimateUsd} is not
     * negative, the key's spend budgets, as {@link SpendBudgets#admit} does, with the spend every replica shares.
     *
     * @param loop the exchange's event loop; best called on it (from elsewhere the check first moves there)
     * @return completes on {@code loop}, never fails: with {@link Admission#UNLIMITED} (done at once) when nothing
     *         limits the request, with the shared decision, or with the fallback's when Redis cannot answer within
     *         {@code timeout_ms}
     */
    /** As {@link #admit(KeyConfig, ModelConfig, long, double, EventLoop)} for an exchange that counts no spend. */
    public Future<Admission> admit(KeyConfig key, ModelConfig model, long estimatedTokens, EventLoop loop) {
        return admit(key, model, estimatedTokens, -1, loop);
    }

    @Override
    public Future<Admission> admit(KeyConfig key, ModelConfig model, long estimatedTokens, double costEstimateUsd,
            EventLoop loop) {
        LimitsConfig keyLimits = key.limits();
        LimitsConfig pairLimits = key.limitsFor(model.name());
        LimitsConfig modelLimits = model.limits();
        if (keyLimits.isEmpty() && pairLimits.isEmpty() && modelLimits.isEmpty() && costEstimateUsd < 0) {
            return loop.newSucceededFuture(Admission.UNLIMITED);
        }
        if (loop.inEventLoop() && costEstimateUsd < 0 && !closed && state.get() == UP) {
            // A batch of this loop admits at once, without a promise to wait on.
            Lane lane = lanes.get(loop);
            SharedBatch.Batched batched = lane == null ? null : lane.fromBatch(key, model, clamp(estimatedTokens));
            if (batched != null) {
                return loop.newSucceededFuture(batched);
            }
        }
        Promise<Admission> promise = loop.newPromise();
        if (loop.inEventLoop()) {
            admit(key, model, estimatedTokens, costEstimateUsd, loop, promise);
        } else {
            loop.execute(() -> admit(key, model, estimatedTokens, costEstimateUsd, loop, promise));
        }
        return promise;
    }

    private void admit(KeyConfig key, ModelConfig model, long estimatedTokens, double costEstimateUsd, EventLoop loop,
            Promise<Admission> promise) {
        try {
            RedisConfig c = config;
            if (closed || state.get() != UP) {
                promise.setSuccess(fallback(c, key, model, estimatedTokens, costEstimateUsd));
                return;
            }
            Lane lane = lane(loop);
            if (!lane.link.ready()) {
                lane.link.connect();
                promise.setSuccess(fallback(c, key, model, estimatedTokens, costEstimateUsd));
                return;
            }
            Scope[] scopes = new Scope[3];
            LimitsConfig[] limits = new LimitsConfig[3];
            int n = 0;
            boolean slots = false;
            if (!key.limits().isEmpty()) {
                scopes[n] = Scope.key(key.name());
                limits[n++] = key.limits();
            }
            LimitsConfig pair = key.limitsFor(model.name());
            if (!pair.isEmpty()) {
                scopes[n] = Scope.keyOnModel(key.name(), model.name());
                limits[n++] = pair;
            }
            if (!model.limits().isEmpty()) {
                scopes[n] = Scope.model(model.name());
                limits[n++] = model.limits();
            }
            for (int i = 0; i < n; i++) {
                slots |= limits[i].concurrentRequests() > 0;
            }
            long estimate = clamp(estimatedTokens);
            // A batch where it may be taken: no slot and no spend counted, batches on, not just refused one.
            BatchKey batchKey = null;
            int want = 1;
            if (c.batch() > 1 && costEstimateUsd < 0 && !slots) {
                batchKey = new BatchKey(key.name(), model.name());
                SharedBatch.Batched batched = lane.fromBatch(key, model, estimate);
                if (batched != null) {
                    promise.setSuccess(batched);
                    return;
                }
                if (lane.awaitBatch(batchKey, key, model, estimatedTokens, promise)) {
                    return; // a batch is being taken: this request waits for it
                }
                if (lane.batchAllowed(batchKey, nanoTime())) {
                    want = c.batch();
                } else {
                    batchKey = null;
                }
            }
            // The admission keeps these parts: it settles under the prefix it was admitted under, whatever a reload
            // does meanwhile.
            SharedAdmission a = new SharedAdmission(this, loop, sequence.incrementAndGet(), parts, c.leaseTtlMs(), key,
                    scopes, limits, n, estimate, costEstimateUsd, SpendBudgets.monthOf(epochMillis()), want);
            AdmitCall call = new AdmitCall(a, promise, key, model, estimatedTokens, costEstimateUsd, batchKey);
            if (batchKey != null) {
                lane.batchAsked(batchKey);
            }
            if (!lane.link.send(call)) {
                if (batchKey != null) {
                    lane.releaseWaiters(batchKey);
                }
                promise.setSuccess(fallback(c, key, model, estimatedTokens, costEstimateUsd));
            }
        } catch (RuntimeException e) {
            // Never let a bug here reach the caller as an exception: the fallback still decides.
            LOG.log(Level.WARNING, "shared limits: check failed, the fallback decides", e);
            if (!promise.isDone()) {
                promise.setSuccess(fallback(config, key, model, estimatedTokens, costEstimateUsd));
            }
        }
    }

    private static long clamp(long tokens) {
        return Math.min(MAX_TOKENS, Math.max(0, tokens));
    }

    private Admission fallback(RedisConfig c, KeyConfig key, ModelConfig model, long estimatedTokens,
            double costEstimateUsd) {
        if (costEstimateUsd < 0 || c.fallback() != RedisConfig.Fallback.LOCAL) {
            return fallback(c, key, model, estimatedTokens);
        }
        // The local fallback: this replica's share of the spend budgets first, as the limit check does without Redis.
        SpendAdmission held = localSpend.admit(key, costEstimateUsd, c.replicasHint());
        if (!held.admitted()) {
            fallbacks.increment();
            return held;
        }
        Admission rateLimits = fallback(c, key, model, estimatedTokens);
        if (rateLimits.admitted()) {
            return held.wrap(rateLimits);
        }
        held.release();
        return rateLimits;
    }

    private Admission fallback(RedisConfig c, KeyConfig key, ModelConfig model, long estimatedTokens) {
        fallbacks.increment();
        switch (c.fallback()) {
            case ALLOW:
                return Admission.UNLIMITED;
            case DENY:
                LimitedAdmission refused = new LimitedAdmission(local, false, 0);
                refused.refuse(GatewayError.of(ErrorKind.RATE_LIMIT, "The limits of this key cannot be checked right"
                        + " now. Please try again in " + RateLimitHeaders.goDuration(RateLimiter.CONCURRENCY_RETRY_MILLIS)
                        + "."), RateLimiter.CONCURRENCY_RETRY_MILLIS, SHARED_STATE_UNAVAILABLE, true);
                return refused;
            case LOCAL:
            default:
                return local.admit(key, model, estimatedTokens, c.replicasHint());
        }
    }

    /**
     * The spend of the key named {@code keyName} as every replica shares it: micro-dollars spent today and this month
     * (UTC). Completes on a loop of the group; with null when Redis is away or does not answer within
     * {@code timeout_ms}.
     */
    public Future<long[]> spend(String keyName) {
        Promise<long[]> promise = home.newPromise();
        home.execute(() -> {
            Lane lane = lane(home);
            if (closed || state.get() != UP || !lane.link.ready()) {
                promise.trySuccess(null);
                return;
            }
            SpendCall call = new SpendCall(SharedAdmission.spendKey(config.keyPrefix(), keyName),
                    SpendBudgets.monthOf(epochMillis()), promise);
            if (!lane.link.send(call)) {
                promise.trySuccess(null);
            }
        });
        return promise;
    }

    /** Settles {@code a} (admitted, first call): called by {@link SharedAdmission#settle}, on any thread. */
    void settle(SharedAdmission a, long actualTokens) {
        if (a.holdsSlots) {
            leases.remove(a);
        }
        long actual = clamp(actualTokens);
        SettleCall call = new SettleCall(a, actual, false, 1);
        if (a.loop.inEventLoop()) {
            deliver(call);
        } else {
            a.loop.execute(() -> deliver(call));
        }
    }

    /** Settles a closed batch whose requests all ended: one settlement under its holder's hold. On its loop. */
    void settleBatch(SharedBatch b) {
        deliver(new SettleCall(b.holder, clamp(b.drawn), false, b.used));
    }

    private void deliver(SettleCall call) {
        if (closed) {
            return;
        }
        lane(call.a.loop).sendOrDefer(call);
    }

    // ---- connections

    private Lane lane(EventLoop loop) {
        Map<EventLoop, Lane> all = lanes;
        Lane lane = all.get(loop);
        if (lane == null) {
            lane = all.computeIfAbsent(loop, l -> new Lane(l, config, ssl));
        }
        return lane;
    }

    /**
     * One loop's connection and the settlements waiting for it. Confined to that loop, but for {@link #link}'s
     * thread-safe {@code connect} and {@code close}.
     */
    private final class Lane implements RedisLink.Events {
        final RedisLink link;
        final ArrayDeque<SettleCall> deferred = new ArrayDeque<>();
        final Runnable retry = this::retry;
        boolean retryScheduled;
        /** The open batch of each key on a model (at most one). */
        final HashMap<BatchKey, SharedBatch> batches = new HashMap<>();
        /** Requests waiting for a batch being taken, by key on a model (an entry, maybe empty, while it is asked). */
        final HashMap<BatchKey, ArrayDeque<Waiter>> asked = new HashMap<>();
        /** Until when (nanoTime) a key on a model is checked alone: its last check could take no batch. */
        final HashMap<BatchKey, Long> alone = new HashMap<>();
        final Runnable sweep = this::sweep;
        boolean sweepScheduled;

        /** Nothing waits for an answer or for delivery, no batch is open. On the loop. */
        boolean idle() {
            return link.pending() == 0 && deferred.isEmpty() && batches.isEmpty();
        }

        /** An admission from this loop's open batch for the key on the model, or null. On the loop. */
        SharedBatch.Batched fromBatch(KeyConfig key, ModelConfig model, long estimate) {
            if (batches.isEmpty()) {
                return null;
            }
            BatchKey k = new BatchKey(key.name(), model.name());
            SharedBatch b = batches.get(k);
            if (b == null) {
                return null;
            }
            long now = nanoTime();
            if (b.fits(key, model, parts, estimate, now)) {
                if (b.used >= b.taken - b.taken / 4 && b.taken >= 8 && !asked.containsKey(k)
                        && batchAllowed(k, now)) {
                    // Three quarters used: this request asks for the next batch while the others use the rest of
                    // this one, so that they do not all wait for Redis when it runs out.
                    return null;
                }
                batched.increment();
                return b.take(estimate);
            }
            // Used up, too little left for this request, past its time, or taken under other limits: closed.
            batches.remove(k);
            b.close();
            return null;
        }

        /** When a batch for {@code k} is being taken, queues the request for it and says true. */
        boolean awaitBatch(BatchKey k, KeyConfig key, ModelConfig model, long estimatedTokens,
                Promise<Admission> promise) {
            ArrayDeque<Waiter> waiting = asked.get(k);
            if (waiting == null) {
                return false;
            }
            waiting.add(new Waiter(key, model, estimatedTokens, promise));
            return true;
        }

        boolean batchAllowed(BatchKey k, long nowNanos) {
            if (alone.isEmpty()) {
                return true;
            }
            Long until = alone.get(k);
            if (until == null) {
                return true;
            }
            if (nowNanos - until < 0) {
                return false;
            }
            alone.remove(k);
            return true;
        }

        void batchAsked(BatchKey k) {
            asked.put(k, new ArrayDeque<>());
        }

        /**
         * The check that asked for a batch for {@code k} is decided: the batch opens if one was taken; if none could
         * be, the key on the model is checked alone for a while.
         */
        void batchAnswered(BatchKey k, SharedAdmission a, ModelConfig model) {
            if (a.admitted() && a.taken > 1) {
                SharedBatch b = new SharedBatch(SharedLimiter.this, a, model, nanoTime(),
                        TimeUnit.MILLISECONDS.toNanos(BATCH_MILLIS));
                a.batch = b;
                SharedBatch before = batches.put(k, b);
                if (before != null) {
                    before.close();
                }
                scheduleSweep();
            } else {
                alone.put(k, nanoTime() + TimeUnit.MILLISECONDS.toNanos(ALONE_MILLIS));
                scheduleSweep();
            }
        }

        /** The requests that waited for a batch for {@code k}: admitted from it, or checked anew. On the loop. */
        void releaseWaiters(BatchKey k) {
            ArrayDeque<Waiter> waiting = asked.remove(k);
            if (waiting == null) {
                return;
            }
            Waiter w;
            while ((w = waiting.poll()) != null) {
                admit(w.key, w.model, w.estimatedTokens, -1, link.loop(), w.promise);
            }
        }

        private void scheduleSweep() {
            if (!sweepScheduled && !closed) {
                sweepScheduled = true;
                link.loop().schedule(sweep, BATCH_MILLIS, TimeUnit.MILLISECONDS);
            }
        }

        /** Closes the batches past their time and forgets the ended spells of checking alone. */
        private void sweep() {
            sweepScheduled = false;
            long now = nanoTime();
            for (Iterator<SharedBatch> it = batches.values().iterator(); it.hasNext(); ) {
                SharedBatch b = it.next();
                if (closed || now - b.closesAtNanos >= 0) {
                    it.remove();
                    b.close();
                }
            }
            alone.values().removeIf(until -> now - until >= 0);
            if (!batches.isEmpty() || !alone.isEmpty()) {
                scheduleSweep();
            }
        }

        /** Closes every open batch (a stop): what is left goes back as their requests end. */
        void closeBatches() {
            for (SharedBatch b : batches.values()) {
                b.close();
            }
            batches.clear();
        }

        Lane(EventLoop loop, RedisConfig c, SslContext ssl) {
            link = new RedisLink(loop, c, ssl, SCRIPTS, channelType, resolver, this);
        }

        void sendOrDefer(SettleCall call) {
            if (state.get() == UP && link.ready() && deferred.isEmpty() && link.send(call)) {
                return;
            }
            defer(call);
        }

        void defer(SettleCall call) {
            if (deferred.size() >= MAX_DEFERRED) {
                deferred.poll(); // its hold and leases expire in Redis; the per-minute part refills within a minute
            }
            deferred.add(call);
            if (!retryScheduled && !closed) {
                retryScheduled = true;
                link.loop().schedule(retry, RETRY_MILLIS, TimeUnit.MILLISECONDS);
            }
        }

        void retry() {
            retryScheduled = false;
            if (closed) {
                deferred.clear();
                return;
            }
            if (!link.ready()) {
                link.connect();
            } else if (state.get() == UP) {
                SettleCall c;
                while ((c = deferred.peek()) != null && link.send(c)) {
                    deferred.poll();
                }
            }
            if (!deferred.isEmpty() && !retryScheduled) {
                retryScheduled = true;
                link.loop().schedule(retry, RETRY_MILLIS, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void ready(RedisLink l) {
            if (!deferred.isEmpty() && state.get() == UP) {
                retry();
            }
        }

        @Override
        public void failed(RedisLink l, RedisCall.Failure failure, String detail) {
            if (failure == RedisCall.Failure.CONNECTION) {
                connectionErrors.increment();
            }
            markDown(detail);
        }

        @Override
        public void errorReply(RedisLink l, String message) {
            redisErrors.increment();
            markDown("Redis answered: " + abbreviate(message));
        }
    }

    // ---- the state machine

    private void markUp() {
        int before = state.getAndSet(UP);
        if (before == UP) {
            return;
        }
        RedisConfig c = config;
        if (before == STARTING) {
            LOG.info("shared limits: Redis at " + c.endpoint() + " in use; every replica shares the counts");
        } else {
            LOG.info("shared limits: Redis at " + c.endpoint() + " answers again; shared counts in force");
        }
        for (Lane lane : lanes.values()) {
            lane.link.connect();
            lane.link.loop().execute(() -> {
                if (!lane.deferred.isEmpty()) {
                    lane.retry();
                }
            });
        }
    }

    private void markDown(String why) {
        int before = state.get();
        if (before == DOWN || closed || !state.compareAndSet(before, DOWN)) {
            return;
        }
        RedisConfig c = config;
        LOG.warning("shared limits: " + (before == STARTING ? "cannot use " : "lost ") + "Redis at " + c.endpoint()
                + " (" + why + "); " + describeFallback(c) + " until it answers again");
    }

    private static String describeFallback(RedisConfig c) {
        return switch (c.fallback()) {
            case LOCAL -> "each replica enforces its share of every limit (limit / " + c.replicasHint() + ")";
            case DENY -> "requests with limits are refused (429)";
            case ALLOW -> "requests are admitted unchecked";
        };
    }

    /** On the home loop, every {@link #PROBE_MILLIS}: while Redis is away, asks it to run a script. */
    private void probe() {
        if (closed || state.get() == UP || probing) {
            return;
        }
        Lane lane = lane(home);
        if (!lane.link.ready()) {
            lane.link.connect();
            return;
        }
        probing = true;
        RenewCall probe = new RenewCall(List.of(), config.leaseTtlMs(), ok -> {
            probing = false;
            if (ok) {
                markUp();
            }
        });
        if (!lane.link.send(probe)) {
            probing = false;
        }
    }

    private void scheduleRenewal(int leaseTtlMs) {
        long every = Math.max(1, leaseTtlMs / 3);
        renewer = home.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
    }

    /** On the home loop: renews the leases of every exchange of this replica still running. */
    private void renew() {
        if (closed || leases.isEmpty() || state.get() != UP) {
            return;
        }
        Lane lane = lane(home);
        if (!lane.link.ready()) {
            lane.link.connect();
            return;
        }
        int ttl = config.leaseTtlMs();
        List<SharedAdmission> batch = new ArrayList<>(Math.min(RENEW_BATCH, leases.size()));
        for (Iterator<SharedAdmission> it = leases.iterator(); it.hasNext(); ) {
            batch.add(it.next());
            if (batch.size() == RENEW_BATCH || !it.hasNext()) {
                lane.link.send(new RenewCall(batch, ttl, ok -> { }));
                batch = new ArrayList<>(RENEW_BATCH);
            }
        }
    }

    // ---- life cycle

    /**
     * Takes a reloaded {@code redis} block. Timeout, fallback, replicas hint and lease TTL apply to the next check;
     * another server, database, credential or key prefix makes every connection anew (state starting again).
     */
    public void reconfigure(RedisConfig next) {
        RedisConfig before = config;
        if (!before.keyPrefix().equals(next.keyPrefix())) {
            parts = new ScriptParts(next.keyPrefix(), replicaId);
        }
        config = next;
        if (!before.sameServer(next)) {
            ssl = next.tls() ? newSslContext() : null;
            Map<EventLoop, Lane> old = lanes;
            lanes = new ConcurrentHashMap<>();
            for (Lane lane : old.values()) {
                lane.link.close();
            }
            state.set(STARTING);
            connectAll();
            LOG.info("shared limits: the redis block now names " + next.endpoint() + "; connecting");
        } else {
            for (Lane lane : lanes.values()) {
                lane.link.timeoutMillis(next.timeoutMs());
            }
        }
        if (before.leaseTtlMs() != next.leaseTtlMs()) {
            ScheduledFuture<?> r = renewer;
            r.cancel(false);
            scheduleRenewal(next.leaseTtlMs());
        }
    }

    /**
     * Waits (blocking: not on an event loop) until Redis answered and every loop's connection is up, at most
     * {@code max}; true when they are. For a start that should not send its first requests to the fallback.
     */
    public boolean awaitUp(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (state.get() != UP || !lanes.values().stream().allMatch(l -> l.link.ready())) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /** Whether checks go to Redis now (the {@code gateway_shared_state_up} gauge). */
    public boolean up() {
        return state.get() == UP;
    }

    /** Checks that got no reply within {@code timeout_ms} (settlements and renewals included). */
    public long timeouts() {
        return timeouts.sum();
    }

    /** Connection attempts that failed and connections lost. */
    public long connectionErrors() {
        return connectionErrors.sum();
    }

    /** Errors Redis answered (wrong password, out of memory, a script error). */
    public long redisErrors() {
        return redisErrors.sum();
    }

    /** Checks the fallback decided. */
    public long fallbacks() {
        return fallbacks.sum();
    }

    /** Checks answered at once from a batch this replica took. */
    public long batched() {
        return batched.sum();
    }

    /** {@code nanos} hears the Redis round trip of every admission Redis answers, on the loop that asked. */
    public void timeChecks(LongConsumer nanos) {
        checkTimer = nanos;
    }

    public RedisConfig config() {
        return config;
    }

    /**
     * Closes once the calls on their way (the settlements of the exchanges that just ended, above all) have their
     * answers, or after {@code settleWithin}, whichever comes first; at once while Redis is away (what is deferred
     * then expires in Redis). Blocking: call it off the event loops (at shutdown, after the drain), never on one.
     */
    public void close(Duration settleWithin) {
        long deadline = System.nanoTime() + settleWithin.toNanos();
        try {
            for (Lane lane : lanes.values()) {
                EventLoop loop = lane.link.loop();
                if (loop.inEventLoop()) {
                    break; // never wait for a loop on itself
                }
                loop.submit(lane::closeBatches).await(Math.max(1, deadline - System.nanoTime()),
                        TimeUnit.NANOSECONDS);
                while (state.get() == UP && !closed && System.nanoTime() - deadline < 0) {
                    Future<Boolean> idle = loop.submit(lane::idle);
                    long left = deadline - System.nanoTime();
                    if (!idle.await(Math.max(1, left), TimeUnit.NANOSECONDS) || !idle.isSuccess()
                            || idle.getNow()) {
                        break;
                    }
                    Thread.sleep(5);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the loops are stopping already: nothing more will be delivered
        }
        close();
    }

    /** Stops probing and renewing and closes every connection; later checks go to the fallback. */
    @Override
    public void close() {
        closed = true;
        prober.cancel(false);
        renewer.cancel(false);
        for (Lane lane : lanes.values()) {
            lane.link.close();
        }
        resolver.close();
    }

    long nanoTime() {
        return nanoTime.getAsLong();
    }

    long epochMillis() {
        return epochMillis.getAsLong();
    }

    private long scriptNow() {
        return redisMicros == null ? -1 : redisMicros.getAsLong();
    }

    private static SslContext newSslContext() {
        try {
            // Netty 4.2 verifies the host name of a client's peer by default.
            return SslContextBuilder.forClient()
                    .sslProvider(OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK)
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot build the TLS client context for Redis", e);
        }
    }

    /** A key on a model: what a batch is for. */
    private record BatchKey(String key, String model) {
    }

    /** A request waiting for the batch being taken for its key on its model. */
    private record Waiter(KeyConfig key, ModelConfig model, long estimatedTokens, Promise<Admission> promise) {
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    // ---- the calls

    /** Writes the keys every script of one admission takes: per scope its usage hash and lease set, then its hold. */
    private static void keys(Resp out, SharedAdmission a) {
        for (int i = 0; i < a.count; i++) {
            out.raw(a.scoped[i].keys);
        }
        out.bulk(a.parts.holdHead, a.sequence);
        if (a.spendKey != null) {
            out.bulk(a.spendKey);
        }
    }

    /** How many keys {@link #keys} writes. */
    private static int keyCount(SharedAdmission a) {
        return 2 * a.count + (a.spendKey != null ? 2 : 1);
    }

    private static long[] integers(RedisMessage reply, int size) {
        if (reply instanceof IntegerArrayReply integers) {
            return integers.values().length == size ? integers.values() : null;
        }
        if (!(reply instanceof ArrayRedisMessage array) || array.children().size() != size) {
            return null;
        }
        long[] r = new long[size];
        for (int i = 0; i < size; i++) {
            if (!(array.children().get(i) instanceof IntegerRedisMessage n)) {
                return null;
            }
            r[i] = n.value();
        }
        return r;
    }

    /** admit.lua for one admission; its outcome completes the caller's promise. */
    private final class AdmitCall extends RedisCall {
        final SharedAdmission a;
        final Promise<Admission> promise;
        final KeyConfig key;
        final ModelConfig model;
        final long estimatedTokens;
        final double costEstimateUsd;
        /** The key on the model a batch was asked for, or null (this request alone). */
        final BatchKey batchKey;

        AdmitCall(SharedAdmission a, Promise<Admission> promise, KeyConfig key, ModelConfig model,
                long estimatedTokens, double costEstimateUsd, BatchKey batchKey) {
            this.a = a;
            this.promise = promise;
            this.key = key;
            this.model = model;
            this.estimatedTokens = estimatedTokens;
            this.costEstimateUsd = costEstimateUsd;
            this.batchKey = batchKey;
        }

        @Override
        protected LuaScript script() {
            return ADMIT;
        }

        @Override
        protected void encode(Resp out, boolean withBody) {
            scriptHeader(out, ADMIT, withBody, keyCount(a), 12 + 5 * a.count);
            keys(out, a);
            out.bulk(scriptNow());
            out.bulk(a.parts.idHead, a.sequence);
            out.bulk(a.leaseTtlMillis);
            out.bulk(HOLD_TTL_MILLIS);
            out.bulk(a.estimate);
            out.bulk(a.count);
            for (int i = 0; i < a.count; i++) {
                out.raw(a.scoped[i].admitLimits); // requests and tokens per minute, concurrency, daily tokens
                out.bulk(a.tokensReserved(i));
            }
            out.bulk(a.spendKey != null ? 1 : 0);
            out.bulk(a.month);
            out.bulk(a.dailyBudgetMicros);
            out.bulk(a.monthlyBudgetMicros);
            out.bulk(a.costEstimateMicros);
            out.bulk(a.want);
        }

        @Override
        protected void onReply(RedisMessage reply) {
            checkTimer.accept(System.nanoTime() - sentNanos());
            long[] r = integers(reply, 14);
            try {
                if (r == null) {
                    // An error reply (counted and logged by the lane) or a shape this code does not know.
                    unanswered();
                    promise.trySuccess(fallback(config, key, model, estimatedTokens, costEstimateUsd));
                    return;
                }
                a.decided(r, nanoTime());
                if (batchKey != null) {
                    lane(a.loop).batchAnswered(batchKey, a, model);
                }
            } catch (RuntimeException e) {
                // An answer this code cannot read: decided by the fallback, and the admission (if it was one) undone.
                LOG.log(Level.WARNING, "shared limits: cannot read the answer of admit.lua", e);
                unanswered();
                promise.trySuccess(fallback(config, key, model, estimatedTokens, costEstimateUsd));
                deliver(new SettleCall(a, 0, true, 0));
                return;
            }
            if (a.admitted() && a.holdsSlots) {
                leases.add(a);
            }
            promise.trySuccess(a);
            if (batchKey != null) {
                lane(a.loop).releaseWaiters(batchKey);
            }
        }

        /** No batch came of this check: the requests that waited for one are checked anew (or by the fallback). */
        private void unanswered() {
            if (batchKey != null) {
                Lane lane = lane(a.loop);
                a.loop.execute(() -> lane.releaseWaiters(batchKey));
            }
        }

        @Override
        protected void onFailure(Failure failure) {
            if (failure == Failure.TIMEOUT) {
                timeouts.increment();
            }
            unanswered();
            promise.trySuccess(fallback(config, key, model, estimatedTokens, costEstimateUsd));
            // The script may still run (slow Redis) or have run (lost connection): cancel it. A cancellation of a
            // check that never ran finds no hold and changes nothing.
            deliver(new SettleCall(a, 0, true, 0));
        }
    }

    /** settle.lua for one admission: a settlement, or (refund) the cancellation of a check that timed out. */
    private final class SettleCall extends RedisCall {
        /** Deliveries tried, at most this many: past them the hold and leases expire in Redis on their own. */
        static final int MAX_ATTEMPTS = 50;

        final SharedAdmission a;
        final long actual;
        final boolean refund;
        /** The requests of the admission's batch that were used: 1 for an admission alone, 0 for a refund. */
        final int used;
        int attempts;

        SettleCall(SharedAdmission a, long actual, boolean refund, int used) {
            this.a = a;
            this.actual = actual;
            this.refund = refund;
            this.used = used;
        }

        @Override
        protected LuaScript script() {
            return SETTLE;
        }

        @Override
        protected void encode(Resp out, boolean withBody) {
            attempts++;
            scriptHeader(out, SETTLE, withBody, keyCount(a), 12 + 6 * a.count);
            keys(out, a);
            out.bulk(scriptNow());
            out.bulk(a.parts.idHead, a.sequence);
            out.bulk(actual);
            out.bulk(refund ? 1 : 0);
            out.bulk(a.count);
            for (int i = 0; i < a.count; i++) {
                ScriptParts.Scoped s = a.scoped[i];
                out.raw(s.settleLimits); // requests and tokens per minute
                out.bulk(a.tokensReserved(i));
                out.raw(s.settleFlags); // counts concurrency, counts daily tokens
                out.bulk(a.limits[i].dailyTokens() > 0 ? a.estimate : 0);
            }
            out.bulk(a.spendKey != null ? 1 : 0);
            out.bulk(a.month);
            out.bulk(a.dayReservedMicros());
            out.bulk(a.monthReservedMicros());
            out.bulk(refund ? 0 : a.costMicros);
            out.bulk(a.want > 1 ? 1 : 0);
            out.bulk(used);
        }

        @Override
        protected void onReply(RedisMessage reply) {
            if (reply instanceof ErrorRedisMessage) {
                again(); // e.g. out of memory: it did not run
            }
        }

        @Override
        protected void onFailure(Failure failure) {
            if (failure == Failure.TIMEOUT) {
                timeouts.increment();
            }
            again();
        }

        /** Sent again later: settle.lua counts an admission once, whichever delivery arrives first. */
        private void again() {
            if (attempts < MAX_ATTEMPTS && !closed) {
                lane(a.loop).defer(this);
            }
        }
    }

    /** spend.lua: one key's shared spend, for the admin listener. */
    private final class SpendCall extends RedisCall {
        final String spendKey;
        final long month;
        final Promise<long[]> promise;

        SpendCall(String spendKey, long month, Promise<long[]> promise) {
            this.spendKey = spendKey;
            this.month = month;
            this.promise = promise;
        }

        @Override
        protected LuaScript script() {
            return SPEND;
        }

        @Override
        protected void encode(Resp out, boolean withBody) {
            scriptHeader(out, SPEND, withBody, 1, 2);
            out.bulk(spendKey);
            out.bulk(scriptNow());
            out.bulk(month);
        }

        @Override
        protected void onReply(RedisMessage reply) {
            promise.trySuccess(integers(reply, 2));
        }

        @Override
        protected void onFailure(Failure failure) {
            if (failure == Failure.TIMEOUT) {
                timeouts.increment();
            }
            promise.trySuccess(null);
        }
    }

    /** renew.lua over some leases (none: the probe, which proves Redis runs our scripts in time). */
    private final class RenewCall extends RedisCall {
        final List<SharedAdmission> batch;
        final int ttl;
        final java.util.function.Consumer<Boolean> then;

        RenewCall(List<SharedAdmission> batch, int ttl, java.util.function.Consumer<Boolean> then) {
            this.batch = batch;
            this.ttl = ttl;
            this.then = then;
        }

        @Override
        protected LuaScript script() {
            return RENEW;
        }

        @Override
        protected void encode(Resp out, boolean withBody) {
            int keys = 0;
            for (SharedAdmission a : batch) {
                for (int i = 0; i < a.count; i++) {
                    if (a.limits[i].concurrentRequests() > 0) {
                        keys++;
                    }
                }
            }
            scriptHeader(out, RENEW, withBody, keys, 2 + keys);
            for (SharedAdmission a : batch) {
                for (int i = 0; i < a.count; i++) {
                    if (a.limits[i].concurrentRequests() > 0) {
                        out.raw(a.scoped[i].leaseKeyPart);
                    }
                }
            }
            out.bulk(scriptNow());
            out.bulk(ttl);
            for (SharedAdmission a : batch) {
                for (int i = 0; i < a.count; i++) {
                    if (a.limits[i].concurrentRequests() > 0) {
                        out.bulk(a.parts.idHead, a.sequence);
                    }
                }
            }
        }

        @Override
        protected void onReply(RedisMessage reply) {
            then.accept(reply instanceof IntegerRedisMessage);
        }

        @Override
        protected void onFailure(Failure failure) {
            if (failure == Failure.TIMEOUT) {
                timeouts.increment();
            }
            then.accept(false);
        }
    }
}
