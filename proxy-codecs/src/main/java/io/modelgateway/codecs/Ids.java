package io.modelgateway.codecs;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Identifiers of contract 1.4: a prefix and 24 base62 characters. They only need to be unique,
 * not secret, so a thread-local PRNG is enough and costs no lock on the event loop.
 */
public final class Ids {
    private static final char[] BASE62 =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    public static final int RANDOM_CHARS = 24;

    private Ids() {
    }

    public static String requestId() {
        return withPrefix("req_");
    }

    public static String withPrefix(String prefix) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        char[] out = new char[prefix.length() + RANDOM_CHARS];
        prefix.getChars(0, prefix.length(), out, 0);
        for (int i = prefix.length(); i < out.length; i++) {
            out[i] = BASE62[rnd.nextInt(62)];
        }
        return new String(out);
    }
}
