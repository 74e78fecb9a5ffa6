package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.json.JsonScanException;
import io.modelgateway.codecs.json.JsonScanner;
import io.modelgateway.codecs.translate.GeminiUsage;
import io.modelgateway.codecs.translate.Usage;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Token counts gathered from one or more upstream {@code usage} objects of any style (Gemini's
 * {@code usageMetadata} included, read through {@link GeminiUsage}). Fields a later object
 * carries replace earlier ones, fields it leaves out stay: Anthropic streams give the input in
 * {@code message_start} and the final output in {@code message_delta}; an OpenAI usage chunk gives all at once.
 * Event-loop confined, like the exchange that owns it.
 *
 * <p>Every count is checked as it is read ({@link TokenCount}): one that is not a whole number from 0 to
 * {@link TokenCount#MAX} is not stored, and marks the whole usage {@link #implausible()}. An upstream that says one
 * absurd thing is not believed on the rest either, so the exchange is accounted with the gateway's own estimate.
 */
public final class UsageCounts {
    // The count fields, as numbers for put(): a usage object's fields, then those of its details objects
    // (nesting 1 prompt_tokens_details, 2 completion_tokens_details, 3 input_tokens_details, 4 output_tokens_details).
    private static final int PROMPT = 0;
    private static final int COMPLETION = 1;
    private static final int INPUT = 2;
    private static final int OUTPUT = 3;
    private static final int CACHE_CREATION_INPUT = 4;
    private static final int CACHE_READ_INPUT = 5;
    // Gemini's usageMetadata (Vertex AI and the Gemini API): names no other style uses, so no style is needed.
    private static final int GEMINI_PROMPT = 6;
    private static final int GEMINI_CANDIDATES = 7;
    private static final int GEMINI_CACHED = 8;
    private static final int GEMINI_THOUGHTS = 9;
    private static final int GEMINI_TOOL_USE = 10;
    private static final int CACHED = 11;
    private static final int CACHE_WRITE = 12;
    private static final int REASONING = 13;
    /** Responses API: {@code input_tokens_details.cached_tokens}. */
    private static final int INPUT_CACHED = 14;
    /** Responses API: {@code output_tokens_details.reasoning_tokens}. */
    private static final int OUTPUT_REASONING = 15;
    /** Anthropic: {@code output_tokens_details.thinking_tokens}. */
    private static final int OUTPUT_THINKING = 16;
    private static final String[] NAMES = {"prompt_tokens", "completion_tokens", "input_tokens", "output_tokens",
        "cache_creation_input_tokens", "cache_read_input_tokens", "promptTokenCount", "candidatesTokenCount",
        "cachedContentTokenCount", "thoughtsTokenCount", "toolUsePromptTokenCount", "cached_tokens",
        "cache_write_tokens", "reasoning_tokens", "cached_tokens", "reasoning_tokens", "thinking_tokens"};
    /** The details objects of a usage object, by nesting (index 0 unused: the usage object itself). */
    private static final String[] DETAILS = {null, "prompt_tokens_details", "completion_tokens_details",
        "input_tokens_details", "output_tokens_details"};
    /** The first and last count field of each nesting. */
    private static final int[] FIRST = {PROMPT, CACHED, REASONING, INPUT_CACHED, OUTPUT_REASONING};
    private static final int[] LAST = {GEMINI_TOOL_USE, CACHE_WRITE, REASONING, INPUT_CACHED, OUTPUT_THINKING};

    private int promptTokens = -1;
    private int completionTokens = -1;
    private int cachedTokens;
    private int cacheWriteTokens;
    private int reasoningTokens;
    private int inputTokens = -1;
    private int outputTokens = -1;
    private int cacheCreation;
    private int cacheRead;
    /** Responses API: the input's cache reads, inside {@code input_tokens}; -1 when no such details were read. */
    private int inputCached = -1;
    /** Reasoning inside {@code output_tokens}: Responses' {@code reasoning_tokens}, Anthropic's {@code thinking_tokens}. */
    private int outputReasoning;
    /** Gemini's counts ({@link #GEMINI_PROMPT} to {@link #GEMINI_TOOL_USE}); -1 for the two main ones: not read. */
    private int geminiPrompt = -1;
    private int geminiCandidates = -1;
    private int geminiCached;
    private int geminiThoughts;
    private int geminiToolUse;
    /** The name of the first count that was not believed (a name of ours, never the upstream's bytes); or null. */
    private String implausible;

    /** Whether any usage object was read. */
    public boolean known() {
        return promptTokens >= 0 || completionTokens >= 0 || inputTokens >= 0 || outputTokens >= 0
                || geminiPrompt >= 0 || geminiCandidates >= 0;
    }

    /**
     * Whether a count was not believed (negative, above {@link TokenCount#MAX}, not a whole number, longer than a
     * long), or a usage object could not be read at all: the usage as a whole is not to be used for accounting.
     */
    public boolean implausible() {
        return implausible != null;
    }

    /** Which count was not believed first ({@code prompt_tokens}, …, or {@code usage} for an unreadable one). */
    public String implausibleField() {
        return implausible;
    }

    /** A usage object was there but could not be read: its counts are unknown, which is not the same as none. */
    void unreadable() {
        if (implausible == null) {
            implausible = "usage";
        }
    }

    /**
     * The counts by type ({@link Usage}); null when nothing was read. The style is told by the fields: OpenAI chat's
     * {@code prompt_tokens}, the Responses API's {@code input_tokens} with {@code input_tokens_details} (its input
     * includes the cache reads), else Anthropic's {@code input_tokens} (uncached only).
     */
    public Usage usage() {
        if (!known()) {
            return null;
        }
        if (geminiPrompt >= 0 || geminiCandidates >= 0) {
            return GeminiUsage.usage(Math.max(geminiPrompt, 0), Math.max(geminiCandidates, 0), geminiCached,
                    geminiThoughts, geminiToolUse);
        }
        if (promptTokens >= 0 || completionTokens >= 0) {
            return Usage.fromOpenAi(Math.max(promptTokens, 0), Math.max(completionTokens, 0), cachedTokens,
                    cacheWriteTokens, reasoningTokens);
        }
        if (inputCached >= 0) {
            return Usage.fromResponses(Math.max(inputTokens, 0), Math.max(outputTokens, 0), inputCached,
                    outputReasoning);
        }
        return Usage.fromAnthropic(Math.max(inputTokens, 0), Math.max(outputTokens, 0), cacheCreation, cacheRead,
                outputReasoning);
    }

    /**
     * Reads one usage object; the scanner is on its {@code START_OBJECT} and is left on its {@code END_OBJECT}.
     * Unknown members are skipped; non-numeric counts are ignored; numbers that are no plausible count mark the
     * usage {@link #implausible()}.
     */
    public void read(JsonScanner s) throws JsonScanException {
        while (s.next() == JsonToken.FIELD_NAME) { // else the object's end: the scanner allows nothing else here
            String name = s.currentName();
            JsonToken v = s.next();
            int details = v == JsonToken.START_OBJECT ? details(name) : -1;
            if (details > 0) {
                readDetails(s, details);
                continue;
            }
            int field = field(0, name);
            if (field < 0) {
                s.skipValue();
            } else {
                put(field, TokenCount.of(s, v));
            }
        }
    }

    /** The nesting of a details object called {@code name}; -1: not one. */
    private static int details(String name) {
        for (int n = 1; n < DETAILS.length; n++) {
            if (DETAILS[n].equals(name)) {
                return n;
            }
        }
        return -1;
    }

    /** Inside a details object of nesting 1 to 4 ({@link #DETAILS}). */
    private void readDetails(JsonScanner s, int nesting) throws JsonScanException {
        while (s.next() == JsonToken.FIELD_NAME) {
            int field = field(nesting, s.currentName());
            JsonToken v = s.next();
            if (field < 0) {
                s.skipValue();
            } else {
                put(field, TokenCount.of(s, v));
            }
        }
    }

    /** The count field {@code name} is at {@code nesting} (0 the usage object, 1 to 4 its details); -1: none. */
    private static int field(int nesting, String name) {
        for (int f = first(nesting); f <= last(nesting); f++) {
            if (NAMES[f].equals(name)) {
                return f;
            }
        }
        return -1;
    }

    private static int first(int nesting) {
        return FIRST[nesting];
    }

    private static int last(int nesting) {
        return LAST[nesting];
    }

    /** Stores a count read for {@code field}: believed, not believed ({@link TokenCount#IMPLAUSIBLE}) or absent. */
    private void put(int field, long n) {
        if (n == TokenCount.ABSENT) {
            return; // null, a string, an object: the field says nothing, as before
        }
        if (n < 0 || n > TokenCount.MAX) {
            if (implausible == null) {
                implausible = NAMES[field];
            }
            return;
        }
        int count = (int) n; // at most TokenCount.MAX: the counts are ints, half the object of one per answer
        switch (field) {
            case PROMPT -> promptTokens = count;
            case COMPLETION -> completionTokens = count;
            case INPUT -> inputTokens = count;
            case OUTPUT -> outputTokens = count;
            case CACHE_CREATION_INPUT -> cacheCreation = count;
            case CACHE_READ_INPUT -> cacheRead = count;
            case GEMINI_PROMPT -> geminiPrompt = count;
            case GEMINI_CANDIDATES -> geminiCandidates = count;
            case GEMINI_CACHED -> geminiCached = count;
            case GEMINI_THOUGHTS -> geminiThoughts = count;
            case GEMINI_TOOL_USE -> geminiToolUse = count;
            case CACHED -> cachedTokens = count;
            case CACHE_WRITE -> cacheWriteTokens = count;
            case REASONING -> reasoningTokens = count;
            case INPUT_CACHED -> inputCached = count;
            default -> outputReasoning = count; // OUTPUT_REASONING, OUTPUT_THINKING
        }
    }

    // ---- the same reading over raw bytes, without a JSON library (the non-stream relay path, once per answer)

    private static final byte[][] NAME_BYTES = new byte[NAMES.length][];
    private static final byte[][] DETAILS_BYTES = new byte[DETAILS.length][];

    static {
        for (int f = 0; f < NAMES.length; f++) {
            NAME_BYTES[f] = ascii(NAMES[f]);
        }
        for (int n = 1; n < DETAILS.length; n++) {
            DETAILS_BYTES[n] = ascii(DETAILS[n]);
        }
    }

    /** {@link #details(String)} for a key held in {@code b[keyFrom, keyTo)}. */
    private static int details(byte[] b, int keyFrom, int keyTo) {
        for (int n = 1; n < DETAILS_BYTES.length; n++) {
            if (eq(b, keyFrom, keyTo, DETAILS_BYTES[n])) {
                return n;
            }
        }
        return -1;
    }

    /**
     * Reads one usage object held in {@code bytes[from, to)} (as {@link BodyUsageScanner} captured it). Same
     * fields as {@link #read(JsonScanner)}; other members of any type are skipped. Returns false when the bytes
     * are not a JSON object this reader understands (what was read before stays).
     */
    public boolean read(byte[] bytes, int from, int to) {
        return ByteReader.object(bytes, from, to, this, 0) >= 0;
    }

    /** {@link #field(int, String)} for a key held in {@code b[keyFrom, keyTo)}. */
    private static int field(int nesting, byte[] b, int keyFrom, int keyTo) {
        for (int f = first(nesting); f <= last(nesting); f++) {
            if (eq(b, keyFrom, keyTo, NAME_BYTES[f])) {
                return f;
            }
        }
        return -1;
    }

    private static boolean eq(byte[] b, int from, int to, byte[] name) {
        return to - from == name.length && Arrays.equals(b, from, to, name, 0, name.length);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A minimal JSON reader over a captured usage object, {@code b[i, end)}: each step takes the index it reads from
     * and returns the index after what it read, or -1 when the bytes are not what it expects (no reader object per
     * answer). Nesting 0 is the usage object, 1 to 4 its details objects ({@link #DETAILS}); anything else is skipped
     * whole.
     */
    private static final class ByteReader {
        private ByteReader() {
        }

        static int object(byte[] b, int i, int end, UsageCounts into, int nesting) {
            if (i >= end || b[i] != '{') {
                return -1;
            }
            i = space(b, i + 1, end);
            if (i < end && b[i] == '}') {
                return i + 1;
            }
            while (true) {
                i = space(b, i, end);
                if (i >= end || b[i] != '"') {
                    return -1;
                }
                int keyFrom = i + 1;
                i = skipStringBody(b, keyFrom, end);
                if (i < 0) {
                    return -1;
                }
                int keyTo = i - 1;
                i = space(b, i, end);
                if (i >= end || b[i] != ':') {
                    return -1;
                }
                i = space(b, i + 1, end);
                if (i >= end) {
                    return -1;
                }
                byte c = b[i];
                if (c == '-' || (c >= '0' && c <= '9')) {
                    int start = i;
                    while (i < end && numberChar(b[i])) {
                        i++;
                    }
                    int field = field(nesting, b, keyFrom, keyTo);
                    if (field >= 0) {
                        into.put(field, TokenCount.of(b, start, i));
                    }
                } else if (c == '{' && nesting == 0 && details(b, keyFrom, keyTo) > 0) {
                    i = object(b, i, end, into, details(b, keyFrom, keyTo));
                } else {
                    i = skipValue(b, i, end);
                }
                if (i < 0) {
                    return -1;
                }
                i = space(b, i, end);
                if (i >= end) {
                    return -1;
                }
                if (b[i] == ',') {
                    i++;
                } else if (b[i] == '}') {
                    return i + 1;
                } else {
                    return -1;
                }
            }
        }

        private static boolean numberChar(byte c) {
            return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
        }

        /** Skips any value: string, number, literal, or a whole object or array. */
        private static int skipValue(byte[] b, int i, int end) {
            int depth = 0;
            while (i < end) {
                byte c = b[i++];
                if (c == '"') {
                    i = skipStringBody(b, i, end);
                    if (i < 0) {
                        return -1;
                    }
                    if (depth == 0) {
                        return i;
                    }
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    if (depth == 0) {
                        return i - 1; // the end of the enclosing object: the value before it was a bare literal
                    }
                    if (--depth == 0) {
                        return i;
                    }
                } else if (depth == 0 && c == ',') {
                    return i - 1;
                }
            }
            return depth == 0 ? i : -1;
        }

        /** After an opening quote: the index past the closing one. */
        private static int skipStringBody(byte[] b, int i, int end) {
            while (i < end) {
                byte c = b[i++];
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    return i;
                }
            }
            return -1;
        }

        private static int space(byte[] b, int i, int end) {
            while (i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
                i++;
            }
            return i;
        }
    }
}
