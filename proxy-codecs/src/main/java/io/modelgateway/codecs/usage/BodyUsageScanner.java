package io.modelgateway.codecs.usage;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;
import java.io.IOException;
import java.util.Arrays;

/**
 * Finds the top-level {@code usage} object of a JSON answer (chat completion, message or embeddings list) while
 * the body passes through in pieces, cut anywhere: the pass-through relay forwards the upstream's bytes as they
 * come and feeds each piece here. It never builds a tree: one pass over the bytes tracking only string and
 * nesting state, copying the bytes of the usage object alone (a few hundred bytes), which are parsed at the end.
 *
 * <p>Why a byte scan rather than a streaming parser: a parser tokenises every number of an embeddings list; this
 * loop only looks at quotes, backslashes and brackets. Event-loop confined; holds no buffer references.
 */
public final class BodyUsageScanner implements ByteProcessor {
    private static final JsonFactory JSON = new JsonFactory();
    private static final byte[] USAGE = {'u', 's', 'a', 'g', 'e'};
    /** A usage object larger than this is not a usage object we can use. */
    private static final int MAX_CAPTURE = 8192;

    private int depth;
    private boolean inString;
    private boolean escape;
    /** Inside a depth-1 string: how many bytes of "usage" it has matched so far; -1 once it cannot match. */
    private int keyMatch = -1;
    /** After the key "usage": 1 = a ':' must come, 2 = the value must come. */
    private int afterKey;
    private byte[] capture;
    private int captureLength;
    private boolean capturing;
    private byte[] found;
    private int foundLength;

    /** Scans the readable bytes of {@code piece} without consuming or releasing it. */
    public void feed(ByteBuf piece) {
        if (piece.isReadable()) {
            piece.forEachByte(this);
        }
    }

    @Override
    public boolean process(byte b) {
        if (capturing) {
            if (captureLength == capture.length) {
                if (capture.length >= MAX_CAPTURE) {
                    capturing = false; // not a usage object we can use; keep scanning for a later one
                } else {
                    capture = Arrays.copyOf(capture, Math.min(MAX_CAPTURE, capture.length * 2));
                }
            }
            if (capturing) {
                capture[captureLength++] = b;
            }
        }
        if (inString) {
            if (escape) {
                escape = false;
                keyMatch = -1;
            } else if (b == '\\') {
                escape = true;
            } else if (b == '"') {
                inString = false;
                if (keyMatch == USAGE.length) {
                    afterKey = 1;
                }
                keyMatch = -1;
            } else if (keyMatch >= 0) {
                keyMatch = keyMatch < USAGE.length && USAGE[keyMatch] == b ? keyMatch + 1 : -1;
            }
            return true;
        }
        switch (b) {
            case ' ', '\n', '\r', '\t' -> {
                return true;
            }
            case '"' -> {
                inString = true;
                keyMatch = depth == 1 && afterKey == 0 ? 0 : -1;
                afterKey = 0;
            }
            case ':' -> afterKey = afterKey == 1 ? 2 : 0;
            case '{', '[' -> {
                if (afterKey == 2 && b == '{' && depth == 1) {
                    startCapture();
                }
                afterKey = 0;
                depth++;
            }
            case '}', ']' -> {
                afterKey = 0;
                depth--;
                if (capturing && depth == 1) {
                    capturing = false;
                    found = capture;
                    foundLength = captureLength;
                    capture = null;
                }
            }
            default -> afterKey = 0;
        }
        return true;
    }

    private void startCapture() {
        capture = new byte[256];
        capture[0] = '{';
        captureLength = 1;
        capturing = true;
    }

    /** The usage of the answer so far (the last top-level {@code usage} object); null when there was none. */
    public UsageCounts counts() {
        if (found == null) {
            return null;
        }
        UsageCounts counts = new UsageCounts();
        try (JsonParser p = JSON.createParser(found, 0, foundLength)) {
            if (p.nextToken() == JsonToken.START_OBJECT) {
                counts.read(p);
            }
        } catch (IOException e) {
            return null;
        }
        return counts.known() ? counts : null;
    }
}
