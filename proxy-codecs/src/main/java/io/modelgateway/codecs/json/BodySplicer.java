package io.modelgateway.codecs.json;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * Rewrites one JSON string value of a request body without re-serialising it: the result is a composite
 * of retained slices of the original around the new bytes (DESIGN rule 2). Used for the model alias
 * (the caller's model name → the deployment's upstream name).
 */
public final class BodySplicer {
    private BodySplicer() {
    }

    /**
     * Returns a new buffer: {@code body[0, start)} + the JSON string of {@code value} + {@code body[end, len)},
     * offsets relative to the reader index. The body itself is neither consumed nor released; the returned
     * buffer holds its own references and must be released (or written) by the caller.
     */
    public static ByteBuf replaceString(ByteBufAllocator alloc, ByteBuf body, int start, int end, String value) {
        byte[] quoted = quote(value);
        int base = body.readerIndex();
        CompositeByteBuf out = alloc.compositeBuffer(3);
        if (start > 0) {
            out.addComponent(true, body.retainedSlice(base, start));
        }
        out.addComponent(true, Unpooled.wrappedBuffer(quoted));
        int tail = body.readableBytes() - end;
        if (tail > 0) {
            out.addComponent(true, body.retainedSlice(base + end, tail));
        }
        return out;
    }

    /** The JSON string literal of {@code value}, quotes included. */
    public static byte[] quote(String value) {
        byte[] inner = JsonStringEncoder.getInstance().quoteAsUTF8(value);
        byte[] out = new byte[inner.length + 2];
        out[0] = '"';
        System.arraycopy(inner, 0, out, 1, inner.length);
        out[out.length - 1] = '"';
        return out;
    }

    /** Convenience for tests and logs. */
    public static String toString(ByteBuf buf) {
        return buf.toString(StandardCharsets.UTF_8);
    }
}
