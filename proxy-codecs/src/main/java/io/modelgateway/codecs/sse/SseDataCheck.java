package io.modelgateway.codecs.sse;

import io.netty.buffer.ByteBuf;

/**
 * A constant-cost sanity check of one complete server-sent event from a JSON-speaking provider: its first
 * {@code data:} payload must open with {@code {} (after the optional space) or be {@code [DONE]}, and the event's
 * last line must close with {@code }} (or {@code ]} for {@code [DONE]}). It looks at the event's first lines up to
 * the data and at its last bytes only — never at the JSON in between — so it cannot prove an event well-formed;
 * it catches a payload cut short or text that is not JSON, which is what a broken upstream sends. Events with no
 * {@code data:} line (comments, keep-alives) pass. Stateless.
 */
public final class SseDataCheck {
    /** {@code even}, {@code t:}, {@code data} and {@code {"error"} as big-endian words ({@link ByteBuf#getInt}). */
    private static final int EVEN = word("even");
    private static final short T_COLON = (short) word("\0\0t:");
    private static final int DATA = word("data");
    private static final long OPEN_ERROR = ((long) word("{\"er") << 32) | (word("ror\"") & 0xFFFFFFFFL);

    private SseDataCheck() {
    }

    private static int word(String four) {
        int w = 0;
        for (int i = 0; i < 4; i++) {
            w = (w << 8) | (four.charAt(i) & 0xFF);
        }
        return w;
    }

    /** Whether the event (its readable bytes, untouched) plausibly carries JSON (or the [DONE] marker). */
    public static boolean plausible(ByteBuf event) {
        int start = event.readerIndex();
        int end = event.writerIndex();
        int line = start;
        int data = -1;
        while (line < end) {
            if (startsWith(event, line, end, "data:")) {
                data = line + 5;
                break;
            }
            int nl = event.indexOf(line, end, (byte) '\n');
            if (nl < 0) {
                return true; // a single line that is not data: nothing to check
            }
            line = nl + 1;
        }
        if (data < 0) {
            return true;
        }
        if (data < end && event.getByte(data) == ' ') {
            data++;
        }
        if (data >= end) {
            return false;
        }
        byte first = event.getByte(data);
        boolean done = first == '[' && startsWith(event, data, end, "[DONE]");
        if (first != '{' && !done) {
            return false;
        }
        int last = end - 1;
        while (last > data && (event.getByte(last) == '\n' || event.getByte(last) == '\r')) {
            last--;
        }
        byte b = event.getByte(last);
        if (b == (done ? ']' : '}')) {
            return true;
        }
        // A trailing id:/retry: line or comment after the data is legal SSE: only a data line must end the JSON.
        int lineStart = last;
        while (lineStart > data && event.getByte(lineStart - 1) != '\n' && event.getByte(lineStart - 1) != '\r') {
            lineStart--;
        }
        return lineStart > data && !startsWith(event, lineStart, end, "data:");
    }

    /**
     * Whether the event is an error event of any style: Anthropic's and the Responses API's {@code event: error}, the
     * Responses API's {@code event: response.failed}, or a first data payload
     * that opens with OpenAI's {@code {"error"}. Looks at the first few bytes only (a comparison per event on the hot
     * path); an error event is then worth a closer look (its text is redacted before it is relayed).
     */
    public static boolean looksLikeError(ByteBuf event) {
        int at = event.readerIndex();
        int end = event.writerIndex();
        // Whole words read at once: every read of a slice checks the slice and its buffer, so fewer, wider reads.
        if (end - at < 6) {
            return false;
        }
        int head = event.getInt(at);
        if (head == EVEN && event.getShort(at + 4) == T_COLON) {
            at += 6;
            if (at < end && event.getByte(at) == ' ') {
                at++;
            }
            return named(event, at, end, "error") || named(event, at, end, "response.failed");
        }
        if (head == DATA && event.getByte(at + 4) == ':') {
            at += 5;
            if (at < end && event.getByte(at) == ' ') {
                at++;
            }
            return end - at >= 8 && event.getLong(at) == OPEN_ERROR;
        }
        return false;
    }

    /** Whether the event's name at {@code at} is {@code name}, the whole line. */
    private static boolean named(ByteBuf event, int at, int end, String name) {
        int after = at + name.length();
        return startsWith(event, at, end, name) && (after == end || event.getByte(after) == '\n'
                || event.getByte(after) == '\r');
    }

    private static boolean startsWith(ByteBuf buf, int at, int end, String prefix) {
        if (end - at < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (buf.getByte(at + i) != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
