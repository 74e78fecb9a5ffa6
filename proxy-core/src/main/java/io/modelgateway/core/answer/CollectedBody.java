package io.modelgateway.core.answer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * An upstream body collected whole before the caller sees anything of it (an answer translated as a whole, an error
 * body to redact): a copy in one buffer, within a cap of its own and within the process's {@link CollectedBudget}.
 * Each piece is reserved from the budget before it is kept; everything reserved is given back by {@link #release},
 * which the owner calls once the exchange ends, however it ends (also after {@link #take}).
 *
 * <p>Owned by one exchange, on its event loop.
 */
final class CollectedBody {
    /** First capacity when the upstream did not say the body's length. */
    private static final int INITIAL = 4096;

    /** Why a piece was not kept. */
    enum Refusal { NONE, TOO_LARGE, OVER_BUDGET }

    private final ByteBufAllocator alloc;
    private final CollectedBudget budget;
    private final long budgetLimit;
    private final int cap;
    /** The upstream's Content-Length (to size the buffer once), or -1. */
    private final long announced;
    private ByteBuf bytes;
    private long reserved;

    /**
     * @param cap         the most this body may hold
     * @param budgetLimit the most all collected bodies of the process may hold together
     * @param announced   the length the upstream announced, or -1
     */
    CollectedBody(ByteBufAllocator alloc, CollectedBudget budget, long budgetLimit, int cap, long announced) {
        this.alloc = alloc;
        this.budget = budget;
        this.budgetLimit = budgetLimit;
        this.cap = cap;
        this.announced = announced;
    }

    int cap() {
        return cap;
    }

    /** Copies {@code piece}'s readable bytes in (the piece is not consumed); refused past the cap or the budget. */
    Refusal add(ByteBuf piece) {
        int n = piece.readableBytes();
        if (n == 0) {
            return Refusal.NONE;
        }
        long have = bytes == null ? 0 : bytes.readableBytes();
        if (have + n > cap) {
            return Refusal.TOO_LARGE;
        }
        if (!budget.tryReserve(n, budgetLimit)) {
            return Refusal.OVER_BUDGET;
        }
        reserved += n;
        if (bytes == null) {
            // One buffer of the announced length when there is one (within the cap), else one that grows by doubling.
            int initial = announced >= n && announced <= cap ? (int) announced : Math.max(n, INITIAL);
            bytes = alloc.buffer(Math.min(initial, cap));
        }
        bytes.writeBytes(piece, piece.readerIndex(), n);
        return Refusal.NONE;
    }

    /** The body collected (the caller owns it now; its bytes stay reserved until {@link #release}). */
    ByteBuf take() {
        ByteBuf b = bytes != null ? bytes : Unpooled.EMPTY_BUFFER;
        bytes = null;
        return b;
    }

    /** Frees what is still held and gives the reservation back. Idempotent. */
    void release() {
        if (bytes != null) {
            bytes.release();
            bytes = null;
        }
        if (reserved > 0) {
            budget.release(reserved);
            reserved = 0;
        }
    }
}
