package io.modelgateway.core.route;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Claude on Vertex AI (a {@code vertex} provider whose model starts with {@code claude}): Anthropic's messages body,
 * except that the model is in the path ({@code publishers/anthropic/models/{model}:rawPredict}) and the body carries
 * {@code "anthropic_version":"vertex-2023-10-16"} instead. One splice of the caller's bytes: the {@code "model"}
 * member is replaced by the version member, nothing else is copied.
 */
final class VertexClaude {
    static final String VERSION = "vertex-2023-10-16";
    private static final byte[] VERSION_MEMBER =
            ("\"anthropic_version\":\"" + VERSION + "\"").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] VERSION_AFTER = (",\"anthropic_version\":\"" + VERSION + "\"")
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] MODEL_KEY = "\"model\"".getBytes(StandardCharsets.US_ASCII);

    private VertexClaude() {
    }

    /**
     * The edit that puts the version where the {@code "model": "…"} member was ({@code modelStart}/{@code modelEnd}:
     * its value, as {@link RequestPeek} found it, relative to the reader index). A key written with escapes (never
     * seen in practice) keeps the member and gets the version after it.
     */
    static BodySplicer.Edit edit(ByteBuf body, int modelStart, int modelEnd) {
        int base = body.readerIndex();
        int i = modelStart - 1;
        while (i >= 0 && isSpace(body.getByte(base + i))) {
            i--;
        }
        if (i >= 0 && body.getByte(base + i) == ':') {
            i--;
            while (i >= 0 && isSpace(body.getByte(base + i))) {
                i--;
            }
            int keyStart = i - MODEL_KEY.length + 1;
            if (keyStart >= 0 && matches(body, base + keyStart)) {
                return new BodySplicer.Edit(keyStart, modelEnd, VERSION_MEMBER);
            }
        }
        return new BodySplicer.Edit(modelEnd, modelEnd, VERSION_AFTER);
    }

    /** A translated messages body (the gateway's own JSON, with its model) made Vertex's; the input is released. */
    static ByteBuf fromTranslated(ByteBufAllocator alloc, ByteBuf body) {
        RequestPeek peek = RequestPeek.peek(Endpoint.MESSAGES, body, true);
        try {
            if (peek.model() == null) {
                return body;
            }
            return BodySplicer.splice(alloc, body, edit(body, peek.modelStart(), peek.modelEnd()));
        } finally {
            if (peek.model() != null) {
                body.release();
            }
        }
    }

    private static boolean matches(ByteBuf body, int at) {
        for (int k = 0; k < MODEL_KEY.length; k++) {
            if (body.getByte(at + k) != MODEL_KEY[k]) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }
}
