package io.modelgateway.bench.loadgen;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Finds the events of a {@code text/event-stream} body as its chunks arrive and tells which ones carry
 * content, which one ends the stream and whether an error event came. Nothing is decoded: each line is
 * located with {@link ByteBuf#indexOf} and only its first {@value #PREFIX} bytes are copied into a
 * reused array to be classified, so a chunk costs a scan, not a parse, and no allocation.
 *
 * <ul>
 *   <li>OpenAI style: every {@code data:} event is a content event except {@code [DONE]}, which ends
 *       the stream, and {@code {"error"…}}, which is an error.</li>
 *   <li>Anthropic style: {@code event: content_block_delta} is a content event, {@code message_stop}
 *       ends the stream, {@code event: error} is an error; other events (message_start, ping, …) are
 *       neither. Without an {@code event:} line the {@code "type"} at the start of the data is used.</li>
 * </ul>
 *
 * One scanner per connection, reset for each response; confined to the connection's event loop.
 */
final class SseScanner {
    static final int PREFIX = 48;

    private static final byte[] DATA = ascii("data:");
    private static final byte[] EVENT = ascii("event:");
    private static final byte[] DONE = ascii("[DONE]");
    private static final byte[] OPENAI_ERROR = ascii("{\"error\"");
    private static final byte[] TYPED = ascii("{\"type\":\"");
    private static final byte[] DELTA = ascii("content_block_delta");
    private static final byte[] STOP = ascii("message_stop");
    private static final byte[] ERROR = ascii("error");

    // What the current event is, from its event: line and its first data: line.
    private static final int NONE = 0;
    private static final int CONTENT = 1;
    private static final int END = 2;
    private static final int FAILED = 3;
    private static final int OTHER = 4;

    private final byte[] line = new byte[PREFIX];
    private int captured;     // bytes of the current line in `line`
    private long lineLength;  // the current line's full length so far (it may span chunks)
    private int eventKind;    // from `event:`
    private int dataKind;     // from the first `data:`
    private boolean hasData;

    private boolean ended;
    private boolean failed;
    private long contentEvents;

    /** Forgets everything: a new response begins. */
    void reset() {
        captured = 0;
        lineLength = 0;
        eventKind = NONE;
        dataKind = NONE;
        hasData = false;
        ended = false;
        failed = false;
        contentEvents = 0;
    }

    /**
     * Reads the chunk's readable bytes (without moving its reader index).
     *
     * @return the number of content events completed in this chunk
     */
    int scan(ByteBuf chunk) {
        long before = contentEvents;
        int i = chunk.readerIndex();
        int end = chunk.writerIndex();
        while (i < end) {
            int lf = chunk.indexOf(i, end, (byte) '\n');
            int stop = lf < 0 ? end : lf;
            int room = PREFIX - captured;
            if (room > 0 && stop > i) {
                int n = Math.min(room, stop - i);
                chunk.getBytes(i, line, captured, n);
                captured += n;
            }
            lineLength += stop - i;
            if (lf < 0) {
                break;
            }
            endOfLine();
            i = lf + 1;
        }
        return (int) (contentEvents - before);
    }

    /**
     * The body has ended: an event left without its blank line still counts (lenient, so a server that
     * ends on {@code data: [DONE]\n} is not called cut).
     *
     * @return content events completed by this
     */
    int finish() {
        long before = contentEvents;
        if (lineLength > 0) {
            endOfLine();
        }
        dispatch();
        return (int) (contentEvents - before);
    }

    /** A terminal event ({@code [DONE]} or {@code message_stop}) was seen. */
    boolean ended() {
        return ended;
    }

    /** An error event was seen. */
    boolean failed() {
        return failed;
    }

    long contentEvents() {
        return contentEvents;
    }

    private void endOfLine() {
        int n = captured;
        // A CR before the LF belongs to the line ending; it is in `line` only when the whole line fit.
        boolean wholeLine = lineLength == captured;
        if (wholeLine && n > 0 && line[n - 1] == '\r') {
            n--;
        }
        if (wholeLine && n == 0) {
            dispatch();
        } else if (startsWith(0, n, DATA)) {
            if (!hasData) {
                hasData = true;
                dataKind = classifyData(skipSpace(DATA.length, n), n);
            }
        } else if (startsWith(0, n, EVENT)) {
            eventKind = classifyName(skipSpace(EVENT.length, n), n, wholeLine);
        }
        // id:, retry: and comments (":…") say nothing about content.
        captured = 0;
        lineLength = 0;
    }

    private void dispatch() {
        if (hasData || eventKind != NONE) {
            int kind = eventKind != NONE ? eventKind : dataKind;
            if (dataKind == FAILED) {
                kind = FAILED;
            }
            switch (kind) {
                case CONTENT -> contentEvents++;
                case END -> ended = true;
                case FAILED -> failed = true;
                default -> { }
            }
        }
        eventKind = NONE;
        dataKind = NONE;
        hasData = false;
    }

    /** The kind of a data payload starting at {@code from}. */
    private int classifyData(int from, int n) {
        if (startsWith(from, n, DONE)) {
            return END;
        }
        if (startsWith(from, n, OPENAI_ERROR)) {
            return FAILED;
        }
        if (startsWith(from, n, TYPED)) {
            // Anthropic data carries its event name as "type"; used when no event: line came.
            int at = from + TYPED.length;
            if (startsWith(at, n, DELTA) && at + DELTA.length < n && line[at + DELTA.length] == '"') {
                return CONTENT;
            }
            if (startsWith(at, n, STOP) && at + STOP.length < n && line[at + STOP.length] == '"') {
                return END;
            }
            if (startsWith(at, n, ERROR) && at + ERROR.length < n && line[at + ERROR.length] == '"') {
                return FAILED;
            }
            return OTHER;
        }
        return CONTENT;
    }

    private int classifyName(int from, int n, boolean wholeLine) {
        if (!wholeLine) {
            return OTHER; // no name we look for is that long
        }
        if (equalsAt(from, n, DELTA)) {
            return CONTENT;
        }
        if (equalsAt(from, n, STOP)) {
            return END;
        }
        if (equalsAt(from, n, ERROR)) {
            return FAILED;
        }
        return OTHER;
    }

    private int skipSpace(int from, int n) {
        return from < n && line[from] == ' ' ? from + 1 : from;
    }

    private boolean startsWith(int from, int n, byte[] word) {
        if (n - from < word.length) {
            return false;
        }
        for (int k = 0; k < word.length; k++) {
            if (line[from + k] != word[k]) {
                return false;
            }
        }
        return true;
    }

    private boolean equalsAt(int from, int n, byte[] word) {
        return n - from == word.length && startsWith(from, n, word);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
