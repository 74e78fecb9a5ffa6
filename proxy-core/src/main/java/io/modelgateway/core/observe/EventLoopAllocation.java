package io.modelgateway.core.observe;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code gateway_event_loop_allocated_bytes_total}: the bytes the gateway's event-loop threads have allocated on the
 * heap since they started, read from the JVM's per-thread allocation counters at scrape time only (nothing on the
 * request path). Every request and stream event is handled on an event loop, so the counter's increase over a
 * fixed load, divided by the requests or events served, is the allocation per request or per event — the figure
 * {@code scripts/bench} reports beside the CPU per request. Absent where the JVM does not count allocations per
 * thread.
 */
public final class EventLoopAllocation {
    private EventLoopAllocation() {
    }

    /** Registers the counter for the loops of {@code group}; call once, before serving, off the loops. */
    public static void register(GatewayMetrics metrics, EventExecutorGroup group) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!(threads instanceof com.sun.management.ThreadMXBean counting)
                || !counting.isThreadAllocatedMemorySupported()) {
            return;
        }
        if (!counting.isThreadAllocatedMemoryEnabled()) {
            counting.setThreadAllocatedMemoryEnabled(true);
        }
        List<Long> ids = new ArrayList<>();
        for (EventExecutor loop : group) {
            ids.add(loop.submit(() -> Thread.currentThread().getId()).syncUninterruptibly().getNow());
        }
        long[] loopIds = ids.stream().mapToLong(Long::longValue).toArray();
        CounterWithCallback.builder()
                .name("gateway_event_loop_allocated_bytes_total")
                .help("Bytes allocated on the heap by the gateway's event-loop threads since they started.")
                .callback(cb -> cb.call(sum(counting.getThreadAllocatedBytes(loopIds))))
                .register(metrics.registry());
    }

    private static long sum(long[] perThread) {
        long total = 0;
        for (long n : perThread) {
            total += Math.max(0, n); // -1: a loop that has ended (shutting down)
        }
        return total;
    }
}
