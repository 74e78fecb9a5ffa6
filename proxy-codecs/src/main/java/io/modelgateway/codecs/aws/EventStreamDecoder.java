package io.modelgateway.codecs.aws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * Decodes the AWS event-stream binary framing incrementally, from pieces cut anywhere. Each message is
 * <pre>
 *   total length (4) | headers length (4) | prelude CRC32 (4) | headers | payload | message CRC32 (4)
 * </pre>
 * big-endian; the prelude CRC covers the first 8 bytes, the message CRC everything before it. Both are verified.
 * A header is a 1-byte name length, the name, a 1-byte type and a value of that type (booleans, integers of 1, 2, 4
 * and 8 bytes, a 2-byte-length byte array or UTF-8 string, a timestamp, a UUID); the gateway reads the string headers
 * {@code :message-type}, {@code :event-type}, {@code :exception-type}, {@code :error-code}, {@code :error-message} and
 * {@code :content-type} and skips the others.
 *
 * <p>A message that arrives whole within one piece is decoded from that piece without a copy; one cut across pieces
 * is gathered into one pooled buffer of exactly its length, allocated only once its prelude (lengths and CRC) has
 * been checked, so a peer cannot make the decoder allocate more than {@code maxMessageBytes} or trust a length it
 * garbled. After the first fault (a CRC mismatch, a length out of bounds, a malformed header) the decoder is failed
 * and takes nothing more.
 *
 * <p>Ownership: pieces fed in are borrowed; the message handed to the handler and its payload are valid during the
 * call only. {@link #release} frees a message still being gathered. Not thread-safe (one per connection).
 */
public final class EventStreamDecoder {
    /** The prelude, and the smallest possible message: prelude + message CRC. */
    static final int PRELUDE_BYTES = 12;
    static final int MIN_MESSAGE_BYTES = 16;
    /** The format's own bound on a message's headers. */
    static final int MAX_HEADERS_BYTES = 128 * 1024;

    /** Receives each decoded message. */
    @FunctionalInterface
    public interface Handler {
        void onMessage(EventStreamMessage message);
    }

    private final ByteBufAllocator alloc;
    private final int maxMessageBytes;
    private final CRC32 crc = new CRC32();
    private final EventStreamMessage message = new EventStreamMessage();
    private final byte[] prelude = new byte[PRELUDE_BYTES];
    private int preludeFill;
    /** The message being gathered across pieces (prelude included), or null. */
    private ByteBuf gathering;
    private int total;
    private int headersLength;
    private String failure;

    /** @param maxMessageBytes the largest message taken (at least 16) */
    public EventStreamDecoder(ByteBufAllocator alloc, int maxMessageBytes) {
        this.alloc = alloc;
        this.maxMessageBytes = Math.max(MIN_MESSAGE_BYTES, maxMessageBytes);
    }

    /**
     * Decodes what {@code piece} completes (its readable bytes are consumed), handing each message to {@code handler}.
     * Returns null, or what was wrong with the stream (the decoder is then failed: later calls return the same).
     */
    public String feed(ByteBuf piece, Handler handler) {
        while (failure == null && piece.isReadable()) {
            if (gathering == null && preludeFill == 0 && piece.readableBytes() >= PRELUDE_BYTES) {
                int at = piece.readerIndex();
                if (!prelude(piece, at)) {
                    break;
                }
                if (piece.readableBytes() >= total) {
                    decode(piece, at, handler);
                    piece.skipBytes(total);
                    continue;
                }
                gathering = alloc.buffer(total, total);
                gathering.writeBytes(piece);
                break;
            }
            if (gathering == null) {
                int n = Math.min(PRELUDE_BYTES - preludeFill, piece.readableBytes());
                piece.readBytes(prelude, preludeFill, n);
                preludeFill += n;
                if (preludeFill < PRELUDE_BYTES) {
                    break;
                }
                preludeFill = 0;
                ByteBuf head = io.netty.buffer.Unpooled.wrappedBuffer(prelude);
                if (!prelude(head, 0)) {
                    break;
                }
                gathering = alloc.buffer(total, total);
                gathering.writeBytes(prelude);
            }
            int n = Math.min(total - gathering.readableBytes(), piece.readableBytes());
            gathering.writeBytes(piece, n);
            if (gathering.readableBytes() == total) {
                ByteBuf whole = gathering;
                gathering = null;
                try {
                    decode(whole, whole.readerIndex(), handler);
                } finally {
                    whole.release();
                }
            }
        }
        if (failure != null) {
            piece.skipBytes(piece.readableBytes());
        }
        return failure;
    }

    /** Whether part of a message is held (a stream that ends now was cut inside a message). */
    public boolean hasPartial() {
        return gathering != null || preludeFill > 0;
    }

    /** The fault that failed the decoder, or null. */
    public String failure() {
        return failure;
    }

    /** Frees a message being gathered. Idempotent; the decoder takes nothing more afterwards. */
    public void release() {
        preludeFill = 0;
        if (gathering != null) {
            gathering.release();
            gathering = null;
        }
        if (failure == null) {
            failure = "released";
        }
    }

    /** Reads and checks the prelude at {@code at} (12 readable bytes); false when it failed the decoder. */
    private boolean prelude(ByteBuf buf, int at) {
        long totalLength = buf.getUnsignedInt(at);
        long headers = buf.getUnsignedInt(at + 4);
        long expected = buf.getUnsignedInt(at + 8);
        if (crc32(buf, at, 8) != expected) {
            return fail("prelude CRC mismatch");
        }
        if (totalLength < MIN_MESSAGE_BYTES || totalLength > maxMessageBytes) {
            return fail("message length " + totalLength + " outside 16.." + maxMessageBytes);
        }
        if (headers > MAX_HEADERS_BYTES || headers > totalLength - MIN_MESSAGE_BYTES) {
            return fail("headers length " + headers + " does not fit the message");
        }
        total = (int) totalLength;
        headersLength = (int) headers;
        return true;
    }

    /** One whole message at {@code at} in {@code buf} (its prelude already checked). */
    private void decode(ByteBuf buf, int at, Handler handler) {
        long expected = buf.getUnsignedInt(at + total - 4);
        if (crc32(buf, at, total - 4) != expected) {
            fail("message CRC mismatch");
            return;
        }
        message.clear();
        int h = at + PRELUDE_BYTES;
        int end = h + headersLength;
        while (h < end) {
            h = header(buf, h, end);
            if (h < 0) {
                fail("malformed message header");
                return;
            }
        }
        message.payload = buf.slice(end, at + total - 4 - end);
        handler.onMessage(message);
        message.payload = null;
    }

    /** Reads one header at {@code at}; returns where the next begins, or -1 when it runs past {@code end}. */
    private int header(ByteBuf buf, int at, int end) {
        int nameLength = buf.getUnsignedByte(at);
        int v = at + 1 + nameLength;
        if (nameLength == 0 || v + 1 > end) {
            return -1;
        }
        int type = buf.getUnsignedByte(v);
        v++;
        int size;
        switch (type) {
            case 0, 1 -> size = 0;
            case 2 -> size = 1;
            case 3 -> size = 2;
            case 4 -> size = 4;
            case 5, 8 -> size = 8;
            case 9 -> size = 16;
            case 6, 7 -> {
                if (v + 2 > end) {
                    return -1;
                }
                int length = buf.getUnsignedShort(v);
                v += 2;
                if (v + length > end) {
                    return -1;
                }
                if (type == 7) {
                    store(buf, at + 1, nameLength, v, length);
                }
                return v + length;
            }
            default -> {
                return -1;
            }
        }
        return v + size <= end ? v + size : -1;
    }

    private void store(ByteBuf buf, int name, int nameLength, int value, int valueLength) {
        switch (nameLength) {
            case 13 -> {
                if (is(buf, name, ":message-type")) {
                    message.messageType = text(buf, value, valueLength);
                } else if (is(buf, name, ":content-type")) {
                    message.contentType = text(buf, value, valueLength);
                }
            }
            case 11 -> {
                if (is(buf, name, ":event-type")) {
                    message.eventType = text(buf, value, valueLength);
                } else if (is(buf, name, ":error-code")) {
                    message.errorCode = text(buf, value, valueLength);
                }
            }
            case 15 -> {
                if (is(buf, name, ":exception-type")) {
                    message.exceptionType = text(buf, value, valueLength);
                }
            }
            case 14 -> {
                if (is(buf, name, ":error-message")) {
                    message.errorMessage = text(buf, value, valueLength);
                }
            }
            default -> {
            }
        }
    }

    /** The header values every message carries, shared instead of a new String per message. */
    private static final String[] KNOWN = {"event", "exception", "error", "chunk", "application/json",
        "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"};
    private static final byte[][] KNOWN_BYTES = new byte[KNOWN.length][];

    static {
        for (int i = 0; i < KNOWN.length; i++) {
            KNOWN_BYTES[i] = KNOWN[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    private static String text(ByteBuf buf, int at, int length) {
        for (int i = 0; i < KNOWN.length; i++) {
            byte[] k = KNOWN_BYTES[i];
            if (k.length == length && same(buf, at, k)) {
                return KNOWN[i];
            }
        }
        return buf.toString(at, length, StandardCharsets.UTF_8);
    }

    private static boolean is(ByteBuf buf, int at, String name) {
        for (int i = 0; i < name.length(); i++) {
            if (buf.getByte(at + i) != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean same(ByteBuf buf, int at, byte[] k) {
        for (int i = 0; i < k.length; i++) {
            if (buf.getByte(at + i) != k[i]) {
                return false;
            }
        }
        return true;
    }

    private long crc32(ByteBuf buf, int at, int length) {
        crc.reset();
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + at, length);
        } else if (buf.nioBufferCount() == 1) {
            crc.update(buf.nioBuffer(at, length));
        } else {
            for (java.nio.ByteBuffer b : buf.nioBuffers(at, length)) {
                crc.update(b);
            }
        }
        return crc.getValue();
    }

    private boolean fail(String why) {
        if (failure == null) {
            failure = why;
        }
        preludeFill = 0;
        if (gathering != null) {
            gathering.release();
            gathering = null;
        }
        return false;
    }
}
