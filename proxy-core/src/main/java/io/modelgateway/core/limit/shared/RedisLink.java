package io.modelgateway.core.limit.shared;

import io.modelgateway.core.config.RedisConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.ssl.SslContext;
import io.netty.resolver.AddressResolverGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One connection to Redis, living on one of the gateway's event loops: the calls of the exchanges on that loop go
 * out on it and their replies complete them on that loop, so a limit check never crosses threads and needs no
 * lock. Calls are pipelined and matched to replies in order: each is encoded into the link's reused array
 * ({@link Resp}) and appended to one outgoing buffer, which goes to the socket in one write, once per turn of the
 * loop. Settlements go out the same way, although nobody waits for their replies: held back to share the write of
 * the loop's next admission, a settlement ran in Redis just ahead of that admission and added its time to the
 * admission's wait, for no saving of CPU (proxy-bench/README.md, issue #15, 2026-11-29 later).
 *
 * <p>On connect it authenticates, selects the database and loads every script, pipelined; it is {@link #ready()}
 * when all of them answered. Every call has a deadline ({@link #timeoutMillis}); past it the call fails with
 * {@link RedisCall.Failure#TIMEOUT} and its late reply is dropped. A connection whose oldest call has waited far
 * longer than that (a Redis that stopped answering without closing) is closed. Nothing reconnects by itself: the
 * owner calls {@link #connect()} (at most once per {@link #RECONNECT_NANOS}), which keeps a down Redis from being
 * hammered by every request.
 *
 * <p>Confined to its event loop: every method but {@link #connect()} and {@link #close()} must be called there.
 * The outgoing buffer is released by the channel once written, or here when the connection goes first; every reply
 * is released here after its call saw it.
 */
public final class RedisLink {
    /** What the owner hears from a link, on the link's loop. */
    public interface Events {
        /** Connected, authenticated, scripts loaded. */
        void ready(RedisLink link);

        /** A call timed out or the connection could not be made or was lost; {@code detail} has no secret. */
        void failed(RedisLink link, RedisCall.Failure failure, String detail);

        /** Redis answered an error (not NOSCRIPT, which is handled here): while connecting, or to a call. */
        void errorReply(RedisLink link, String message);
    }

    enum State {
        IDLE, CONNECTING, HANDSHAKE, READY, CLOSED
    }

    /** Calls waiting for a reply, at most; past it a call fails at once with BACKLOG. */
    static final int MAX_PENDING = 65_536;
    /** Connection attempts, at most one per this. */
    static final long RECONNECT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Connecting and the handshake get at least this long, whatever the per-call timeout. */
    static final int MIN_SETUP_MILLIS = 1000;
    /** A call unanswered this many timeouts (and at least {@link #MIN_SETUP_MILLIS}) means a dead connection. */
    static final int STUCK_TIMEOUTS = 20;

    private static final byte[] AUTH = bytes("AUTH");
    private static final byte[] SELECT = bytes("SELECT");
    private static final byte[] SCRIPT = bytes("SCRIPT");
    private static final byte[] LOAD = bytes("LOAD");
    private static final byte[] PING = bytes("PING");

    private final EventLoop loop;
    private final RedisConfig endpoint;
    private final SslContext ssl;
    private final List<LuaScript> scripts;
    private final Class<? extends SocketChannel> channelType;
    private final AddressResolverGroup<InetSocketAddress> resolver;
    private final Events events;

    private final ArrayDeque<RedisCall> pending = new ArrayDeque<>();
    /** The command being encoded. */
    private final Resp resp = new Resp();
    /** Commands written since the last flush, for the current channel; null when there are none. */
    private ByteBuf outbox;
    private final Runnable flush = this::flush;
    private final Runnable expire = this::expire;
    /** The per-call timeout; set by the owner from any thread (a reload), read on the loop. */
    private volatile int timeoutMillis;
    private Channel channel;
    /** Written on the loop only; volatile so that {@link #ready()} may be asked from elsewhere (start-up). */
    private volatile State state = State.IDLE;
    private long lastConnectNanos;
    private boolean everConnected;
    private boolean flushScheduled;
    private ScheduledFuture<?> timer;
    private int handshakeLeft;

    public RedisLink(EventLoop loop, RedisConfig endpoint, SslContext ssl, List<LuaScript> scripts,
            Class<? extends SocketChannel> channelType, AddressResolverGroup<InetSocketAddress> resolver,
            Events events) {
        this.loop = loop;
        this.endpoint = endpoint;
        this.ssl = ssl;
        this.scripts = List.copyOf(scripts);
        this.channelType = channelType;
        this.resolver = resolver;
        this.events = events;
        this.timeoutMillis = endpoint.timeoutMs();
    }

    public EventLoop loop() {
        return loop;
    }

    /** Connected and set up: calls may be sent (on the loop; elsewhere, a snapshot). */
    public boolean ready() {
        return state == State.READY;
    }

    /** Calls sent and not answered yet (timed-out ones included, until their late reply). On the loop. */
    public int pending() {
        return pending.size();
    }

    public void timeoutMillis(int millis) {
        this.timeoutMillis = millis;
    }

    /**
     * Starts connecting unless connected, connecting, closed, or the last attempt was less than
     * {@link #RECONNECT_NANOS} ago. Any thread; returns at once.
     */
    public void connect() {
        if (!loop.inEventLoop()) {
            execute(this::connect);
            return;
        }
        if (state != State.IDLE) {
            return;
        }
        long now = System.nanoTime();
        if (everConnected && now - lastConnectNanos < RECONNECT_NANOS) {
            return;
        }
        everConnected = true;
        lastConnectNanos = now;
        state = State.CONNECTING;
        int setupMillis = Math.max(MIN_SETUP_MILLIS, timeoutMillis);
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(channelType)
                .resolver(resolver)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, setupMillis)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ChannelPipeline p = ch.pipeline();
                        if (ssl != null) {
                            p.addLast("redis-tls", ssl.newHandler(ch.alloc(), endpoint.host(), endpoint.port()));
                        }
                        p.addLast("redis-decoder", new ReplyDecoder());
                        p.addLast("redis-replies", new Replies());
                    }
                });
        ChannelFuture f = b.connect(InetSocketAddress.createUnresolved(endpoint.host(), endpoint.port()));
        channel = f.channel();
        f.addListener(done -> {
            if (state != State.CONNECTING || channel != f.channel()) {
                f.channel().close();
                return;
            }
            if (!done.isSuccess()) {
                state = State.IDLE;
                channel = null;
                events.failed(this, RedisCall.Failure.CONNECTION, "cannot connect to " + endpoint.endpoint() + " ("
                        + describe(done.cause()) + ")");
                return;
            }
            handshake();
        });
    }

    /** Runs {@code task} on the loop, unless the loop is shutting down (then its channels close anyway). */
    private void execute(Runnable task) {
        try {
            loop.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            state = State.CLOSED;
        }
    }

    private void handshake() {
        state = State.HANDSHAKE;
        List<RedisCall> steps = new ArrayList<>();
        if (endpoint.password() != null) {
            steps.add(endpoint.username() == null
                    ? new Setup(AUTH, bytes(endpoint.password()))
                    : new Setup(AUTH, bytes(endpoint.username()), bytes(endpoint.password())));
        }
        if (endpoint.database() != 0) {
            steps.add(new Setup(SELECT, bytes(Integer.toString(endpoint.database()))));
        }
        for (LuaScript s : scripts) {
            steps.add(new Setup(SCRIPT, LOAD, s.body()));
        }
        steps.add(new Setup(PING));
        handshakeLeft = steps.size();
        long timeout = TimeUnit.MILLISECONDS.toNanos(Math.max(MIN_SETUP_MILLIS, timeoutMillis));
        for (RedisCall c : steps) {
            write(c, false, timeout);
        }
    }

    /**
     * Sends {@code call} if the link is ready and not backlogged; otherwise returns false and the call is not
     * touched (its {@code onFailure} is not called). On the loop.
     */
    public boolean send(RedisCall call) {
        if (state != State.READY || pending.size() >= MAX_PENDING) {
            return false;
        }
        write(call, false, TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        return true;
    }

    /**
     * Encodes {@code call} and appends it to the outgoing buffer. Its deadline is {@code timeoutNanos} from now,
     * or, for a call sent again with its script's body ({@code timeoutNanos} negative), the one it had.
     */
    private void write(RedisCall call, boolean withBody, long timeoutNanos) {
        resp.reset();
        call.encode(resp, withBody); // throws before anything is queued
        if (outbox == null) {
            outbox = channel.alloc().ioBuffer(Math.max(1024, resp.length()));
        }
        resp.writeTo(outbox);
        if (timeoutNanos >= 0) {
            long now = System.nanoTime();
            call.sentNanos = now;
            call.deadlineNanos = now + timeoutNanos;
        }
        pending.add(call);
        if (!flushScheduled) {
            flushScheduled = true;
            loop.execute(flush);
        }
        if (timer == null) {
            schedule(call.deadlineNanos);
        }
    }

    private void flush() {
        flushScheduled = false;
        ByteBuf out = outbox;
        if (out != null) {
            outbox = null;
            channel.writeAndFlush(out, channel.voidPromise());
        }
    }

    /** Drops what was written and not flushed: its connection is gone (its calls fail with it). */
    private void dropOutbox() {
        if (outbox != null) {
            outbox.release();
            outbox = null;
        }
    }

    private void schedule(long atNanos) {
        timer = loop.schedule(expire, Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Fails the calls past their deadline, closes a connection that stopped answering, and re-arms the timer. */
    private void expire() {
        timer = null;
        long now = System.nanoTime();
        RedisCall head = pending.peek();
        if (head != null && now - head.sentNanos > stuckNanos()) {
            channel.close(); // channelInactive fails what is pending
            return;
        }
        long next = Long.MAX_VALUE;
        List<RedisCall> expired = null;
        for (RedisCall c : pending) {
            if (c.timedOut) {
                continue;
            }
            if (c.deadlineNanos - now > 0) {
                next = c.deadlineNanos;
                break;
            }
            c.timedOut = true;
            if (expired == null) {
                expired = new ArrayList<>();
            }
            expired.add(c);
        }
        if (next == Long.MAX_VALUE && head != null) {
            next = head.sentNanos + stuckNanos();
        }
        if (next != Long.MAX_VALUE) {
            schedule(next);
        }
        if (expired != null) {
            if (state == State.HANDSHAKE) {
                channel.close();
                return;
            }
            // Outside the loop above: a failure handler may send more calls.
            for (RedisCall c : expired) {
                c.onFailure(RedisCall.Failure.TIMEOUT);
            }
            events.failed(this, RedisCall.Failure.TIMEOUT, "no answer from " + endpoint.endpoint() + " within "
                    + timeoutMillis + " ms");
        }
    }

    private long stuckNanos() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(MIN_SETUP_MILLIS, (long) STUCK_TIMEOUTS * timeoutMillis));
    }

    /** Closes the connection for good; pending calls fail with CONNECTION. Any thread. */
    public void close() {
        if (!loop.inEventLoop()) {
            execute(this::close);
            return;
        }
        state = State.CLOSED;
        dropOutbox();
        if (channel != null) {
            channel.close();
        }
        failAll();
    }

    private void failAll() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        RedisCall c;
        while ((c = pending.poll()) != null) {
            if (!c.timedOut) {
                c.onFailure(RedisCall.Failure.CONNECTION);
            }
        }
    }

    private void lost(Channel ch, String why) {
        if (ch != channel) {
            return;
        }
        channel = null;
        dropOutbox();
        boolean wasUp = state == State.READY || state == State.HANDSHAKE;
        if (state != State.CLOSED) {
            state = State.IDLE;
        }
        failAll();
        if (wasUp) {
            events.failed(this, RedisCall.Failure.CONNECTION, why);
        }
    }

    private void reply(RedisMessage msg) {
        RedisCall call = pending.poll();
        if (call == null) {
            channel.close(); // a reply to nothing: the stream is out of step
            return;
        }
        if (msg instanceof ErrorRedisMessage e && e.content().startsWith("NOSCRIPT") && call.script() != null) {
            // The command did not run (the script cache was emptied: a restart, SCRIPT FLUSH, FLUSHALL ... ASYNC
            // on some versions). Run it again with the body, which caches the script anew; a call that timed out
            // meanwhile is dropped, as it never ran there is nothing to undo.
            if (!call.timedOut) {
                if (state == State.READY) {
                    write(call, true, -1);
                } else {
                    call.onFailure(RedisCall.Failure.CONNECTION); // every call is answered once
                }
            }
            return;
        }
        if (call.timedOut) {
            return;
        }
        if (call instanceof Setup) {
            if (msg instanceof ErrorRedisMessage e) {
                events.errorReply(this, e.content());
                channel.close();
                return;
            }
            if (--handshakeLeft == 0 && state == State.HANDSHAKE) {
                state = State.READY;
                events.ready(this);
            }
            return;
        }
        if (msg instanceof ErrorRedisMessage e) {
            events.errorReply(this, e.content());
        }
        call.onReply(msg);
    }

    private final class Replies extends SimpleChannelInboundHandler<RedisMessage> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, RedisMessage msg) {
            // SimpleChannelInboundHandler releases msg after this returns.
            if (ctx.channel() == channel) {
                reply(msg);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            lost(ctx.channel(), "connection to " + endpoint.endpoint() + " lost");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** A command of the handshake: AUTH, SELECT, SCRIPT LOAD, PING. */
    private static final class Setup extends RedisCall {
        private final byte[][] parts;

        Setup(byte[]... parts) {
            this.parts = parts;
        }

        @Override
        protected void encode(Resp out, boolean withBody) {
            out.array(parts.length);
            for (byte[] p : parts) {
                out.bulk(p);
            }
        }

        @Override
        protected void onReply(RedisMessage reply) {
        }

        @Override
        protected void onFailure(Failure failure) {
        }
    }

    /** A {@code PING}; {@code then} runs with true on {@code PONG}, false on anything else or no answer. */
    public static RedisCall ping(java.util.function.Consumer<Boolean> then) {
        return new RedisCall() {
            @Override
            protected void encode(Resp out, boolean withBody) {
                out.array(1);
                out.bulk(PING);
            }

            @Override
            protected void onReply(RedisMessage reply) {
                then.accept(!(reply instanceof ErrorRedisMessage));
            }

            @Override
            protected void onFailure(Failure failure) {
                then.accept(false);
            }
        };
    }

    /** The text of a bulk-string reply, for tests and diagnostics. */
    static String text(RedisMessage msg) {
        return msg instanceof FullBulkStringRedisMessage b && !b.isNull()
                ? b.content().toString(StandardCharsets.UTF_8) : String.valueOf(msg);
    }

    private static String describe(Throwable t) {
        // Exception messages of the transport name addresses and ports, never a credential.
        String m = t.getMessage();
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
