package io.modelgateway.core.limit.shared;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes one Redis command in RESP (an array of bulk strings) into a byte array that the writer keeps and reuses,
 * and hands the whole command to the socket's buffer in one copy: a command's forty-odd small parts cost array
 * stores, not forty-odd bounds- and reference-checked writes into a direct buffer. Numbers are written as digits
 * without a string in between.
 *
 * <p>One writer per {@link RedisLink}, used on its event loop only; {@link #reset} starts the next command.
 */
public final class Resp {
    private static final byte[] NO_HEAD = new byte[0];
    private static final byte[] MIN_VALUE = "-9223372036854775808".getBytes(StandardCharsets.US_ASCII);
    /** A command bigger than this (a script's body, after NOSCRIPT) gets an array of its own, not kept after. */
    static final int KEEP_MAX = 16 * 1024;

    /** The most characters a long takes in decimal ({@code -9223372036854775808}). */
    private static final int DIGITS = 20;

    private byte[] buf = new byte[512];
    /** The digits of the number being written, at its end. */
    private final byte[] scratch = new byte[DIGITS];
    private int len;

    /** Forgets the command written so far; the next part starts a new one. */
    public void reset() {
        if (buf.length > KEEP_MAX) {
            buf = new byte[512];
        }
        len = 0;
    }

    /** Bytes written since {@link #reset}. */
    public int length() {
        return len;
    }

    /** Appends what was written since {@link #reset} to {@code out}. */
    public void writeTo(ByteBuf out) {
        out.writeBytes(buf, 0, len);
    }

    /** A copy of what was written since {@link #reset}: parts encoded once, for {@link #raw}. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    /**
     * Appends parts encoded before (by another writer's {@link #toByteArray}) as they are: the parts of a command
     * that stay the same from call to call cost one copy. The caller counts them in the command's {@link #array}.
     */
    public void raw(byte[] encoded) {
        room(encoded.length);
        System.arraycopy(encoded, 0, buf, len, encoded.length);
        len += encoded.length;
    }

    /** {@code *count\r\n}: a command of {@code count} parts follows. */
    public void array(int count) {
        room(22);
        buf[len++] = '*';
        length(count);
        crlf();
    }

    public void bulk(byte[] bytes) {
        room(bytes.length + 26);
        buf[len++] = '$';
        length(bytes.length);
        crlf();
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
        crlf();
    }

    /** A bulk string of the UTF-8 bytes of {@code text}. */
    public void bulk(CharSequence text) {
        int n = text.length();
        for (int i = 0; i < n; i++) {
            if (text.charAt(i) >= 0x80) {
                bulk(text.toString().getBytes(StandardCharsets.UTF_8));
                return;
            }
        }
        room(n + 26);
        buf[len++] = '$';
        length(n);
        crlf();
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) text.charAt(i);
        }
        crlf();
    }

    /**
     * A bulk string of {@code head} followed by the decimal digits of {@code value} (an id, a key naming one):
     * no string in between.
     */
    public void bulk(byte[] head, long value) {
        int from = toDigits(value);
        int n = DIGITS - from;
        room(head.length + n + 26);
        buf[len++] = '$';
        length(head.length + n);
        crlf();
        System.arraycopy(head, 0, buf, len, head.length);
        len += head.length;
        System.arraycopy(scratch, from, buf, len, n);
        len += n;
        crlf();
    }

    /** A bulk string of the decimal digits of {@code value}. */
    public void bulk(long value) {
        bulk(NO_HEAD, value);
    }

    /**
     * The decimal digits of a count ({@code n >= 0}: of parts, of bytes) straight into the command, past the
     * {@link #room} the caller made: the scratch array may hold a value's digits meanwhile.
     */
    private void length(int n) {
        int end = len + 1;
        for (int t = n; t >= 10; t /= 10) {
            end++;
        }
        for (int i = end - 1; i >= len; i--) {
            buf[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        len = end;
    }

    /**
     * Writes the decimal digits of {@code value} at the end of the scratch array and returns where they start:
     * divisions by the constant 10 (which the JIT turns into multiplications), no string.
     */
    private int toDigits(long value) {
        byte[] d = scratch;
        int at = DIGITS;
        if (value == Long.MIN_VALUE) {
            System.arraycopy(MIN_VALUE, 0, d, 0, DIGITS);
            return 0;
        }
        long v = Math.abs(value);
        while (v > Integer.MAX_VALUE) {
            d[--at] = (byte) ('0' + (int) (v % 10));
            v /= 10;
        }
        int i = (int) v; // the rest in int arithmetic, cheaper than long
        do {
            d[--at] = (byte) ('0' + i % 10);
            i /= 10;
        } while (i != 0);
        if (value < 0) {
            d[--at] = '-';
        }
        return at;
    }

    private void crlf() {
        buf[len++] = '\r';
        buf[len++] = '\n';
    }

    private void room(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
        }
    }
}
