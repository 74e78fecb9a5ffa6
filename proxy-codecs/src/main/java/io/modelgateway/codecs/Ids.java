package io.modelgateway.codecs;

import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Identifiers of contract 1.4: a prefix and 24 base62 characters. They only need to be unique,
 * not secret, so a thread-local PRNG is enough and costs no lock on the event loop.
 */
public final class Ids {
    private static final byte[] BASE62 =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".getBytes(StandardCharsets.US_ASCII);
    public static final int RANDOM_CHARS = 24;

    private Ids() {
    }

    public static String requestId() {
        return withPrefix("req_");
    }

    /** {@code prefix} (ASCII) and {@value #RANDOM_CHARS} random base62 characters. */
    public static String withPrefix(String prefix) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int n = prefix.length() + RANDOM_CHARS;
        byte[] out = n <= SCRATCH_BYTES ? SCRATCH.get() : new byte[n];
        for (int i = 0; i < prefix.length(); i++) {
            out[i] = (byte) prefix.charAt(i);
        }
        for (int i = prefix.length(); i < n; i++) {
            out[i] = BASE62[rnd.nextInt(62)];
        }
        // Latin-1 bytes are a String's own compact form: the String copies them once, no char[] on the way.
        return new String(out, 0, n, StandardCharsets.ISO_8859_1);
    }

    /** The thread's array the characters are put together in (the String copies them): one per request id less. */
    private static final int SCRATCH_BYTES = 64;
    private static final FastThreadLocal<byte[]> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[SCRATCH_BYTES];
        }
    };
}
