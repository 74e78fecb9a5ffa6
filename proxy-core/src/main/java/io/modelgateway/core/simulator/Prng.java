package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * SplitMix64: a tiny, fast, well-mixed PRNG whose whole state is one {@code long}, so a seed fully
 * decides the sequence. Also holds the content hash that turns a conversation into a seed.
 * Not thread-safe; each generation step makes its own.
 */
final class Prng {

    private static final char[] BASE62 =
            "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();

    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private long state;

    Prng(long seed) {
        this.state = seed;
    }

    long nextLong() {
        long z = (state += 0x9E3779B97F4A7C15L);
        return mix(z);
    }

    /** Uniform enough for picking words: the modulo bias of a 64-bit draw is negligible. */
    int nextInt(int bound) {
        return (int) Long.remainderUnsigned(nextLong(), bound);
    }

    /** In [0, 1). */
    double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    String base62(int length) {
        char[] out = new char[length];
        for (int i = 0; i < length; i++) {
            out[i] = BASE62[nextInt(62)];
        }
        return new String(out);
    }

    /** The SplitMix64 finaliser: spreads any 64-bit value over all bits. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long hashStart() {
        return FNV_OFFSET;
    }

    /** FNV-1a over the UTF-16 units of {@code s}, then a terminator so "ab"+"c" differs from "a"+"bc". */
    static long hash(long h, CharSequence s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            h = (h ^ (c & 0xff)) * FNV_PRIME;
            h = (h ^ (c >>> 8)) * FNV_PRIME;
        }
        return (h ^ 0x1f) * FNV_PRIME;
    }

    static long hash(long h, long v) {
        for (int i = 0; i < 8; i++) {
            h = (h ^ (v & 0xff)) * FNV_PRIME;
            v >>>= 8;
        }
        return h;
    }

    /**
     * Hashes a JSON tree by content and key order (the order a client sent), so the same request
     * bytes, and any re-serialisation keeping the order, give the same seed. A missing node adds a marker.
     */
    static long hash(long h, JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return hash(h, 0x4d495353L);
        }
        switch (node.getNodeType()) {
            case OBJECT -> {
                h = hash(h, '{');
                for (Map.Entry<String, JsonNode> e : node.properties()) {
                    h = hash(h, e.getKey());
                    h = hash(h, e.getValue());
                }
                return hash(h, '}');
            }
            case ARRAY -> {
                h = hash(h, '[');
                for (JsonNode child : node) {
                    h = hash(h, child);
                }
                return hash(h, ']');
            }
            case STRING -> {
                return hash(hash(h, 's'), node.textValue());
            }
            case NUMBER, BOOLEAN -> {
                return hash(hash(h, 'n'), node.asText());
            }
            default -> {
                return hash(h, 'z');
            }
        }
    }
}
