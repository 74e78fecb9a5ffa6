package io.modelgateway.core.simulator;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The words the simulator speaks, one token each. About one word in nine carries a non-ASCII
 * letter so every consumer of the output handles multi-byte UTF-8 (and a split of such a word
 * by a stop sequence). The JSON-quoted UTF-8 form of every word, bare and with its leading space,
 * is computed once so a stream event costs a few array copies.
 */
final class Vocabulary {

    static final String[] WORDS = {
        "the", "model", "answers", "with", "a", "steady", "stream", "of", "simulated", "tokens",
        "gateway", "request", "latency", "river", "stone", "quiet", "morning", "light", "over",
        "north", "harbor", "signal", "bright", "careful", "engine", "window", "garden", "number",
        "paper", "yellow", "winter", "simple", "rapid", "orbit", "puzzle", "silver", "market",
        "forest", "little", "summer", "bridge", "coffee", "planet", "violet", "mirror", "thunder",
        "gentle", "ladder", "copper", "pocket", "ribbon", "canyon", "meadow", "lantern", "marble",
        "tiger", "oyster", "pepper", "saddle", "velvet", "walnut", "anchor", "basket", "candle",
        "café", "naïve", "façade", "jalapeño", "über", "Zürich", "résumé", "smörgåsbord",
    };

    /** The ASCII-only words, for values that end up in identifiers or schemas. */
    static final String[] ASCII_WORDS;

    private static final Map<String, byte[]> QUOTED = new HashMap<>();
    /** " word" strings, so generation appends interned instances and lookups hit the cache. */
    private static final String[] SPACED = new String[WORDS.length];

    static {
        int ascii = 0;
        for (String w : WORDS) {
            if (isAscii(w)) {
                ascii++;
            }
        }
        ASCII_WORDS = new String[ascii];
        int a = 0;
        for (int i = 0; i < WORDS.length; i++) {
            String w = WORDS[i];
            if (isAscii(w)) {
                ASCII_WORDS[a++] = w;
            }
            SPACED[i] = " " + w;
            QUOTED.put(w, quote(w));
            QUOTED.put(SPACED[i], quote(SPACED[i]));
        }
    }

    private Vocabulary() {
    }

    /** Word {@code index}, with a leading space unless it opens the text. */
    static String piece(int index, boolean first) {
        return first ? WORDS[index] : SPACED[index];
    }

    /** {@code "s"} as JSON string UTF-8 bytes, from the cache for vocabulary pieces. */
    static byte[] quoted(String s) {
        byte[] b = QUOTED.get(s);
        return b != null ? b : quote(s);
    }

    static byte[] quote(String s) {
        byte[] inner = JsonStringEncoder.getInstance().quoteAsUTF8(s);
        byte[] out = new byte[inner.length + 2];
        out[0] = '"';
        System.arraycopy(inner, 0, out, 1, inner.length);
        out[out.length - 1] = '"';
        return out;
    }

    static int utf8Length(CharSequence s) {
        int n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static boolean isAscii(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length == s.length();
    }
}
