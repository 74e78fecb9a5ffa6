package io.modelgateway.core.simulator;

import java.util.Arrays;

/**
 * A growable byte array for assembling compact JSON and SSE events from pre-quoted pieces. The
 * callers write well-formed JSON by construction (every output is parsed back in the tests);
 * {@link #raw(String)} takes ASCII literals only, {@link #str} quotes any text.
 * One instance per response being built; not thread-safe.
 */
final class JsonBytes {

    private byte[] buf;
    private int len;

    JsonBytes(int capacity) {
        this.buf = new byte[Math.max(16, capacity)];
    }

    /** Appends an ASCII literal (JSON punctuation, keys, SSE framing). */
    JsonBytes raw(String ascii) {
        int n = ascii.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) ascii.charAt(i);
        }
        return this;
    }

    JsonBytes raw(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
        return this;
    }

    /** Appends {@code s} as a JSON string, or {@code null}. */
    JsonBytes str(String s) {
        return s == null ? raw("null") : raw(Vocabulary.quoted(s));
    }

    JsonBytes num(long v) {
        return raw(Long.toString(v));
    }

    int length() {
        return len;
    }

    JsonBytes reset() {
        len = 0;
        return this;
    }

    byte[] toBytes() {
        return Arrays.copyOf(buf, len);
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + extra));
        }
    }
}
