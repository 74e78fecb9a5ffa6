package io.modelgateway.codecs.bedrock;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * The {@code chunk} events of InvokeModelWithResponseStream for a Claude model → Anthropic SSE events. Each chunk's
 * payload is {@code {"bytes":"<base64>"}} (Bedrock may add a padding member), and the base64 holds one Anthropic
 * stream event's JSON ({@code {"type":"message_start",…}}); this writes it as {@code event: <type>\ndata: <json>\n\n},
 * the framing an Anthropic-style upstream would have sent, so the rest of the gateway passes it through or translates
 * it as it does any Anthropic stream.
 *
 * <p>Per event: one pooled buffer, into which the base64 is decoded straight after room left for the
 * {@code event:} line, which is then written in front of it once the JSON's {@code type} is known — no other copy,
 * no String. A raw line break in the JSON (only possible as whitespace between tokens) becomes a space, so the
 * event's data stays one line. One instance per stream (it remembers whether {@code message_stop} came).
 */
public final class InvokeStreamChunks {
    /** The longest {@code type} taken; Anthropic's longest is {@code content_block_delta}. */
    static final int MAX_TYPE = 40;
    private static final byte[] EVENT = "event: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADROOM = EVENT.length + MAX_TYPE + DATA.length;
    private static final byte[] BYTES_KEY = "bytes".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TYPE_KEY = "type".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MESSAGE_STOP = "message_stop".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ERROR = "error".getBytes(StandardCharsets.US_ASCII);
    private static final int[] BASE64 = new int[128];

    static {
        java.util.Arrays.fill(BASE64, -1);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (int i = 0; i < alphabet.length(); i++) {
            BASE64[alphabet.charAt(i)] = i;
        }
    }

    private boolean stopped;
    private boolean errored;

    /** Whether a {@code message_stop} event went out: the stream ended as it should. */
    public boolean stopped() {
        return stopped;
    }

    /** Whether an {@code error} event went out (Anthropic's own mid-stream error). */
    public boolean errored() {
        return errored;
    }

    /**
     * The SSE event of one chunk payload (borrowed), in a new buffer the caller owns; null when the payload is not
     * a chunk as described (no {@code bytes} string, not base64, or no {@code type} in the JSON it holds).
     */
    public ByteBuf toSse(ByteBufAllocator alloc, ByteBuf payload) {
        int from = payload.readerIndex();
        int to = payload.writerIndex();
        int start = stringValueOf(payload, from, to, BYTES_KEY);
        if (start < 0) {
            return null;
        }
        int end = start;
        while (end < to && payload.getByte(end) != '"') {
            end++;
        }
        if (end >= to) {
            return null;
        }
        ByteBuf out = alloc.buffer(HEADROOM + (end - start) / 4 * 3 + 4);
        boolean ok = false;
        try {
            out.writerIndex(HEADROOM);
            if (!decodeBase64(payload, start, end, out)) {
                return null;
            }
            int jsonFrom = HEADROOM;
            int jsonTo = out.writerIndex();
            int typeAt = stringValueOf(out, jsonFrom, jsonTo, TYPE_KEY);
            if (typeAt < 0) {
                return null;
            }
            int typeEnd = typeAt;
            while (typeEnd < jsonTo && out.getByte(typeEnd) != '"' && out.getByte(typeEnd) != '\\') {
                typeEnd++;
            }
            int typeLength = typeEnd - typeAt;
            if (typeEnd >= jsonTo || out.getByte(typeEnd) != '"' || typeLength == 0 || typeLength > MAX_TYPE) {
                return null;
            }
            int head = EVENT.length + typeLength + DATA.length;
            int at = HEADROOM - head;
            out.setBytes(at, EVENT);
            out.setBytes(at + EVENT.length, out, typeAt, typeLength);
            out.setBytes(at + EVENT.length + typeLength, DATA);
            if (equals(out, typeAt, typeLength, MESSAGE_STOP)) {
                stopped = true;
            } else if (equals(out, typeAt, typeLength, ERROR)) {
                errored = true;
            }
            out.readerIndex(at);
            out.writeByte('\n').writeByte('\n');
            ok = true;
            return out;
        } finally {
            if (!ok) {
                out.release();
            }
        }
    }

    /**
     * Decodes standard base64 {@code in[from, to)} into {@code out}; {@code \/} (a JSON-escaped slash) is read as
     * {@code /}. A raw CR or LF decoded (whitespace between JSON tokens) is written as a space.
     */
    static boolean decodeBase64(ByteBuf in, int from, int to, ByteBuf out) {
        int bits = 0;
        int count = 0;
        int pad = 0;
        for (int i = from; i < to; i++) {
            int c = in.getByte(i) & 0xFF;
            if (c == '\\') {
                continue;
            }
            if (c == '=') {
                pad++;
                continue;
            }
            if (pad > 0 || c >= 128 || BASE64[c] < 0) {
                return false;
            }
            bits = (bits << 6) | BASE64[c];
            count++;
            if (count == 4) {
                write(out, bits >> 16);
                write(out, bits >> 8);
                write(out, bits);
                bits = 0;
                count = 0;
            }
        }
        if (count == 1 || pad > 2) {
            return false;
        }
        if (count == 2) {
            write(out, bits >> 4);
        } else if (count == 3) {
            write(out, bits >> 10);
            write(out, bits >> 2);
        }
        return true;
    }

    private static void write(ByteBuf out, int b) {
        b &= 0xFF;
        out.writeByte(b == '\n' || b == '\r' ? ' ' : b);
    }

    /**
     * Where the string value of the member {@code key} of the top-level object in {@code buf[from, to)} begins (just
     * past its opening quote), or -1. A small walk that knows strings, escapes and nesting and nothing else.
     */
    static int stringValueOf(ByteBuf buf, int from, int to, byte[] key) {
        int depth = 0;
        boolean expectKey = false;
        for (int i = from; i < to; i++) {
            byte b = buf.getByte(i);
            switch (b) {
                case '{', '[' -> {
                    depth++;
                    expectKey = b == '{' && depth == 1;
                }
                case '}', ']' -> depth--;
                case ',' -> expectKey = depth == 1;
                case '"' -> {
                    int end = i + 1;
                    while (end < to && buf.getByte(end) != '"') {
                        end += buf.getByte(end) == '\\' ? 2 : 1;
                    }
                    if (end >= to) {
                        return -1;
                    }
                    if (depth == 1 && expectKey) {
                        expectKey = false;
                        boolean match = equals(buf, i + 1, end - i - 1, key);
                        int j = end + 1;
                        while (j < to && isSpace(buf.getByte(j))) {
                            j++;
                        }
                        if (j >= to || buf.getByte(j) != ':') {
                            return -1;
                        }
                        j++;
                        while (j < to && isSpace(buf.getByte(j))) {
                            j++;
                        }
                        if (match) {
                            return j < to && buf.getByte(j) == '"' ? j + 1 : -1;
                        }
                        i = j - 1;
                    } else {
                        i = end;
                    }
                }
                default -> {
                }
            }
        }
        return -1;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    private static boolean equals(ByteBuf buf, int at, int length, byte[] what) {
        if (length != what.length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            if (buf.getByte(at + i) != what[i]) {
                return false;
            }
        }
        return true;
    }
}
