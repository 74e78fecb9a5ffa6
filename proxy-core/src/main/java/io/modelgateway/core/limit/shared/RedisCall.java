package io.modelgateway.core.limit.shared;

import io.netty.handler.codec.redis.RedisMessage;
import java.nio.charset.StandardCharsets;

/**
 * One command on a {@link RedisLink} and what to do with its answer. A call is answered exactly once, on the
 * link's event loop: {@link #onReply} with Redis's reply, or {@link #onFailure} when none came in time or the
 * connection went away. A call whose time ran out stays queued until its late reply arrives (replies come in
 * order), and that reply is dropped; whoever made the call decides, in {@link #onFailure}, how to undo what the
 * command may still do (the shared limiter sends a settlement that is a no-op for a command that never ran).
 *
 * <p>Confined to the link's event loop; the fields the link keeps here are plain.
 */
public abstract class RedisCall {
    /** Why a call got no reply. */
    public enum Failure {
        /** No reply within the timeout; the command may still run. */
        TIMEOUT,
        /** The connection is not up, broke, or was closed; a command already sent may have run. */
        CONNECTION,
        /** Too many calls waiting on the link; never sent. */
        BACKLOG
    }

    private static final byte[] EVALSHA = "EVALSHA".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVAL = "EVAL".getBytes(StandardCharsets.US_ASCII);

    long sentNanos;
    long deadlineNanos;
    boolean timedOut;

    /** When the call was written (System.nanoTime), first or only time; on the link's loop. */
    protected final long sentNanos() {
        return sentNanos;
    }

    /** The script this call runs by {@code EVALSHA}, or null for a plain command. */
    protected LuaScript script() {
        return null;
    }

    /**
     * Writes the command into {@code out}.
     *
     * @param withBody for a script call: {@code EVAL} with the body instead of {@code EVALSHA} (after
     *                 {@code NOSCRIPT})
     */
    protected abstract void encode(Resp out, boolean withBody);

    /**
     * The reply ({@code ErrorRedisMessage} for an error other than {@code NOSCRIPT}, which the link handles). The
     * link releases it when this returns, so keep nothing of it.
     */
    protected abstract void onReply(RedisMessage reply);

    protected abstract void onFailure(Failure failure);

    /** The first parts of a script call: {@code EVALSHA sha numkeys} (or {@code EVAL body numkeys}). */
    protected static void scriptHeader(Resp out, LuaScript script, boolean withBody, int keys, int args) {
        out.array(3 + keys + args);
        out.bulk(withBody ? EVAL : EVALSHA);
        out.bulk(withBody ? script.body() : script.sha());
        out.bulk(keys);
    }
}
