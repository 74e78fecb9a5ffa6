package io.modelgateway.bench.loadgen;

import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * What one event loop measured, and the connections it drives. Written only by its event loop, so
 * recording is plain field and histogram updates with no synchronisation; the histograms are merged
 * into the result on the loop itself once the run has stopped ({@link LoadRun}).
 *
 * <p>The few counters the progress line shows are also published with a release store
 * ({@link AtomicLongArray#lazySet}, a plain store on x86) so the main thread can read them while the
 * loop runs.
 */
final class LoopStats {
    static final int P_COMPLETED = 0;
    static final int P_ERRORS = 1;
    static final int P_BUSY = 2;
    static final int P_OPEN = 3;

    final EventLoop loop;
    final RequestTemplate template;
    final List<Connection> connections = new ArrayList<>();

    // Microseconds. Auto-resizing: a stalled server can produce any value.
    final Histogram latency = new Histogram(3);
    final Histogram ttft = new Histogram(3);
    final Histogram itl = new Histogram(3);

    // Counted only inside the measured window.
    long completed;
    long streams;
    long streamEvents;   // content events of the streams completed in the window
    long events;         // content events received in the window, whichever exchange they belong to
    long warmupErrors;
    final long[] errorsByKind = new long[ErrorKind.values().length];
    final long[] errorsByStatus = new long[600];
    final long[] headsByStatus = new long[600]; // every answer head, 2xx included, whatever followed it

    // Every phase, for the progress line.
    private long progressCompleted;
    private long progressErrors;
    private long busy;
    private long open;
    final AtomicLongArray published = new AtomicLongArray(4);

    LoopStats(EventLoop loop, RequestTemplate template) {
        this.loop = loop;
        this.template = template;
    }

    static long micros(long nanos) {
        return TimeUnit.NANOSECONDS.toMicros(nanos + 500);
    }

    void completedAnyPhase() {
        published.lazySet(P_COMPLETED, ++progressCompleted);
    }

    void error(ErrorKind kind, boolean measuring) {
        if (measuring) {
            errorsByKind[kind.ordinal()]++;
        } else {
            warmupErrors++;
        }
        published.lazySet(P_ERRORS, ++progressErrors);
    }

    void statusError(int status, boolean measuring) {
        if (measuring) {
            errorsByStatus[Math.min(Math.max(status, 0), errorsByStatus.length - 1)]++;
        } else {
            warmupErrors++;
        }
        published.lazySet(P_ERRORS, ++progressErrors);
    }

    void head(int status, boolean measuring) {
        if (measuring) {
            headsByStatus[Math.min(Math.max(status, 0), headsByStatus.length - 1)]++;
        }
    }

    /** Exchanges sent and not yet ended; read on the loop. */
    long busyNow() {
        return busy;
    }

    void busy(int delta) {
        busy += delta;
        published.lazySet(P_BUSY, busy);
    }

    void open(int delta) {
        open += delta;
        published.lazySet(P_OPEN, open);
    }
}
