package io.modelgateway.core.simulator;

import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Walks one {@link SimulatedResponse} in simulated time and hands each part to a {@link Sink}: the head after
 * {@code headerDelayMs}, then each stream event after its own delay, then the end (normal, cut, or a hang). Used by
 * both deliveries of the simulator: the standalone server writes the parts to its own client
 * ({@link SimulatedResponseWriter}), the gateway's in-process provider feeds them to the exchange's answer writer
 * ({@link SimulatorExchange}), so both answer alike in time and shape.
 *
 * <p>Waits are {@code schedule}d on the channel's event loop, never slept; everything runs there, so no field needs
 * a lock. While the client channel is not writable the walk stops and {@link #resume()} continues it; a sink that
 * {@link Sink#stopped() stopped} ends it, and {@link #cancel()} drops a pending timer.
 */
final class SimulatedPacer {

    /** Where the parts of the answer go. Called on the channel's event loop. */
    interface Sink {
        /** The status and headers are due; for a non-stream answer, its whole body with them. */
        void head();

        /** One stream event is due. */
        void event(SimEvent event);

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
    private int next;
    private boolean delayElapsed;
    private boolean waitingForWritability;
    private boolean cancelled;
    private ScheduledFuture<?> timer;

    SimulatedPacer(Channel channel, SimulatedResponse response, Sink sink) {
        this.channel = channel;
        this.response = response;
        this.sink = sink;
    }

    void start() {
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

    /** Stop, and let go of the timer. */
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
        List<SimEvent> events = response.events();
        while (next < events.size()) {
            if (stopped()) {
                return;
            }
            if (!channel.isWritable()) {
                waitingForWritability = true;
                return;
            }
            SimEvent event = events.get(next);
            if (event.delayNanos() > 0 && !delayElapsed) {
                delayElapsed = true;
                timer = channel.eventLoop().schedule(this::afterDelay, event.delayNanos(), TimeUnit.NANOSECONDS);
                return;
            }
            delayElapsed = false;
            next++;
            sink.event(event);
        }
        if (stopped()) {
            return;
        }
        if (response.stallAtEnd()) {
            sink.stalled();
        } else if (response.cutAtEnd()) {
            sink.cut();
        } else {
            sink.end();
        }
    }

    private void afterDelay() {
        timer = null;
        events();
    }
}
