package io.modelgateway.codecs.aws;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.eventstream.HeaderValue;
import software.amazon.eventstream.Message;

/**
 * The gateway's event-stream decoder on streams encoded by AWS's own event-stream codec
 * ({@code software.amazon.eventstream}, test scope): every header type it writes whole, every cut of the encoded bytes, corrupted
 * CRCs, lengths out of bounds and truncated messages. Buffers come from the pooled allocator and the leak detector
 * (PARANOID in tests) watches them.
 */
class EventStreamDecoderTest {
    private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    record Seen(String messageType, String eventType, String exceptionType, String contentType, String payload) {
    }

    /** Three messages as Bedrock sends them: two events and an exception, with headers of every type besides. */
    static byte[] stream() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(encode(event("chunk", "{\"bytes\":\"eyJ0eXBlIjoicGluZyJ9\"}"), Map.of()));
        Map<String, HeaderValue> extra = new LinkedHashMap<>();
        extra.put("x-bool-true", HeaderValue.fromBoolean(true));
        extra.put("x-bool-false", HeaderValue.fromBoolean(false));
        // no byte or short header: this codec (1.0.1) writes their type but not their value, so they are not
        // something it can produce for the decoder to read
        extra.put("x-int", HeaderValue.fromInteger(70000));
        extra.put("x-long", HeaderValue.fromLong(1L << 40));
        extra.put("x-bytes", HeaderValue.fromByteArray(new byte[] {1, 2, 3}));
        extra.put("x-time", HeaderValue.fromTimestamp(java.time.Instant.ofEpochMilli(1_700_000_000_000L)));
        extra.put("x-uuid", HeaderValue.fromUuid(UUID.fromString("123e4567-e89b-12d3-a456-426614174000")));
        out.writeBytes(encode(event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"h\u00e9\"}}"),
                extra));
        Map<String, HeaderValue> exception = new LinkedHashMap<>();
        exception.put(":message-type", HeaderValue.fromString("exception"));
        exception.put(":exception-type", HeaderValue.fromString("throttlingException"));
        exception.put(":content-type", HeaderValue.fromString("application/json"));
        out.writeBytes(new Message(exception, "{\"message\":\"Too many requests\"}".getBytes(StandardCharsets.UTF_8))
                .toByteBuffer().array());
        return out.toByteArray();
    }

    static Map<String, HeaderValue> event(String type, String payload) {
        Map<String, HeaderValue> h = new LinkedHashMap<>();
        h.put(":event-type", HeaderValue.fromString(type));
        h.put(":content-type", HeaderValue.fromString("application/json"));
        h.put(":message-type", HeaderValue.fromString("event"));
        h.put("payload", HeaderValue.fromString(payload)); // carried here so encode() can find it
        return h;
    }

    static byte[] encode(Map<String, HeaderValue> headers, Map<String, HeaderValue> extra) {
        Map<String, HeaderValue> h = new LinkedHashMap<>(headers);
        String payload = h.remove("payload").getString();
        h.putAll(extra);
        ByteBuffer b = new Message(h, payload.getBytes(StandardCharsets.UTF_8)).toByteBuffer();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }

    static final List<Seen> EXPECTED = List.of(
            new Seen("event", "chunk", null, "application/json", "{\"bytes\":\"eyJ0eXBlIjoicGluZyJ9\"}"),
            new Seen("event", "contentBlockDelta", null, "application/json",
                    "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"h\u00e9\"}}"),
            new Seen("exception", null, "throttlingException", "application/json", "{\"message\":\"Too many requests\"}"));

    @Test
    void awsEncodedStream_inOnePiece_decodesEveryMessageAndSkipsEveryHeaderType() {
        List<Seen> seen = new ArrayList<>();
        EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);

        String failure = feed(d, stream(), seen);

        assertThat(failure).isNull();
        assertThat(seen).isEqualTo(EXPECTED);
        assertThat(d.hasPartial()).isFalse();
        d.release();
    }

    @Test
    void awsEncodedStream_cutAtEveryByte_decodesTheSameMessages() {
        byte[] all = stream();
        for (int cut = 0; cut <= all.length; cut++) {
            List<Seen> seen = new ArrayList<>();
            EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);
            assertThat(feed(d, slice(all, 0, cut), seen)).isNull();
            assertThat(feed(d, slice(all, cut, all.length), seen)).isNull();
            assertThat(seen).as("cut at %d", cut).isEqualTo(EXPECTED);
            assertThat(d.hasPartial()).isFalse();
            d.release();
        }
    }

    @Test
    void awsEncodedStream_byteByByte_decodesTheSameMessages() {
        byte[] all = stream();
        List<Seen> seen = new ArrayList<>();
        EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);
        for (int i = 0; i < all.length; i++) {
            assertThat(feed(d, slice(all, i, i + 1), seen)).isNull();
        }
        assertThat(seen).isEqualTo(EXPECTED);
        d.release();
    }

    @Test
    void corruptedByte_anywhere_failsOnAChecksumOrBoundNeverDeliversTheCorruptedMessage() {
        byte[] all = stream();
        int first = (int) ByteBuffer.wrap(all).getInt(0);
        for (int at = 0; at < first; at++) {
            byte[] bad = all.clone();
            bad[at] ^= 0x20;
            List<Seen> seen = new ArrayList<>();
            EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);
            String failure = feed(d, bad, seen);
            assertThat(failure).as("corrupted byte %d", at).isNotNull()
                    .matches("prelude CRC mismatch|message CRC mismatch|.*outside.*|.*does not fit.*");
            assertThat(seen).as("nothing of a corrupted message is delivered (byte %d)", at).isEmpty();
            assertThat(feed(d, all, seen)).as("a failed decoder stays failed").isEqualTo(failure);
            assertThat(seen).isEmpty();
            d.release();
        }
    }

    @Test
    void corruptedPayload_messageCrcMismatch_afterTheGoodMessagesBeforeIt() {
        byte[] all = stream();
        byte[] bad = all.clone();
        bad[all.length - 10] ^= 0x01; // inside the last message's payload
        List<Seen> seen = new ArrayList<>();
        EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);

        assertThat(feed(d, bad, seen)).isEqualTo("message CRC mismatch");
        assertThat(seen).isEqualTo(EXPECTED.subList(0, 2));
        d.release();
    }

    @Test
    void messageLongerThanTheLimit_failsBeforeAnythingIsGathered() {
        byte[] all = stream();
        EventStreamDecoder d = new EventStreamDecoder(ALLOC, 40);
        List<Seen> seen = new ArrayList<>();

        assertThat(feed(d, slice(all, 0, 12), seen)).contains("outside 16..40");
        assertThat(d.hasPartial()).isFalse();
        d.release();
    }

    @Test
    void truncatedMessage_isHeldAsPartial_andReleasedWithoutLeak() {
        byte[] all = stream();
        List<Seen> seen = new ArrayList<>();
        EventStreamDecoder d = new EventStreamDecoder(ALLOC, 1 << 20);

        assertThat(feed(d, slice(all, 0, all.length - 5), seen)).isNull();

        assertThat(seen).hasSize(2);
        assertThat(d.hasPartial()).isTrue();
        d.release();
        assertThat(d.hasPartial()).isFalse();
    }

    static String feed(EventStreamDecoder d, byte[] bytes, List<Seen> seen) {
        ByteBuf in = ALLOC.directBuffer(Math.max(1, bytes.length)).writeBytes(bytes);
        try {
            return d.feed(in, m -> seen.add(new Seen(m.messageType(), m.eventType(), m.exceptionType(),
                    m.contentType(), m.payload().toString(StandardCharsets.UTF_8))));
        } finally {
            in.release();
        }
    }

    static byte[] slice(byte[] all, int from, int to) {
        byte[] b = new byte[to - from];
        System.arraycopy(all, from, b, 0, b.length);
        return b;
    }
}
