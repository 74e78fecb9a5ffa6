package io.modelgateway.core.exchange;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Wakes the gateway's io_uring event loops for their timers from one shared thread, so that a loop going to sleep
 * does not hand the kernel a timeout each time.
 *
 * <p>Why: Netty's io_uring loop, when it sleeps with a timer pending (the gateway's loops always have one: the
 * upstream deadline wheel ticks every 10 ms while a request is out, each connection's idle check runs on its own),
 * queues an {@code IORING_OP_TIMEOUT} with every wait, and the kernel starts a timer for it and completes it again as
 * soon as anything else completes. With one request at a time on one connection that is two timeouts per request
 * (the loop sleeps once for the request, once for the answer), on a paced stream one per event. Netty's epoll loop
 * re-arms its timer only when the deadline changes; this does the same for io_uring. Measured on the bench's
 * non-stream chat with one connection, ten alternated 4 s windows per series: the gateway against itself with
 * {@code -Dgateway.loopAlarm=false} 4.8–5.4 µs less CPU per request in three series, nearly all of it system time
 * (proxy-bench/README.md, "a kernel timeout with every wait").
 *
 * <p>How: each loop's handler is wrapped ({@link #wrap}). When the loop is about to sleep and its next timer is at
 * least {@link #MIN_DELAY_NANOS} away, the wrapper tells Netty's handler that no timer is pending (it then sleeps
 * until I/O or a wake-up, queueing no timeout) and posts the timer's time here; this class's thread sleeps until
 * the earliest posted time and then wakes that loop (Netty's own cross-thread wake-up, an eventfd write), which runs
 * its due timers as usual. The thread does nothing while the timers do not change: a loop posts a time only when
 * its next timer is another one, and wakes the thread only when the new time is earlier than the one it sleeps
 * until. A timer nearer than {@link #MIN_DELAY_NANOS} goes to the kernel as before, so short waits stay exact; a
 * posted one fires up to about a tenth of a millisecond late (the sleeping thread's timer slack and one wake-up),
 * against the gateway's timers of ten milliseconds and more.
 *
 * <p>{@code -Dgateway.loopAlarm=false} turns it off (every wait queues its timeout, as Netty does).
 */
public final class LoopAlarm {
    private static final Logger LOG = Logger.getLogger(LoopAlarm.class.getName());
    /** A timer nearer than this when the loop goes to sleep is the kernel's, as Netty does it. */
    static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** {@link Alarmed#at}: nothing posted. */
    private static final long NONE = Long.MIN_VALUE;
    /** {@link #sleepingUntil}: the thread is looking at the posted times (it looks again before it sleeps). */
    private static final long AWAKE = Long.MIN_VALUE;
    /** {@link #sleepingUntil}: the thread sleeps until woken (no time posted). */
    private static final long FOREVER = Long.MAX_VALUE;

    private static final VarHandle AT;

    static {
        try {
            AT = MethodHandles.lookup().findVarHandle(Alarmed.class, "at", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static volatile LoopAlarm shared;

    private final CopyOnWriteArrayList<Alarmed> loops = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile long sleepingUntil = AWAKE;

    LoopAlarm(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether {@link #wrap} wraps (not when {@code -Dgateway.loopAlarm=false}). */
    static boolean enabled() {
        return !"false".equals(System.getProperty("gateway.loopAlarm"));
    }

    /** {@code factory}'s handlers, each woken for its timers by the process's one alarm thread (started at first use). */
    static IoHandlerFactory wrap(IoHandlerFactory factory) {
        return executor -> new Alarmed(factory.newHandler(executor), shared());
    }

    private static LoopAlarm shared() {
        LoopAlarm a = shared;
        if (a == null) {
            synchronized (LoopAlarm.class) {
                a = shared;
                if (a == null) {
                    a = new LoopAlarm("gateway-loop-alarm");
                    shared = a;
                }
            }
        }
        return a;
    }

    /** Posts {@code at} (a {@link System#nanoTime} time) for {@code loop}; called on the loop. */
    void post(Alarmed loop, long at) {
        AT.setVolatile(loop, at);
        long s = sleepingUntil;
        if (s != AWAKE && (s == FOREVER || at - s < 0)) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        while (true) {
            sleepingUntil = AWAKE;
            long next = earliest(System.nanoTime(), true);
            sleepingUntil = next == NONE ? FOREVER : next;
            // A time posted while the scan above ran, earlier than the one about to be slept until: the loop that
            // posted it saw AWAKE and did not wake this thread, so look again rather than sleep past it.
            long posted = earliest(0, false);
            if (posted != NONE && (next == NONE || posted - next < 0)) {
                continue;
            }
            if (next == NONE) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, next - System.nanoTime());
            }
        }
    }

    /**
     * The earliest time the loops have posted, or {@link #NONE}; with {@code fireDue}, each loop whose time is due by
     * {@code now} is woken first and its time left out.
     */
    private long earliest(long now, boolean fireDue) {
        long next = NONE;
        for (Alarmed loop : loops) {
            long at = (long) AT.getVolatile(loop);
            if (at == NONE) {
                continue;
            }
            if (fireDue && at - now <= 0) {
                loop.fire(at);
            } else if (next == NONE || at - next < 0) {
                next = at;
            }
        }
        return next;
    }

    /**
     * One loop's io_uring handler, wrapped. Its fields but {@link #at} are the loop's own.
     */
    static final class Alarmed implements IoHandler {
        private final IoHandler handler;
        private final LoopAlarm alarm;
        /** The posted time, or {@link #NONE}; set by the loop, cleared by the alarm thread when it fires. */
        @SuppressWarnings("unused") // through AT
        private volatile long at = NONE;
        /** The loop's next timer (Netty's deadline) when it last went to sleep, and whether it was posted. */
        private long lastDeadline = -1;
        private boolean lastPosted;
        /** The loop's context, as it shows to Netty's handler while a posted timer waits: no timer pending. */
        private final NoTimer noTimer = new NoTimer();
        private boolean destroyed;

        Alarmed(IoHandler handler, LoopAlarm alarm) {
            this.handler = handler;
            this.alarm = alarm;
            alarm.loops.add(this);
        }

        @Override
        public void initialize() {
            handler.initialize();
        }

        @Override
        public int run(IoHandlerContext context) {
            if (!context.canBlock()) {
                return handler.run(context);
            }
            long deadline = context.deadlineNanos();
            if (deadline == -1) {
                lastDeadline = -1;
                lastPosted = false;
                return handler.run(context);
            }
            // The same next timer as at the last sleep, still posted: nothing to tell anyone. (Fired already: the
            // timer is due or nearly; look at it again.)
            if (deadline != lastDeadline || (lastPosted && (long) AT.getVolatile(this) == NONE)) {
                lastDeadline = deadline;
                long now = System.nanoTime();
                long delay = context.delayNanos(now);
                // Were the alarm's thread ever gone, the loop's timers would go to the kernel again, as Netty's.
                lastPosted = delay >= MIN_DELAY_NANOS && alarm.thread.isAlive();
                if (lastPosted) {
                    alarm.post(this, now + delay);
                }
            }
            if (!lastPosted) {
                return handler.run(context);
            }
            noTimer.context = context;
            return handler.run(noTimer);
        }

        /** Called by the alarm thread once {@code posted} is due: wakes the loop unless it posted another time. */
        void fire(long posted) {
            if (AT.compareAndSet(this, posted, NONE)) {
                synchronized (this) {
                    if (!destroyed) {
                        try {
                            handler.wakeup();
                        } catch (RuntimeException e) {
                            // Not expected of Netty's wake-up; the other loops' timers must still fire.
                            LOG.log(Level.WARNING, "waking an event loop for its timer failed", e);
                        }
                    }
                }
            }
        }

        @Override
        public void prepareToDestroy() {
            handler.prepareToDestroy();
        }

        @Override
        public void destroy() {
            alarm.loops.remove(this);
            synchronized (this) {
                destroyed = true;
            }
            handler.destroy();
        }

        @Override
        public IoRegistration register(IoHandle handle) throws Exception {
            return handler.register(handle);
        }

        @Override
        public void wakeup() {
            handler.wakeup();
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return handler.isCompatible(handleType);
        }
    }

    /** A loop's context with no timer pending: Netty's handler then sleeps until I/O or a wake-up. */
    private static final class NoTimer implements IoHandlerContext {
        private IoHandlerContext context;

        @Override
        public boolean canBlock() {
            return context.canBlock();
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return context.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return -1;
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            context.reportActiveIoTime(activeNanos);
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return context.shouldReportActiveIoTime();
        }
    }
}
