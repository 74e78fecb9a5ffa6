package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.translate.Usage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Token counts gathered from one or more upstream {@code usage} objects of either style. Fields a later object
 * carries replace earlier ones, fields it leaves out stay: Anthropic streams give the input in
 * {@code message_start} and the final output in {@code message_delta}; an OpenAI usage chunk gives all at once.
 * Event-loop confined, like the exchange that owns it.
 */
public final class UsageCounts {
    private long promptTokens = -1;
    private long completionTokens = -1;
    private long cachedTokens;
    private long cacheWriteTokens;
    private long reasoningTokens;
    private long inputTokens = -1;
    private long outputTokens = -1;
    private long cacheCreation;
    private long cacheRead;

    /** Whether any usage object was read. */
    public boolean known() {
        return promptTokens >= 0 || completionTokens >= 0 || inputTokens >= 0 || outputTokens >= 0;
    }

    /** The counts in Anthropic's terms; null when nothing was read. */
    public Usage usage() {
        if (!known()) {
            return null;
        }
        if (promptTokens >= 0 || completionTokens >= 0) {
            return Usage.fromOpenAi(Math.max(promptTokens, 0), Math.max(completionTokens, 0), cachedTokens,
                    cacheWriteTokens, reasoningTokens);
        }
        return new Usage(Math.max(inputTokens, 0), Math.max(outputTokens, 0), cacheCreation, cacheRead, 0);
    }

    /**
     * Reads one usage object; the parser is on its {@code START_OBJECT} and is left on its {@code END_OBJECT}.
     * Unknown members are skipped; non-numeric counts are ignored.
     */
    public void read(JsonParser p) throws IOException {
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v == JsonToken.START_OBJECT && name.equals("prompt_tokens_details")) {
                readDetails(p, true);
                continue;
            }
            if (v == JsonToken.START_OBJECT && name.equals("completion_tokens_details")) {
                readDetails(p, false);
                continue;
            }
            if (v != JsonToken.VALUE_NUMBER_INT) {
                p.skipChildren();
                continue;
            }
            long n = Math.max(0, p.getLongValue());
            switch (name) {
                case "prompt_tokens" -> promptTokens = n;
                case "completion_tokens" -> completionTokens = n;
                case "input_tokens" -> inputTokens = n;
                case "output_tokens" -> outputTokens = n;
                case "cache_creation_input_tokens" -> cacheCreation = n;
                case "cache_read_input_tokens" -> cacheRead = n;
                default -> {
                }
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new IOException("usage is not a JSON object");
        }
    }

    // ---- the same reading over raw bytes, without a JSON library (the non-stream relay path, once per answer)

    private static final byte[] PROMPT_TOKENS = ascii("prompt_tokens");
    private static final byte[] COMPLETION_TOKENS = ascii("completion_tokens");
    private static final byte[] INPUT_TOKENS = ascii("input_tokens");
    private static final byte[] OUTPUT_TOKENS = ascii("output_tokens");
    private static final byte[] CACHE_CREATION = ascii("cache_creation_input_tokens");
    private static final byte[] CACHE_READ = ascii("cache_read_input_tokens");
    private static final byte[] PROMPT_DETAILS = ascii("prompt_tokens_details");
    private static final byte[] COMPLETION_DETAILS = ascii("completion_tokens_details");
    private static final byte[] CACHED_TOKENS = ascii("cached_tokens");
    private static final byte[] CACHE_WRITE_TOKENS = ascii("cache_write_tokens");
    private static final byte[] REASONING_TOKENS = ascii("reasoning_tokens");

    /**
     * Reads one usage object held in {@code bytes[from, to)} (as {@link BodyUsageScanner} captured it). Same
     * fields as {@link #read(JsonParser)}; other members of any type are skipped. Returns false when the bytes
     * are not a JSON object this reader understands (what was read before stays).
     */
    public boolean read(byte[] bytes, int from, int to) {
        return new ByteReader(bytes, from, to).object(this, 0);
    }

    private void set(int nesting, byte[] b, int keyFrom, int keyTo, long n) {
        if (nesting == 0) {
            if (eq(b, keyFrom, keyTo, PROMPT_TOKENS)) {
                promptTokens = n;
            } else if (eq(b, keyFrom, keyTo, COMPLETION_TOKENS)) {
                completionTokens = n;
            } else if (eq(b, keyFrom, keyTo, INPUT_TOKENS)) {
                inputTokens = n;
            } else if (eq(b, keyFrom, keyTo, OUTPUT_TOKENS)) {
                outputTokens = n;
            } else if (eq(b, keyFrom, keyTo, CACHE_CREATION)) {
                cacheCreation = n;
            } else if (eq(b, keyFrom, keyTo, CACHE_READ)) {
                cacheRead = n;
            }
        } else if (nesting == 1) {
            if (eq(b, keyFrom, keyTo, CACHED_TOKENS)) {
                cachedTokens = n;
            } else if (eq(b, keyFrom, keyTo, CACHE_WRITE_TOKENS)) {
                cacheWriteTokens = n;
            }
        } else if (nesting == 2 && eq(b, keyFrom, keyTo, REASONING_TOKENS)) {
            reasoningTokens = n;
        }
    }

    private static boolean eq(byte[] b, int from, int to, byte[] name) {
        return to - from == name.length && Arrays.equals(b, from, to, name, 0, name.length);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A minimal JSON reader over a captured usage object. Nesting 0 is the usage object, 1 its
     * {@code prompt_tokens_details}, 2 its {@code completion_tokens_details}; anything else is skipped whole.
     */
    private static final class ByteReader {
        private final byte[] b;
        private final int end;
        private int i;

        ByteReader(byte[] b, int from, int to) {
            this.b = b;
            this.i = from;
            this.end = to;
        }

        boolean object(UsageCounts into, int nesting) {
            if (!expect('{')) {
                return false;
            }
            space();
            if (i < end && b[i] == '}') {
                i++;
                return true;
            }
            while (true) {
                space();
                if (!expect('"')) {
                    return false;
                }
                int keyFrom = i;
                if (!skipStringBody()) {
                    return false;
                }
                int keyTo = i - 1;
                space();
                if (!expect(':')) {
                    return false;
                }
                space();
                if (i >= end) {
                    return false;
                }
                byte c = b[i];
                if (c >= '0' && c <= '9') {
                    long n = 0;
                    int start = i;
                    while (i < end && b[i] >= '0' && b[i] <= '9' && i - start < 18) {
                        n = n * 10 + (b[i++] - '0');
                    }
                    if (i < end && (b[i] == '.' || b[i] == 'e' || b[i] == 'E' || (b[i] >= '0' && b[i] <= '9'))) {
                        if (!skipValue()) { // a fraction or a huge number: not a count
                            return false;
                        }
                    } else {
                        into.set(nesting, b, keyFrom, keyTo, n);
                    }
                } else if (c == '{' && nesting == 0 && eq(b, keyFrom, keyTo, PROMPT_DETAILS)) {
                    if (!object(into, 1)) {
                        return false;
                    }
                } else if (c == '{' && nesting == 0 && eq(b, keyFrom, keyTo, COMPLETION_DETAILS)) {
                    if (!object(into, 2)) {
                        return false;
                    }
                } else if (!skipValue()) {
                    return false;
                }
                space();
                if (i >= end) {
                    return false;
                }
                if (b[i] == ',') {
                    i++;
                } else if (b[i] == '}') {
                    i++;
                    return true;
                } else {
                    return false;
                }
            }
        }

        /** Skips any value: string, number, literal, or a whole object or array. */
        private boolean skipValue() {
            int depth = 0;
            while (i < end) {
                byte c = b[i++];
                if (c == '"') {
                    if (!skipStringBody()) {
                        return false;
                    }
                    if (depth == 0) {
                        return true;
                    }
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    if (depth == 0) {
                        i--; // the end of the enclosing object: the value before it was a bare literal
                        return true;
                    }
                    if (--depth == 0) {
                        return true;
                    }
                } else if (depth == 0 && c == ',') {
                    i--;
                    return true;
                }
            }
            return depth == 0;
        }

        /** After an opening quote: moves past the closing one. */
        private boolean skipStringBody() {
            while (i < end) {
                byte c = b[i++];
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    return true;
                }
            }
            return false;
        }

        private void space() {
            while (i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
                i++;
            }
        }

        private boolean expect(char c) {
            if (i < end && b[i] == c) {
                i++;
                return true;
            }
            return false;
        }
    }

    private void readDetails(JsonParser p, boolean prompt) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (v != JsonToken.VALUE_NUMBER_INT) {
                p.skipChildren();
                continue;
            }
            long n = Math.max(0, p.getLongValue());
            if (prompt && name.equals("cached_tokens")) {
                cachedTokens = n;
            } else if (prompt && name.equals("cache_write_tokens")) {
                cacheWriteTokens = n;
            } else if (!prompt && name.equals("reasoning_tokens")) {
                reasoningTokens = n;
            }
        }
    }
}
