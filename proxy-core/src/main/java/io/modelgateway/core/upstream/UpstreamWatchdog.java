package io.modelgateway.core.upstream;

import io.modelgateway.core.config.TimeoutsConfig;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The deadlines of one attempt at an upstream (its provider's {@code timeouts}): the first byte of the answer
 * ({@code first_byte_ms} from the request's sending), the gap between two pieces of it ({@code stream_idle_ms}), and
 * the whole exchange ({@code total_ms} from the caller's request, retries included). One timer, re-armed lazily:
 * what arrives only moves a field, and the timer looks again when it fires and sleeps on if it may.
 *
 * <p>While the gateway itself stopped reading the upstream because the client does not take what it has, the
 * upstream's silence is the gateway's doing, so the idle clock does not run (the total still does); it starts again
 * from the moment the client can take more. Confined to the exchange's event loop.
 *
 * <p>The exchange subclasses it (what it asks, {@link #waiting} and {@link #expired}, are methods, not two functions
 * held), and its timer is an entry in its event loop's {@link DeadlineWheel}: one object per attempt, nothing made
 * per arming, and a deadline noticed within two of the wheel's 10 ms ticks after it passed.
 */
abstract class UpstreamWatchdog extends DeadlineWheel.Entry {
    private final EventExecutor executor;
    private final long totalDeadline;
    private final long firstByteNanos;
    private final long idleNanos;
    private long sentNanos;
    /** When the upstream last sent anything of its answer (the idle clock). */
    private long lastNanos;
    private boolean pausedByClient;
    /** The wheel of the exchange's event loop, once armed. */
    private DeadlineWheel deadlines;

    /** @param startNanos when the caller's request began */
    UpstreamWatchdog(EventExecutor executor, long startNanos, TimeoutsConfig timeouts) {
        this.executor = executor;
        this.totalDeadline = startNanos + TimeUnit.MILLISECONDS.toNanos(timeouts.totalMs());
        this.firstByteNanos = TimeUnit.MILLISECONDS.toNanos(timeouts.firstByteMs());
        this.idleNanos = TimeUnit.MILLISECONDS.toNanos(timeouts.streamIdleMs());
    }

    /** Whether the answer's head has not arrived yet (the first-byte clock runs, not the idle one). */
    abstract boolean waiting();

    /** A deadline passed; {@code total}: the whole exchange's (else the first byte's or the idle gap's). */
    abstract void expired(boolean total);

    /** The request went out at {@code now} ({@code paused}: the client is not taking what it has). */
    void sent(long now, boolean paused) {
        cancel();
        sentNanos = now;
        pausedByClient = paused;
        arm(now);
    }

    /** Something of the answer arrived. */
    void received(long now) {
        lastNanos = now;
    }

    /** The client can take more ({@code writable}) or cannot. */
    void clientWritable(boolean writable, long now) {
        if (pausedByClient && writable) {
            // The idle clock starts again from here; a timer set for the total deadline while paused must not be the
            // next look.
            lastNanos = now;
            if (added()) {
                cancel();
                arm(now);
            }
        }
        pausedByClient = !writable;
    }

    void cancel() {
        if (deadlines != null) {
            deadlines.remove(this);
        }
    }

    /** The next deadline: the first byte while waiting for the head, else the idle gap; the total always. */
    private long nextDeadline() {
        boolean beforeHead = waiting();
        if (pausedByClient && !beforeHead) {
            return totalDeadline;
        }
        long at = beforeHead ? sentNanos + firstByteNanos : lastNanos + idleNanos;
        return Math.min(at, totalDeadline);
    }

    private void arm(long now) {
        if (deadlines == null) {
            deadlines = DeadlineWheel.of(executor);
        }
        deadlines.add(this, nextDeadline());
    }

    /** The wheel found the deadline it was added with passed: the exchange's, or one pushed back since. */
    @Override
    final void expire(long now) {
        if (now < nextDeadline()) {
            arm(now);
            return;
        }
        expired(now >= totalDeadline);
    }
}
