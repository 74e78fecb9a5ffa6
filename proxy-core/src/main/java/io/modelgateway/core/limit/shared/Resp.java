package io.modelgateway.core.limit.shared;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;

/**
 * Writes Redis commands in RESP (arrays of bulk strings) straight into the buffer that goes to the socket: no
 * message objects, and numbers written as digits without a string in between.
 */
public final class Resp {
    private static final byte[] CRLF = {'\r', '\n'};
    /** The most characters a long takes in decimal ({@code -9223372036854775808}). */
    private static final int DIGITS = 20;
    private static final byte[] MIN_VALUE = "-9223372036854775808".getBytes(StandardCharsets.US_ASCII);
    /** Each event loop's digits of the number being written. */
    private static final FastThreadLocal<byte[]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[DIGITS];
        }
    };

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
        byte[] d = SCRATCH.get();
        int from = toDigits(d, value);
        int n = DIGITS - from;
        out.ensureWritable(n + 7);
        out.writeByte('$');
        if (n >= 10) {
            out.writeByte('0' + n / 10);
        }
        out.writeByte('0' + n % 10);
        out.writeBytes(CRLF);
        out.writeBytes(d, from, n);
        out.writeBytes(CRLF);
    }

    static int length(long value) {
        return DIGITS - toDigits(SCRATCH.get(), value);
    }

    static void digits(ByteBuf out, long value) {
        byte[] d = SCRATCH.get();
        int from = toDigits(d, value);
        out.writeBytes(d, from, DIGITS - from);
    }

    /**
     * Writes the decimal digits of {@code value} at the end of {@code d} and returns where they start: divisions by
     * the constant 10 (which the JIT turns into multiplications), one bulk write, no string.
     */
    private static int toDigits(byte[] d, long value) {
        int at = DIGITS;
        if (value == Long.MIN_VALUE) {
            for (int i = MIN_VALUE.length - 1; i >= 0; i--) {
                d[--at] = MIN_VALUE[i];
            }
            return at;
        }
        long v = Math.abs(value);
        do {
            d[--at] = (byte) ('0' + (int) (v % 10));
            v /= 10;
        } while (v != 0);
        if (value < 0) {
            d[--at] = '-';
        }
        return at;
    }
}
