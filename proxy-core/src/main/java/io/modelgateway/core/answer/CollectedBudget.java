package io.modelgateway.core.answer;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes that all exchanges of the process hold of upstream answers collected whole (answers translated as a
 * whole, error bodies collected before they are redacted): one shared counter, so that many large answers at once
 * are refused rather than growing the process. An exchange reserves each piece before it keeps it
 * and gives back everything it reserved when it ends, however it ends.
 *
 * <p>Thread-safe and lock-free: one compare-and-set per reserved piece, on the collecting paths only (never per
 * stream event, never for a same-style 2xx answer). The limit is passed in by the caller (it comes from the current
 * config, which a reload may change).
 */
public final class CollectedBudget {
    private final AtomicLong held = new AtomicLong();

    /**
     * Reserves {@code bytes} unless the bytes held would then pass {@code limit}.
     *
     * @return whether the bytes were reserved (the caller must {@link #release} them later)
     */
    public boolean tryReserve(long bytes, long limit) {
        while (true) {
            long now = held.get();
            long next = now + bytes;
            if (next > limit || next < 0) {
                return false;
            }
            if (held.compareAndSet(now, next)) {
                return true;
            }
        }
    }

    /** Gives back bytes reserved before. */
    public void release(long bytes) {
        if (bytes > 0) {
            held.addAndGet(-bytes);
        }
    }

    /** Bytes reserved and not given back, across all exchanges. */
    public long held() {
        return held.get();
    }
}
