package io.modelgateway.core.simulator;

import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Walks one {@link SimulatedResponse} in simulated time and hands each part to a {@link Sink}: the head after
 * {@code headerDelayMs}, then each stream event after its own delay, then the end (normal, cut, or a hang). Used by
 * both deliveries of the simulator: the standalone server writes the parts to its own client
 * ({@link SimulatedResponseWriter}), the gateway's in-process provider feeds them to the exchange's answer writer
 * ({@link SimulatorExchange}), so both answer alike in time and shape.
 *
 * <p>The pace is kept on a timeline: an event is due its delay after the previous one was <em>due</em>, not after it
 * was written, so a loop running late (thousands of streams, a busy machine) does not stretch every gap after it —
 * the events that fell due meanwhile go out together, as a provider's tokens queued behind a slow reader would, and
 * the stream keeps its rate. The events handed over in one turn are followed by one {@link Sink#flush()}.
 *
 * <p>Waits are never slept: the head's delay is {@code schedule}d on the channel's event loop, the gaps between events
 * wait on the loop's {@link PacingWheel} (one timer per loop per millisecond, not one per event); everything runs
 * there, so no field needs a lock. While the client channel is not writable the walk stops and {@link #resume()}
 * continues it; a sink that {@link Sink#stopped() stopped} ends it, and {@link #cancel()} drops a pending timer (a
 * wait on the wheel ends when due, and then does nothing).
 */
final class SimulatedPacer implements PacingWheel.Waiter {

    /** Where the parts of the answer go. Called on the channel's event loop. */
    interface Sink {
        /** The status and headers are due; for a non-stream answer, its whole body with them. */
        void head();

        /**
         * Event {@code index} of {@code events} is due; it may wait for the {@link #flush()} that follows the turn's
         * last event. Read it with {@link SimEvents#length} and {@link SimEvents#writeTo}: no event object is made.
         */
        void event(SimEvents events, int index);

        /** The events handed over this turn are all there: send them. */
        void flush();

        /** The stream ended normally after its last event. */
        void end();

        /** The stream is cut after its last event (the provider died). */
        void cut();

        /** The stream hangs after its last event (the provider stopped sending, its connection open). */
        void stalled();

        /** The sink takes nothing more (its client gone, its answer over): the walk ends. */
        boolean stopped();
    }

    private final Channel channel;
    private final SimulatedResponse response;
    private final Sink sink;
    /** When the part handed over last was due, on the wheel's clock: the timeline the next delay counts from. */
    private long dueNanos;
    private int next;
    private boolean delayElapsed;
    private boolean waitingForWritability;
    private boolean cancelled;
    private ScheduledFuture<?> timer;
    /** The channel's loop's wheel, once the stream first waits on it. */
    private PacingWheel wheel;

    SimulatedPacer(Channel channel, SimulatedResponse response, Sink sink) {
        this.channel = channel;
        this.response = response;
        this.sink = sink;
    }

    void start() {
        dueNanos = channel.eventLoop().ticker().nanoTime() + TimeUnit.MILLISECONDS.toNanos(response.headerDelayMs());
        long delay = response.headerDelayMs();
        if (delay > 0) {
            timer = channel.eventLoop().schedule(this::head, delay, TimeUnit.MILLISECONDS);
        } else {
            head();
        }
    }

    /** How many stream events were handed to the sink so far. */
    int eventsDelivered() {
        return next;
    }

    /** The channel became writable again. */
    void resume() {
        if (waitingForWritability && channel.isWritable()) {
            waitingForWritability = false;
            events();
        }
    }

    /** Stop, and let go of the timer (a wait on the wheel ends when due, and then does nothing). */
    void cancel() {
        cancelled = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private boolean stopped() {
        return cancelled || sink.stopped();
    }

    private void head() {
        timer = null;
        if (stopped()) {
            return;
        }
        sink.head();
        if (response.isStream()) {
            events();
        }
    }

    private void events() {
        SimEvents events = response.streamEvents();
        long now = 0;
        boolean clockRead = false; // read once per turn, when the first wait is met
        boolean handed = false;
        while (next < events.size()) {
            if (stopped()) {
                return;
            }
            if (!channel.isWritable()) {
                waitingForWritability = true;
                flush(handed);
                return;
            }
            long delay = events.delayNanos(next);
            if (delay > 0 && !delayElapsed) {
                if (!clockRead) {
                    if (wheel == null) {
                        wheel = PacingWheel.of(channel.eventLoop());
                    }
                    now = wheel.clock().nanoTime();
                    clockRead = true;
                }
                dueNanos += delay;
                if (dueNanos - now > 0) {
                    delayElapsed = true;
                    flush(handed);
                    wheel.addAt(this, dueNanos);
                    return;
                }
                // Due already (the loop ran late): goes out with the others of this turn.
            }
            delayElapsed = false;
            sink.event(events, next++);
            handed = true;
        }
        if (stopped()) {
            return;
        }
        flush(handed);
        if (response.stallAtEnd()) {
            sink.stalled();
        } else if (response.cutAtEnd()) {
            sink.cut();
        } else {
            sink.end();
        }
    }

    private void flush(boolean handed) {
        if (handed && !stopped()) {
            sink.flush();
        }
    }

    /** The wait before the next event is over (the loop's {@link PacingWheel} says so). */
    @Override
    public void due() {
        if (!cancelled) {
            events();
        }
    }
}
