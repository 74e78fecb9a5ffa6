package io.modelgateway.core.limit.shared;

import io.netty.handler.codec.redis.RedisMessage;

/**
 * A reply that is an array of integers only (what admit.lua and spend.lua answer), read by {@link ReplyDecoder} into
 * one array of longs instead of a message per element. Holds no buffer.
 */
public final class IntegerArrayReply implements RedisMessage {
    private final long[] values;

    IntegerArrayReply(long[] values) {
        this.values = values;
    }

    /** The integers, in the reply's order; the array is the reply's own (do not change it). */
    public long[] values() {
        return values;
    }

    @Override
    public String toString() {
        return "IntegerArrayReply" + java.util.Arrays.toString(values);
    }
}
