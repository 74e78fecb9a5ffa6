package io.modelgateway.core.upstream;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The deadlines of one event loop's upstream attempts ({@link UpstreamWatchdog}), on one timer: a hashed wheel of
 * {@value #SLOTS} slots, one per {@link #TICK_NANOS} tick, each a linked list of the entries due in that tick (or in
 * the same tick of a later turn). Adding and removing an entry is linking it in or out: nothing is allocated, no
 * priority queue is reordered. A {@code schedule} per attempt made a {@code ScheduledFutureTask} per request and
 * pushed it into (and, cancelled, out of) the loop's timer heap.
 *
 * <p>The timer runs only while the wheel holds entries, at a fixed rate of one tick; each run looks at the slots of
 * the ticks passed since the last (all of them, once, after a stall longer than a turn) and expires the entries
 * whose deadline has passed. An entry is therefore expired no earlier than its deadline and, with the loop not
 * stalled, less than two ticks after it — 20 ms, against timeouts configured in whole milliseconds and seconds. An
 * entry due in a later turn stays where it is until that turn comes.
 *
 * <p>Event-loop confined: an entry is added, removed and expired on the loop whose wheel it is in.
 */
final class DeadlineWheel implements Runnable {
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    static final int SLOTS = 256;
    private static final int MASK = SLOTS - 1;

    private static final FastThreadLocal<DeadlineWheel> WHEELS = new FastThreadLocal<>();

    /** What the wheel holds: linked into one slot while added. */
    abstract static class Entry {
        private Entry prev;
        private Entry next;
        private long deadline;
        /** The wheel it is in, or null; and its slot there. */
        private DeadlineWheel wheel;
        private int slot;

        /** The deadline passed ({@code now}: the clock as the wheel read it); the entry is out of the wheel. */
        abstract void expire(long now);

        final boolean added() {
            return wheel != null;
        }
    }

    private final EventExecutor loop;
    private final LongSupplier clock;
    private final Entry[] slots = new Entry[SLOTS];
    private int size;
    /** The last tick whose slot was looked at; entries are never put in its slot for this turn. */
    private long current;
    private ScheduledFuture<?> timer;

    DeadlineWheel(EventExecutor loop, LongSupplier clock) {
        this.loop = loop;
        this.clock = clock;
    }

    /** The wheel of {@code loop}, which must be the calling thread's: made at its first use. */
    static DeadlineWheel of(EventExecutor loop) {
        DeadlineWheel w = WHEELS.get();
        if (w == null || w.loop != loop) {
            // A thread that drives several executors (a test's embedded channels) gets one for the last; the
            // entries of an earlier one stay in it, on its own timer.
            w = new DeadlineWheel(loop, System::nanoTime);
            WHEELS.set(w);
        }
        return w;
    }

    /** The clock the deadlines are on. */
    long now() {
        return clock.getAsLong();
    }

    /** Adds {@code e} (not in a wheel) to be expired once {@code deadline} has passed. */
    void add(Entry e, long deadline) {
        if (e.wheel != null) {
            throw new IllegalStateException("already in a wheel");
        }
        if (size == 0 && timer == null) {
            current = tick(clock.getAsLong()) - 1;
            timer = loop.scheduleAtFixedRate(this, TICK_NANOS, TICK_NANOS, TimeUnit.NANOSECONDS);
        }
        e.deadline = deadline;
        e.wheel = this;
        // Never the slot of a tick already looked at in this turn: it would wait a whole turn.
        int slot = (int) (Math.max(tick(deadline), current + 1) & MASK);
        e.slot = slot;
        Entry head = slots[slot];
        e.prev = null;
        e.next = head;
        if (head != null) {
            head.prev = e;
        }
        slots[slot] = e;
        size++;
    }

    /** Takes {@code e} out; nothing when it is not in this wheel. */
    void remove(Entry e) {
        if (e.wheel != this) {
            return;
        }
        if (e.prev != null) {
            e.prev.next = e.next;
        } else {
            slots[e.slot] = e.next;
        }
        if (e.next != null) {
            e.next.prev = e.prev;
        }
        e.prev = null;
        e.next = null;
        e.wheel = null;
        size--;
    }

    /** One tick of the timer: expires what is due in the ticks passed since the last run. */
    @Override
    public void run() {
        long now = clock.getAsLong();
        long last = tick(now);
        for (long t = Math.max(current + 1, last - SLOTS + 1); t <= last; t++) {
            current = t;
            int slot = (int) (t & MASK);
            Entry e = slots[slot];
            while (e != null) {
                Entry next = e.next;
                if (e.deadline <= now) {
                    remove(e);
                    // It may add itself again (into a later tick's slot, never this one) or take others out: look
                    // at this slot's list again from its start.
                    e.expire(now);
                    e = slots[slot];
                    continue;
                }
                if (tick(e.deadline) <= t) {
                    // Due later in this very tick (the one the clock is in): the next tick's slot looks at it, not
                    // this slot a whole turn from now.
                    remove(e);
                    add(e, e.deadline);
                }
                e = next;
            }
        }
        current = Math.max(current, last);
        if (size == 0 && timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /** How many entries the wheel holds. */
    int size() {
        return size;
    }

    private static long tick(long nanos) {
        return Math.floorDiv(nanos, TICK_NANOS);
    }
}
