package io.modelgateway.core.limit.shared;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Writes Redis commands in RESP (arrays of bulk strings) straight into the buffer that goes to the socket: no
 * message objects, and numbers written as digits without a string in between.
 */
public final class Resp {
    private static final byte[] CRLF = {'\r', '\n'};

    private Resp() {
    }

    /** {@code *count\r\n}: a command of {@code count} parts follows. */
    public static void array(ByteBuf out, int count) {
        out.writeByte('*');
        digits(out, count);
        out.writeBytes(CRLF);
    }

    public static void bulk(ByteBuf out, byte[] bytes) {
        out.writeByte('$');
        digits(out, bytes.length);
        out.writeBytes(CRLF);
        out.writeBytes(bytes);
        out.writeBytes(CRLF);
    }

    /** A bulk string of the UTF-8 bytes of {@code text}. */
    public static void bulk(ByteBuf out, CharSequence text) {
        bulk(out, text, "", "");
    }

    /** One bulk string made of the UTF-8 bytes of {@code a}, {@code b} and {@code c} in a row (a key's parts). */
    public static void bulk(ByteBuf out, CharSequence a, CharSequence b, CharSequence c) {
        out.writeByte('$');
        digits(out, ByteBufUtil.utf8Bytes(a) + ByteBufUtil.utf8Bytes(b) + ByteBufUtil.utf8Bytes(c));
        out.writeBytes(CRLF);
        ByteBufUtil.writeUtf8(out, a);
        ByteBufUtil.writeUtf8(out, b);
        ByteBufUtil.writeUtf8(out, c);
        out.writeBytes(CRLF);
    }

    /** A bulk string of the decimal digits of {@code value}. */
    public static void bulk(ByteBuf out, long value) {
        out.writeByte('$');
        digits(out, length(value));
        out.writeBytes(CRLF);
        digits(out, value);
        out.writeBytes(CRLF);
    }

    static int length(long value) {
        if (value == Long.MIN_VALUE) {
            return 20;
        }
        int n = value < 0 ? 2 : 1;
        long v = Math.abs(value);
        while (v >= 10) {
            v /= 10;
            n++;
        }
        return n;
    }

    static void digits(ByteBuf out, long value) {
        if (value == Long.MIN_VALUE) {
            out.writeCharSequence("-9223372036854775808", java.nio.charset.StandardCharsets.US_ASCII);
            return;
        }
        if (value < 0) {
            out.writeByte('-');
            value = -value;
        }
        long div = 1;
        while (value / div >= 10) {
            div *= 10;
        }
        for (; div > 0; div /= 10) {
            out.writeByte((int) ('0' + value / div % 10));
        }
    }
}
