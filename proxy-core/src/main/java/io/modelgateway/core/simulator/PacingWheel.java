package io.modelgateway.core.simulator;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One timing wheel per event loop for the simulator's paced streams: a stream waiting for its next event sits in the
 * slot of the millisecond it is due, and one task per loop per millisecond (only while some stream waits) hands each
 * due stream its turn. Ten thousand streams at 20 events a second cost the loop a thousand wake-ups a second, not two
 * hundred thousand timers (a task object each, a priority queue of ten thousand to sift, a wake-up each).
 *
 * <p>A wait is rounded up to the next millisecond boundary, so an event is never early and at most a millisecond
 * late. Waits longer than the wheel's span go around it (each stream remembers its due tick). Event-loop confined: no
 * field needs a lock. A stream that is cancelled while it waits stays in its slot until due and then does nothing.
 */
final class PacingWheel {
    /** What waits on the wheel. */
    interface Waiter {
        /** Its time came. */
        void due();
    }

    private static final Logger LOG = Logger.getLogger(PacingWheel.class.getName());
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int SLOTS = 1024; // a power of two: a slot is a tick's low bits
    private static final FastThreadLocal<PacingWheel> WHEELS = new FastThreadLocal<>();

    private final EventLoop loop;
    /** The loop's clock (a test's embedded loop has one it moves by hand). */
    private final Ticker ticker;
    private final Waiter[][] slots = new Waiter[SLOTS][];
    private final long[][] dueTicks = new long[SLOTS][];
    /** The arrays a slot gets while its own are being handed out. */
    private Waiter[] spare = new Waiter[8];
    private long[] spareDue = new long[8];
    private final int[] counts = new int[SLOTS];
    private int waiting;
    /** Every tick before this one has been handed out. */
    private long nextTick;
    private boolean turning;
    private ScheduledFuture<?> nextTurn;
    private long nextTurnTick = Long.MAX_VALUE;

    private PacingWheel(EventLoop loop) {
        this.loop = loop;
        this.ticker = loop.ticker();
        this.nextTick = tick(ticker.nanoTime());
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = new Waiter[8];
            dueTicks[i] = new long[8];
        }
    }

    /** The wheel of {@code loop}; call on that loop. */
    static PacingWheel of(EventLoop loop) {
        PacingWheel wheel = WHEELS.get();
        if (wheel == null || wheel.loop != loop) {
            wheel = new PacingWheel(loop);
            WHEELS.set(wheel);
        }
        return wheel;
    }

    /** {@code waiter} is due {@code delayNanos} from now (rounded up to the next tick); call on the loop. */
    void add(Waiter waiter, long delayNanos) {
        addAt(waiter, ticker.nanoTime() + delayNanos);
    }

    /**
     * {@code waiter} is due at {@code dueNanos} on the loop's clock ({@link #clock()}), rounded up to the next tick;
     * a time already past is due on the next turn. Call on the loop.
     */
    void addAt(Waiter waiter, long dueNanos) {
        if (waiting == 0) {
            nextTick = Math.max(nextTick, tick(ticker.nanoTime())); // an idle wheel has no slots to catch up on
        }
        long due = Math.max(nextTick, tick(dueNanos + TICK_NANOS - 1));
        put((int) (due & (SLOTS - 1)), waiter, due);
        waiting++;
        if (!turning && due < nextTurnTick) {
            scheduleTurn(due);
        }
    }

    private void put(int slot, Waiter waiter, long due) {
        int n = counts[slot];
        if (n == slots[slot].length) {
            slots[slot] = Arrays.copyOf(slots[slot], n * 2);
            dueTicks[slot] = Arrays.copyOf(dueTicks[slot], n * 2);
        }
        slots[slot][n] = waiter;
        dueTicks[slot][n] = due;
        counts[slot] = n + 1;
    }

    /** The clock the wheel's times are on: the loop's (a test's embedded loop has one it moves by hand). */
    Ticker clock() {
        return ticker;
    }

    /** How many waiters are on the wheel. */
    int waiting() {
        return waiting;
    }

    /** The next turn, at the start of {@code tick} (instead of a later one already set). */
    private void scheduleTurn(long tick) {
        if (nextTurn != null) {
            nextTurn.cancel(false);
        }
        nextTurnTick = tick;
        nextTurn = loop.schedule(this::turn, Math.max(0, tick * TICK_NANOS - ticker.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Hands out every tick up to now, then sleeps until the next slot anyone waits in. */
    private void turn() {
        nextTurn = null;
        nextTurnTick = Long.MAX_VALUE;
        long now = tick(ticker.nanoTime());
        turning = true;
        try {
            while (nextTick <= now && waiting > 0) {
                long tick = nextTick++; // first: what a turn adds now is due a tick later at the soonest
                handOut(tick);
            }
        } finally {
            turning = false;
        }
        if (waiting > 0) {
            scheduleTurn(nextBusyTick());
        }
    }

    /** The first tick from {@link #nextTick} whose slot holds a waiter (maybe one a lap later: then it waits on). */
    private long nextBusyTick() {
        for (int i = 0; i < SLOTS; i++) {
            if (counts[(int) ((nextTick + i) & (SLOTS - 1))] > 0) {
                return nextTick + i;
            }
        }
        return nextTick;
    }

    /** The waiters of {@code tick}'s slot that are due now; those a lap or more later stay. */
    private void handOut(long tick) {
        int slot = (int) (tick & (SLOTS - 1));
        int n = counts[slot];
        if (n == 0) {
            return;
        }
        // The slot's waiters are taken out first (the slot gets the spare arrays): a waiter's turn may add it, or
        // another, back to this same slot, a lap later.
        Waiter[] ws = slots[slot];
        long[] dues = dueTicks[slot];
        slots[slot] = spare;
        dueTicks[slot] = spareDue;
        counts[slot] = 0;
        for (int i = 0; i < n; i++) {
            Waiter w = ws[i];
            ws[i] = null;
            if (dues[i] > tick) {
                put(slot, w, dues[i]); // not this lap
                continue;
            }
            waiting--;
            try {
                w.due();
            } catch (RuntimeException e) {
                // One stream's failure must not stop the wheel every other stream of the loop waits on.
                LOG.log(Level.WARNING, "a paced simulated stream failed", e);
            }
        }
        spare = ws;
        spareDue = dues;
    }

    private static long tick(long nanos) {
        return Math.floorDiv(nanos, TICK_NANOS);
    }
}
