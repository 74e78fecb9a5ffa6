package io.modelgateway.codecs.sse;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A cheap sanity check of one complete server-sent event from a JSON-speaking provider: its first
 * {@code data:} payload must open with {@code {} (after the optional space) or be {@code [DONE]}, and the event's
 * last line must close with {@code }} (or {@code ]} for {@code [DONE]}). It looks at the event's first lines up to
 * the data and at its last bytes only — never at the JSON in between — so it cannot prove an event well-formed;
 * it catches a payload cut short or text that is not JSON, which is what a broken upstream sends. Events with no
 * {@code data:} line (comments, keep-alives) pass. Stateless; both checks read the event's bytes from one
 * {@link EventBytes} copy (a bulk copy, then array reads), not byte by byte through the buffer.
 */
public final class SseDataCheck {
    private static final byte[] DATA = "data:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "event:".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DONE = "[DONE]".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] OPEN_ERROR = "{\"error\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "error".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RESPONSE_FAILED = "response.failed".getBytes(StandardCharsets.US_ASCII);

    private SseDataCheck() {
    }

    /** Whether the event (its readable bytes, untouched) plausibly carries JSON (or the [DONE] marker). */
    public static boolean plausible(ByteBuf event) {
        return plausible(EventBytes.of(event));
    }

    /** {@link #plausible(ByteBuf)} on an event's bytes already copied out. */
    public static boolean plausible(EventBytes event) {
        byte[] a = event.bytes();
        int end = event.length();
        int line = 0;
        int data = -1;
        while (line < end) {
            if (startsWith(a, line, end, DATA)) {
                data = line + DATA.length;
                break;
            }
            int nl = indexOf(a, line, end, (byte) '\n');
            if (nl < 0) {
                return true; // a single line that is not data: nothing to check
            }
            line = nl + 1;
        }
        if (data < 0) {
            return true;
        }
        if (data < end && a[data] == ' ') {
            data++;
        }
        if (data >= end) {
            return false;
        }
        byte first = a[data];
        boolean done = first == '[' && startsWith(a, data, end, DONE);
        if (first != '{' && !done) {
            return false;
        }
        int last = end - 1;
        while (last > data && (a[last] == '\n' || a[last] == '\r')) {
            last--;
        }
        if (a[last] == (done ? ']' : '}')) {
            return true;
        }
        // A trailing id:/retry: line or comment after the data is legal SSE: only a data line must end the JSON.
        int lineStart = last;
        while (lineStart > data && a[lineStart - 1] != '\n' && a[lineStart - 1] != '\r') {
            lineStart--;
        }
        return lineStart > data && !startsWith(a, lineStart, end, DATA);
    }

    /**
     * Whether the event is an error event of any style: Anthropic's and the Responses API's {@code event: error}, the
     * Responses API's {@code event: response.failed}, or a first data payload
     * that opens with OpenAI's {@code {"error"}. Looks at the first few bytes only (a comparison per event on the hot
     * path); an error event is then worth a closer look (its text is redacted before it is relayed).
     */
    public static boolean looksLikeError(ByteBuf event) {
        return looksLikeError(EventBytes.of(event));
    }

    /** {@link #looksLikeError(ByteBuf)} on an event's bytes already copied out. */
    public static boolean looksLikeError(EventBytes event) {
        byte[] a = event.bytes();
        int end = event.length();
        if (startsWith(a, 0, end, EVENT)) {
            int at = EVENT.length;
            if (at < end && a[at] == ' ') {
                at++;
            }
            return named(a, at, end, ERROR) || named(a, at, end, RESPONSE_FAILED);
        }
        if (startsWith(a, 0, end, DATA)) {
            int at = DATA.length;
            if (at < end && a[at] == ' ') {
                at++;
            }
            return startsWith(a, at, end, OPEN_ERROR);
        }
        return false;
    }

    /** Whether the event's name at {@code at} is {@code name}, the whole line. */
    private static boolean named(byte[] a, int at, int end, byte[] name) {
        int after = at + name.length;
        return startsWith(a, at, end, name) && (after == end || a[after] == '\n' || a[after] == '\r');
    }

    private static boolean startsWith(byte[] a, int at, int end, byte[] prefix) {
        if (end - at < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (a[at + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] a, int from, int end, byte b) {
        for (int i = from; i < end; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
