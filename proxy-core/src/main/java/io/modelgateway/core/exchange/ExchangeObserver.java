package io.modelgateway.core.exchange;

/**
 * Receives every API exchange's record: once when it starts and once when it ends. Implementations are called
 * on event loops, concurrently from all of them, and must not block (no I/O on the caller's thread).
 */
public interface ExchangeObserver {
    ExchangeObserver NOOP = new ExchangeObserver() {
        @Override
        public void started(ExchangeRecord record) {
        }

        @Override
        public void ended(ExchangeRecord record) {
        }
    };

    /** The request was routed to an API endpoint (in-flight gauge up). */
    void started(ExchangeRecord record);

    /** The exchange is over and the record final (in-flight gauge down, counters, histograms, access log). */
    void ended(ExchangeRecord record);
}
