package io.modelgateway.codecs.translate;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The field lines of one upstream SSE event as every stream translator reads them ({@link ChatStreamToMessages},
 * {@link ChatStreamToResponses}, and through {@link MessagesStreamEvent} and {@link GeminiChunk} the messages and
 * Gemini readers): its {@code data:} lines joined (one optional space after the colon dropped, lines joined with
 * {@code \n}; lines end with LF, CRLF or CR), whether it carried a comment, and its last {@code event:} line. The
 * event is copied out once and scanned as an array: one buffer access instead of one per byte. Reused for every
 * event of a stream; confined to its event loop.
 */
final class SseData {
    private byte[] raw;
    private byte[] data;
    private int rawLength;
    private int length = -1;
    private boolean comment;
    /** Where the last {@code event:} line's value lies in {@link #raw}; {@code eventStart} -1 without one. */
    private int eventStart = -1;
    private int eventEnd;
    private boolean bareDataLine;

    SseData() {
        this(512);
    }

    /** @param capacity the first size of the copied event and of the joined data (each grows as needed) */
    SseData(int capacity) {
        raw = new byte[capacity];
        data = new byte[capacity];
    }

    /** Reads one event (borrowed, reader index untouched); returns the data's length, -1 when it has no data line. */
    int read(ByteBuf e) {
        comment = false;
        eventStart = -1;
        bareDataLine = false;
        int end = e.readableBytes();
        if (raw.length < end) {
            raw = new byte[Math.max(end, raw.length * 2)];
        }
        e.getBytes(e.readerIndex(), raw, 0, end);
        rawLength = end;
        byte[] r = raw;
        int len = -1;
        int i = 0;
        while (i < end) {
            int lineEnd = i;
            while (lineEnd < end && r[lineEnd] != '\n' && r[lineEnd] != '\r') {
                lineEnd++;
            }
            int next = lineEnd < end && r[lineEnd] == '\r' && lineEnd + 1 < end && r[lineEnd + 1] == '\n'
                    ? lineEnd + 2 : lineEnd + 1;
            if (lineEnd > i) {
                if (r[i] == ':') {
                    comment = true;
                } else {
                    int colon = i;
                    while (colon < lineEnd && r[colon] != ':') {
                        colon++;
                    }
                    int v = colon < lineEnd ? colon + 1 : lineEnd;
                    if (v < lineEnd && r[v] == ' ') {
                        v++;
                    }
                    if (is(r, i, colon, "data")) {
                        bareDataLine |= colon == lineEnd;
                        int n = lineEnd - v;
                        int at = len < 0 ? 0 : len + 1;
                        ensure(at + n);
                        if (len >= 0) {
                            data[len] = '\n';
                        }
                        System.arraycopy(r, v, data, at, n);
                        len = at + n;
                    } else if (is(r, i, colon, "event")) {
                        eventStart = v;
                        eventEnd = lineEnd;
                    }
                }
            }
            i = next;
        }
        length = len;
        return len;
    }

    /** The joined data of the last event read (valid up to its length). */
    byte[] data() {
        return data;
    }

    /** The whole last event as read (valid up to {@link #rawLength()}): for a reader that takes more than data. */
    byte[] raw() {
        return raw;
    }

    int rawLength() {
        return rawLength;
    }

    /** The last event had a comment line. */
    boolean comment() {
        return comment;
    }

    /** The last event's {@code event:} line was {@code error}. */
    boolean errorEvent() {
        return eventStart >= 0 && is(raw, eventStart, eventEnd, "error");
    }

    /** The value of the last event's last {@code event:} line, null without one. */
    String eventName() {
        return eventStart < 0 ? null : new String(raw, eventStart, eventEnd - eventStart, StandardCharsets.UTF_8);
    }

    /** The last event had a line {@code data} with no colon (empty data, as the SSE spec reads it). */
    boolean bareDataLine() {
        return bareDataLine;
    }

    /** The data is {@code [DONE]} (surrounding whitespace allowed). */
    boolean isDone() {
        int from = 0;
        int to = length;
        while (from < to && isSpace(data[from])) {
            from++;
        }
        while (to > from && isSpace(data[to - 1])) {
            to--;
        }
        if (to - from != 6) {
            return false;
        }
        return data[from] == '[' && data[from + 1] == 'D' && data[from + 2] == 'O' && data[from + 3] == 'N'
                && data[from + 4] == 'E' && data[from + 5] == ']';
    }

    /** The data is whitespace only. */
    boolean isBlank() {
        for (int k = 0; k < length; k++) {
            if (!isSpace(data[k])) {
                return false;
            }
        }
        return true;
    }

    private static boolean is(byte[] r, int from, int to, String ascii) {
        if (to - from != ascii.length()) {
            return false;
        }
        for (int k = 0; k < ascii.length(); k++) {
            if (r[from + k] != ascii.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private void ensure(int capacity) {
        if (capacity > data.length) {
            data = Arrays.copyOf(data, Math.max(capacity, data.length * 2));
        }
    }

    static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }
}
