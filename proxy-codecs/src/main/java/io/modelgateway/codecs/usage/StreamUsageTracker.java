package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.json.JsonScanException;
import io.modelgateway.codecs.json.JsonScanner;
import io.modelgateway.codecs.sse.ByteWords;
import io.modelgateway.codecs.sse.EventBytes;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Follows the token usage of one upstream SSE stream, event by event, in any style: an OpenAI usage chunk
 * ({@code "usage":{…}} with {@code "choices":[]}), Anthropic's {@code message_start} (input) and
 * {@code message_delta} (cumulative output), Gemini's {@code "usageMetadata":{…}} (cumulative, on its chunks), or the
 * Responses API's final event ({@code response.completed}, {@code response.incomplete}, {@code response.failed}),
 * whose {@code response.usage} holds the whole exchange's counts (its earlier events carry {@code "usage":null}).
 * Only an event that carries a {@code "usage":} key with an object
 * value is parsed — a byte search finds it; OpenAI's {@code "usage":null} on every other chunk costs a compare.
 * The events themselves are untouched (they are spliced to the client as they are).
 *
 * <p>Also counts the events that carried no usage, which is what a stream cut short is estimated by. Event-loop
 * confined, one per stream.
 */
public final class StreamUsageTracker {
    /** The key's start: {@code "usage}. */
    private static final byte[] KEY = {'"', 'u', 's', 'a', 'g', 'e'};
    /** What may follow {@code "usage} in a key: Gemini's {@code usageMetadata}. */
    private static final byte[] METADATA = {'M', 'e', 't', 'a', 'd', 'a', 't', 'a', '"'};
    /** An SSE data line's field name. */
    private static final byte[] DATA = {'d', 'a', 't', 'a', ':'};
    private static final long QUOTES = ByteWords.spread((byte) '"');
    private static final long US = ByteWords.spread((byte) 'u');
    /** {@link #keyAt}'s answer for a place that is not the key. */
    private static final int NOT_KEY = -2;
    /** {@link #walk}'s answers: the payload is not an object; it has a {@code choices} array; that array is not empty. */
    private static final int NOT_AN_OBJECT = -1;
    private static final int CHOICES = 1;
    private static final int NON_EMPTY_CHOICES = 2;

    private final UsageCounts counts = new UsageCounts();
    private int otherEvents;
    private boolean complete;

    /**
     * Looks at one complete event (its readable bytes, not consumed). Returns true when it is an OpenAI-style
     * usage-only chunk (a usage object and no choices), which a caller that did not ask for usage must not see
     * (GD-21).
     */
    public boolean onEvent(ByteBuf event) {
        return onEvent(EventBytes.of(event));
    }

    /** {@link #onEvent(ByteBuf)} with the event's bytes already copied out ({@code bytes}: the same event's). */
    public boolean onEvent(EventBytes bytes) {
        if (usageObjectAt(bytes.bytes(), bytes.length()) < 0) {
            otherEvents++;
            return false;
        }
        return parse(bytes.bytes(), bytes.length());
    }

    /** The usage read so far; null when none. Check {@link UsageCounts#implausible()} before believing it. */
    public UsageCounts counts() {
        return counts.known() || counts.implausible() ? counts : null;
    }

    /**
     * Whether the final counts were seen (a top-level usage object: OpenAI's usage chunk or Anthropic's
     * {@code message_delta}), not only the input counts of a {@code message_start}.
     */
    public boolean complete() {
        return complete;
    }

    /** Events seen that carried no usage (content, role, stop…): about one per generated token. */
    public int otherEvents() {
        return otherEvents;
    }

    /** {@link #usageObjectAt(byte[], int)} in a buffer: the buffer's index of the key, or -1. */
    static int usageObjectAt(ByteBuf buf) {
        EventBytes bytes = EventBytes.of(buf);
        int at = usageObjectAt(bytes.bytes(), bytes.length());
        return at < 0 ? -1 : buf.readerIndex() + at;
    }

    /**
     * Index of the {@code "usage":} key in {@code a[0, end)} when its value is an object, or -1. An event carries at
     * most one usage key and puts it near its end (OpenAI's {@code ,"usage":null}} closes every chunk), so the search
     * runs backwards from the end: a few bytes for most events. An event without the key (Anthropic's deltas, OpenAI's
     * chunks when no usage was asked for) is searched whole, eight bytes at a step for the pair {@code "u}
     * ({@link ByteWords}); only where that pair stands is the key compared. Gemini's {@code usageMetadata} counts as
     * the key too.
     */
    static int usageObjectAt(byte[] a, int end) {
        int last = end - KEY.length; // the last place the key can start
        // Words a[i, i + 8) overlapping by one byte, so that a pair across two words is inside one of them; each
        // word's pairs are tried from its last byte back, so candidates come in the order of a byte-by-byte search.
        int i = last - 6;
        for (; i >= 0; i -= 7) {
            long w = ByteWords.word(a, i);
            long pairs = ByteWords.equalBytes(w, QUOTES) & (ByteWords.equalBytes(w, US) >>> 8);
            while (pairs != 0) {
                int bit = 63 - Long.numberOfLeadingZeros(pairs);
                int found = keyAt(a, i + (bit >>> 3), end);
                if (found != NOT_KEY) {
                    return found;
                }
                pairs &= ~(1L << bit);
            }
        }
        for (int q = Math.min(last, i + 6); q >= 0; q--) {
            if (a[q] == '"' && a[q + 1] == 'u') {
                int found = keyAt(a, q, end);
                if (found != NOT_KEY) {
                    return found;
                }
            }
        }
        return -1;
    }

    /**
     * What the {@code "u} at {@code q} is: {@code q} when it opens the usage key with an object value, -1 when it opens
     * the key with any other value (the search ends: an event has one such key), {@link #NOT_KEY} when it is not the
     * key at all (another key, a string, an escaped quote inside a string) and the search goes on.
     */
    private static int keyAt(byte[] a, int q, int end) {
        if (!matches(a, q, KEY)) {
            return NOT_KEY;
        }
        int keyEnd = q + KEY.length;
        if (keyEnd < end && a[keyEnd] == '"') {
            keyEnd++;
        } else if (keyEnd + METADATA.length <= end && matches(a, keyEnd, METADATA)) {
            keyEnd += METADATA.length;
        } else {
            return NOT_KEY; // "usageX…: another key
        }
        if (escaped(a, q)) {
            return NOT_KEY; // inside a string
        }
        int j = skipSpace(a, keyEnd, end);
        if (j >= end || a[j] != ':') {
            return NOT_KEY; // a string value "usage", not the key
        }
        j = skipSpace(a, j + 1, end);
        return j < end && a[j] == '{' ? q : -1;
    }

    private static boolean matches(byte[] a, int at, byte[] what) {
        for (int k = 0; k < what.length; k++) {
            if (a[at + k] != what[k]) {
                return false;
            }
        }
        return true;
    }

    /** Whether the quote at {@code at} is preceded by an odd number of backslashes (so inside a string). */
    private static boolean escaped(byte[] a, int at) {
        int n = 0;
        for (int k = at - 1; k >= 0 && a[k] == '\\'; k--) {
            n++;
        }
        return (n & 1) == 1;
    }

    /** The first index from {@code from} that is not a space or a tab, or {@code end}. */
    private static int skipSpace(byte[] a, int from, int end) {
        int j = from;
        while (j < end && (a[j] == ' ' || a[j] == '\t')) {
            j++;
        }
        return j;
    }

    /**
     * Parses the event's data payload, {@code a[0, end)}; rare (one or two events per stream). The payload is the
     * event's {@code data:} lines (the field name, then one optional space, dropped), joined by LF; the thread's
     * {@link JsonScanner} reads a single line where it lies, several from a joined copy, and allocates nothing but
     * the names it has not met before.
     */
    private boolean parse(byte[] a, int end) {
        int firstFrom = -1;
        int firstTo = -1;
        ByteArrayOutputStream joined = null;
        for (int from = 0; from < end; ) {
            int nl = from;
            while (nl < end && a[nl] != '\n' && a[nl] != '\r') {
                nl++;
            }
            if (nl - from >= DATA.length && matches(a, from, DATA)) {
                int value = from + DATA.length;
                if (value < nl && a[value] == ' ') {
                    value++;
                }
                if (firstFrom < 0) {
                    firstFrom = value;
                    firstTo = nl;
                } else {
                    if (joined == null) {
                        joined = new ByteArrayOutputStream(end);
                        joined.write(a, firstFrom, firstTo - firstFrom);
                    }
                    joined.write('\n');
                    joined.write(a, value, nl - value);
                }
            }
            from = nl + (nl + 1 < end && a[nl] == '\r' && a[nl + 1] == '\n' ? 2 : 1);
        }
        if (firstFrom < 0) {
            firstFrom = firstTo = 0;
        }
        byte[] payload = joined != null ? joined.toByteArray() : a;
        int offset = joined != null ? 0 : firstFrom;
        int length = joined != null ? payload.length : firstTo - firstFrom;
        JsonScanner scanner = SCANNER.get();
        int read;
        try {
            scanner.reset(payload, offset, length);
            read = walk(scanner);
        } catch (JsonScanException notUtf8OrNotJson) {
            // The scanner refuses bytes that are not UTF-8 where a decode to text replaces them (as the client's own
            // decoder may): once more, replaced, before the usage is given up.
            try {
                byte[] replaced = new String(payload, offset, length, StandardCharsets.UTF_8)
                        .getBytes(StandardCharsets.UTF_8);
                scanner.reset(replaced, 0, replaced.length);
                read = walk(scanner);
            } catch (JsonScanException e) {
                // Not JSON we understand (or past the scanner's limits): it goes on to the client untouched and
                // counts as content; the usage it carried is unknown, so none of this stream's counts is believed.
                counts.unreadable();
                otherEvents++;
                return false;
            }
        } finally {
            scanner.clear(); // the payload is the caller's (or this call's): the thread's scanner must not keep it
        }
        if (read == NOT_AN_OBJECT) {
            return false;
        }
        boolean nonEmptyChoices = (read & NON_EMPTY_CHOICES) != 0;
        if (nonEmptyChoices) {
            otherEvents++;
        }
        return (read & CHOICES) != 0 && !nonEmptyChoices;
    }

    /**
     * Reads the payload's top-level object for its usage: {@link #NOT_AN_OBJECT}, or {@link #CHOICES} (a
     * {@code choices} array was there) and {@link #NON_EMPTY_CHOICES} (it held something) as bits.
     */
    private int walk(JsonScanner s) throws JsonScanException {
        if (s.next() != JsonToken.START_OBJECT) {
            return NOT_AN_OBJECT;
        }
        int read = 0;
        while (s.next() == JsonToken.FIELD_NAME) {
            String name = s.currentName();
            JsonToken v = s.next();
            if ((name.equals("usage") || name.equals("usageMetadata")) && v == JsonToken.START_OBJECT) {
                counts.read(s);
                // OpenAI's usage chunk, Anthropic's message_delta, or Gemini's usageMetadata (on its chunks,
                // cumulative; the stream's own end decides whether the answer was whole): the final counts
                complete = true;
            } else if (name.equals("message") && v == JsonToken.START_OBJECT) {
                readMessage(s, false); // Anthropic message_start: the usage sits in the message
            } else if (name.equals("response") && v == JsonToken.START_OBJECT) {
                readMessage(s, true); // a Responses API final event: the usage of the whole response
            } else if (name.equals("choices") && v == JsonToken.START_ARRAY) {
                read |= CHOICES;
                if (s.next() != JsonToken.END_ARRAY) {
                    read |= NON_EMPTY_CHOICES;
                    s.skipValue();
                    while (s.next() != JsonToken.END_ARRAY) {
                        s.skipValue();
                    }
                }
            } else {
                s.skipValue();
            }
        }
        return read;
    }

    /** The {@code usage} inside an object; {@code last}: it is the final count (a Responses API response). */
    private void readMessage(JsonScanner s, boolean last) throws JsonScanException {
        while (s.next() == JsonToken.FIELD_NAME) {
            String name = s.currentName();
            JsonToken v = s.next();
            if (name.equals("usage") && v == JsonToken.START_OBJECT) {
                counts.read(s);
                complete |= last;
            } else {
                s.skipValue();
            }
        }
    }

    /**
     * This thread's scanner for usage events, with a JSON library's usual limits (an event is an upstream's, not a
     * caller's: the request peek's tighter limits are for what callers send).
     */
    private static final ThreadLocal<JsonScanner> SCANNER = ThreadLocal.withInitial(() -> new JsonScanner(1000, 1000));
}
