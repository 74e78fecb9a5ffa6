package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.ExchangeObserver;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Fans one exchange's calls out to several observers (typically {@link GatewayMetrics} and
 * {@link AccessLog}), in the order given. Runs on the caller's event loop like its parts. A part that
 * throws does not keep the others from seeing the record, and never reaches the exchange that called it;
 * the first such failure is logged, later ones are not (a log line per request would be worse than the
 * bug it reports).
 */
public final class CompositeObserver implements ExchangeObserver {
    private static final Logger LOG = Logger.getLogger(CompositeObserver.class.getName());

    private final ExchangeObserver[] observers;
    private final AtomicBoolean reported = new AtomicBoolean();

    private CompositeObserver(ExchangeObserver[] observers) {
        this.observers = observers;
    }

    /**
     * One observer for all of {@code observers}; nulls and {@link ExchangeObserver#NOOP} are left out, so
     * none gives NOOP and one gives that observer itself (no indirection).
     */
    public static ExchangeObserver of(ExchangeObserver... observers) {
        List<ExchangeObserver> parts = new ArrayList<>(observers.length);
        for (ExchangeObserver o : observers) {
            if (o == null || o == ExchangeObserver.NOOP) {
                continue;
            }
            if (o instanceof CompositeObserver c) {
                parts.addAll(List.of(c.observers));
            } else {
                parts.add(o);
            }
        }
        if (parts.isEmpty()) {
            return ExchangeObserver.NOOP;
        }
        if (parts.size() == 1) {
            return parts.get(0);
        }
        return new CompositeObserver(parts.toArray(new ExchangeObserver[0]));
    }

    @Override
    public void started(ExchangeRecord record) {
        for (ExchangeObserver o : observers) {
            try {
                o.started(record);
            } catch (RuntimeException e) {
                report(o, e);
            }
        }
    }

    @Override
    public void ended(ExchangeRecord record) {
        for (ExchangeObserver o : observers) {
            try {
                o.ended(record);
            } catch (RuntimeException e) {
                report(o, e);
            }
        }
    }

    private void report(ExchangeObserver o, RuntimeException e) {
        if (reported.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "exchange observer " + o.getClass().getName()
                    + " failed (further failures are not logged)", e);
        }
    }
}
