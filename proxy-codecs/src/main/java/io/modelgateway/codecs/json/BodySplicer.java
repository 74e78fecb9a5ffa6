package io.modelgateway.codecs.json;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Rewrites a request body without re-serialising it (design rule 2): the original's bytes around the new ones, copied
 * into one buffer when the result is at most {@value #COPY_LIMIT} bytes, else a composite of retained slices of the
 * original around the new bytes. A small body costs less copied than sliced: a composite is an object per piece
 * twice over (the slice and its component), and the HTTP encoder that writes it upstream merges it into its head's
 * buffer through a {@code java.nio} view of the whole composite, itself a heap copy. Used for the model alias (the
 * caller's model name → the deployment's upstream name), {@code encoding_format} when the gateway encodes base64 itself, and members a
 * model does not take (GD-19). Offsets come from {@link RequestPeek} and are relative to the reader index.
 */
public final class BodySplicer {
    private static final byte[] NOTHING = new byte[0];
    private static final Comparator<Edit> BY_START = Comparator.comparingInt(Edit::start);
    /** The longest result copied into one buffer; a longer one is a composite of slices (no copy of the body). */
    static final int COPY_LIMIT = 16 * 1024;

    /** Replace {@code body[start, end)} with {@code bytes}. */
    public record Edit(int start, int end, byte[] bytes) {
    }

    private BodySplicer() {
    }

    /** An edit replacing a JSON string token (quotes included) with the string {@code value}. */
    public static Edit string(int start, int end, String value) {
        return new Edit(start, end, quote(value));
    }

    /**
     * An edit removing one member of an object, {@code body[start, end)} being its name through its value,
     * together with one adjacent comma, so the result stays valid JSON.
     */
    public static Edit removeMember(ByteBuf body, int start, int end) {
        int base = body.readerIndex();
        int len = body.readableBytes();
        int after = end;
        while (after < len && isSpace(body.getByte(base + after))) {
            after++;
        }
        if (after < len && body.getByte(base + after) == ',') {
            return new Edit(start, after + 1, NOTHING); // "a":1, → through the comma
        }
        int before = start - 1;
        while (before >= 0 && isSpace(body.getByte(base + before))) {
            before--;
        }
        if (before >= 0 && body.getByte(base + before) == ',') {
            return new Edit(before, end, NOTHING); // the last member: the comma before it goes
        }
        return new Edit(start, end, NOTHING);
    }

    /**
     * Applies non-overlapping edits. The body is neither consumed nor released; the returned buffer holds its
     * own references and must be released (or written) by the caller.
     */
    public static ByteBuf splice(ByteBufAllocator alloc, ByteBuf body, Edit... edits) {
        Edit[] sorted = edits;
        if (edits.length > 1) {
            sorted = edits.clone();
            Arrays.sort(sorted, BY_START);
        }
        long length = body.readableBytes();
        int at = 0;
        for (Edit e : sorted) {
            if (e.start() < at) {
                throw new IllegalArgumentException("overlapping edits");
            }
            length += e.bytes().length - (e.end() - e.start());
            at = e.end();
        }
        return length <= COPY_LIMIT ? copied(alloc, body, sorted, (int) length) : sliced(alloc, body, sorted);
    }

    /** The result in one buffer of {@code length} bytes. */
    private static ByteBuf copied(ByteBufAllocator alloc, ByteBuf body, Edit[] sorted, int length) {
        int base = body.readerIndex();
        ByteBuf out = alloc.directBuffer(length);
        int at = 0;
        for (Edit e : sorted) {
            copy(body, base + at, e.start() - at, out);
            out.writeBytes(e.bytes());
            at = e.end();
        }
        copy(body, base + at, body.readableBytes() - at, out);
        return out;
    }

    /** {@code n} bytes of {@code src} from {@code index} to the end of {@code dst}, read from the source (no view). */
    private static void copy(ByteBuf src, int index, int n, ByteBuf dst) {
        src.getBytes(index, dst, dst.writerIndex(), n);
        dst.writerIndex(dst.writerIndex() + n);
    }

    /** The result as a composite of retained slices of {@code body} and the edits' bytes. */
    private static ByteBuf sliced(ByteBufAllocator alloc, ByteBuf body, Edit[] sorted) {
        int base = body.readerIndex();
        CompositeByteBuf out = alloc.compositeBuffer(2 * sorted.length + 1);
        int at = 0;
        for (Edit e : sorted) {
            if (e.start() > at) {
                out.addComponent(true, body.retainedSlice(base + at, e.start() - at));
            }
            if (e.bytes().length > 0) {
                out.addComponent(true, Unpooled.wrappedBuffer(e.bytes()));
            }
            at = e.end();
        }
        int tail = body.readableBytes() - at;
        if (tail > 0) {
            out.addComponent(true, body.retainedSlice(base + at, tail));
        }
        return out;
    }

    /** Shorthand for one string replacement. */
    public static ByteBuf replaceString(ByteBufAllocator alloc, ByteBuf body, int start, int end, String value) {
        return splice(alloc, body, string(start, end, value));
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

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
