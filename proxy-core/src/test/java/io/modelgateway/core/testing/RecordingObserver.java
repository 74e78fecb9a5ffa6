package io.modelgateway.core.testing;

import io.modelgateway.core.exchange.ExchangeObserver;
import io.modelgateway.core.exchange.ExchangeRecord;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Collects the record of every exchange that ended. A record ends on the event loop, possibly just after the
 * client has read the last byte, so tests wait for it with {@link #next}.
 */
public final class RecordingObserver implements ExchangeObserver {
    private final BlockingQueue<ExchangeRecord> ended = new LinkedBlockingQueue<>();

    @Override
    public void started(ExchangeRecord record) {
    }

    @Override
    public void ended(ExchangeRecord record) {
        ended.add(record);
    }

    /** The next record to end, waiting up to 5 s. */
    public ExchangeRecord next() throws InterruptedException {
        ExchangeRecord r = ended.poll(5, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no exchange ended within 5 s");
        }
        return r;
    }

    /** The record of the request a response answered (by its {@code x-request-id}), waiting up to 5 s. */
    public ExchangeRecord of(java.net.http.HttpResponse<?> response) throws InterruptedException {
        String id = response.headers().firstValue("x-request-id").orElseThrow();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        java.util.List<ExchangeRecord> others = new java.util.ArrayList<>();
        try {
            while (true) {
                ExchangeRecord r = ended.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (r == null) {
                    throw new AssertionError("the exchange " + id + " did not end within 5 s");
                }
                if (r.requestId().equals(id)) {
                    return r;
                }
                others.add(r);
            }
        } finally {
            ended.addAll(others);
        }
    }

    /** Forgets records not yet taken. */
    public void clear() {
        ended.clear();
    }
}
