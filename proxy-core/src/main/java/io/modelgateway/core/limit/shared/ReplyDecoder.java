package io.modelgateway.core.limit.shared;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.FixedRedisMessagePool;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.codec.redis.SimpleStringRedisMessage;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the replies of a {@link RedisLink} (RESP2) whole, each into one message of Netty's Redis types (or, for an
 * array of integers only, the answer of our scripts, one {@link IntegerArrayReply}): an
 * {@link ArrayRedisMessage} of its elements, an {@link IntegerRedisMessage}, a {@link FullBulkStringRedisMessage}
 * (or its null), a simple string or an error. It does the work of Netty's {@code RedisDecoder} with the bulk-string
 * and array aggregators behind it in one pass: a reply is parsed once it has fully arrived, with no message per
 * element going through the pipeline and no slice per line; an integer is read from its digits in the buffer.
 *
 * <p>Bounded (design rule 8): an array of more than {@link #MAX_ARRAY} elements, a bulk string of more than
 * {@link #MAX_BULK} bytes, a line longer than {@link #MAX_LINE}, nesting deeper than {@link #MAX_DEPTH}, or bytes that
 * are not RESP close the connection at once, before anything is sized by what the peer announced; the connection's
 * calls then fail as for a lost connection. Nothing a well-behaved Redis answers our scripts comes near them
 * (admit.lua answers 13 integers; SCRIPT LOAD a 40-byte SHA).
 */
final class ReplyDecoder extends ByteToMessageDecoder {
    static final int MAX_ARRAY = 64;
    static final int MAX_BULK = 64 * 1024;
    static final int MAX_LINE = 64 * 1024;
    static final int MAX_DEPTH = 4;

    /** Not a whole reply yet. */
    private static final Object INCOMPLETE = new Object();

    /** Where the reply being parsed has got to in the buffer (its next byte). */
    private int at;
    private boolean broken;

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (!broken && in.isReadable()) {
            at = in.readerIndex();
            Object reply;
            try {
                reply = parse(in, 0);
            } catch (IllegalStateException notResp) {
                broken = true;
                in.skipBytes(in.readableBytes());
                ctx.close();
                return;
            }
            if (reply == INCOMPLETE) {
                return;
            }
            in.readerIndex(at);
            out.add(reply);
        }
        if (broken) {
            in.skipBytes(in.readableBytes());
        }
    }

    /** One value starting at {@link #at}; {@link #INCOMPLETE} when it has not fully arrived. */
    private Object parse(ByteBuf in, int depth) {
        if (at >= in.writerIndex()) {
            return INCOMPLETE;
        }
        byte type = in.getByte(at);
        int lineEnd = lineEnd(in, at + 1);
        if (lineEnd < 0) {
            return INCOMPLETE;
        }
        int start = at + 1;
        switch (type) {
            case ':' -> {
                long v = number(in, start, lineEnd);
                at = lineEnd + 2;
                IntegerRedisMessage cached = FixedRedisMessagePool.INSTANCE.getInteger(v);
                return cached != null ? cached : new IntegerRedisMessage(v);
            }
            case '+' -> {
                at = lineEnd + 2;
                return new SimpleStringRedisMessage(in.toString(start, lineEnd - start, StandardCharsets.UTF_8));
            }
            case '-' -> {
                at = lineEnd + 2;
                return new ErrorRedisMessage(in.toString(start, lineEnd - start, StandardCharsets.UTF_8));
            }
            case '$' -> {
                long length = number(in, start, lineEnd);
                if (length == -1) {
                    at = lineEnd + 2;
                    return FullBulkStringRedisMessage.NULL_INSTANCE;
                }
                if (length < 0 || length > MAX_BULK) {
                    throw new IllegalStateException("bulk string of " + length + " bytes");
                }
                int body = lineEnd + 2;
                if (body + length + 2 > in.writerIndex()) {
                    return INCOMPLETE;
                }
                if (in.getByte(body + (int) length) != '\r' || in.getByte(body + (int) length + 1) != '\n') {
                    throw new IllegalStateException("bulk string without its CRLF");
                }
                at = body + (int) length + 2;
                return new FullBulkStringRedisMessage(in.retainedSlice(body, (int) length));
            }
            case '*' -> {
                long count = number(in, start, lineEnd);
                if (count == -1) {
                    at = lineEnd + 2;
                    return ArrayRedisMessage.NULL_INSTANCE;
                }
                if (count < 0 || count > MAX_ARRAY || depth >= MAX_DEPTH) {
                    throw new IllegalStateException("array of " + count + " elements at depth " + depth);
                }
                at = lineEnd + 2;
                if (count > 0 && at < in.writerIndex() && in.getByte(at) == ':') {
                    Object integers = integers(in, (int) count);
                    if (integers != null) {
                        return integers;
                    }
                }
                List<RedisMessage> children = new ArrayList<>((int) count);
                for (int i = 0; i < count; i++) {
                    Object child = parse(in, depth + 1);
                    if (child == INCOMPLETE) {
                        children.forEach(ReferenceCountUtil::release);
                        return INCOMPLETE;
                    }
                    children.add((RedisMessage) child);
                }
                return new ArrayRedisMessage(children);
            }
            default -> throw new IllegalStateException("not a RESP type: " + type);
        }
    }

    /**
     * The {@code count} elements at {@link #at} when every one is an integer: an {@link IntegerArrayReply} (and
     * {@link #at} past them), {@link #INCOMPLETE} when they have not all arrived, or null (and {@link #at}
     * unchanged) when one is not an integer, for the general reading.
     */
    private Object integers(ByteBuf in, int count) {
        int start = at;
        long[] values = new long[count];
        for (int i = 0; i < count; i++) {
            if (at >= in.writerIndex()) {
                return INCOMPLETE;
            }
            if (in.getByte(at) != ':') {
                at = start;
                return null;
            }
            int lineEnd = lineEnd(in, at + 1);
            if (lineEnd < 0) {
                return INCOMPLETE;
            }
            values[i] = number(in, at + 1, lineEnd);
            at = lineEnd + 2;
        }
        return new IntegerArrayReply(values);
    }

    /** The index of the CR of the line starting at {@code from}, or -1 when its CRLF has not arrived. */
    private static int lineEnd(ByteBuf in, int from) {
        int limit = Math.min(in.writerIndex(), from + MAX_LINE + 1);
        int cr = in.indexOf(from, limit, (byte) '\r');
        if (cr < 0) {
            if (limit - from > MAX_LINE) {
                throw new IllegalStateException("line longer than " + MAX_LINE);
            }
            return -1;
        }
        if (cr + 1 >= in.writerIndex()) {
            return -1;
        }
        if (in.getByte(cr + 1) != '\n') {
            throw new IllegalStateException("CR without LF");
        }
        return cr;
    }

    /** The decimal integer in {@code [from, to)}: an optional '-' and 1 to 19 digits. */
    private static long number(ByteBuf in, int from, int to) {
        boolean negative = from < to && in.getByte(from) == '-';
        int i = negative ? from + 1 : from;
        if (i >= to || to - i > 19) {
            throw new IllegalStateException("not a number");
        }
        long v = 0;
        for (; i < to; i++) {
            int d = in.getByte(i) - '0';
            if (d < 0 || d > 9) {
                throw new IllegalStateException("not a number");
            }
            v = v * 10 + d;
            if (v < 0) {
                throw new IllegalStateException("number out of range");
            }
        }
        return negative ? -v : v;
    }
}
