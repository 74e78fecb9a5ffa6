package io.modelgateway.codecs.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SseEventScannerTest {
    private static final String OPENAI = "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"caf\u00e9\"}}]}\n\n"
            + "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\" na\u00efve\"}}]}\n\n"
            + ": keep-alive\n\n"
            + "data: [DONE]\n\n";
    private static final String ANTHROPIC = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
            + "event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n"
            + "event: message_stop\rdata: {\"type\":\"message_stop\"}\r\r";

    @Test
    void feed_wholeStream_emitsEachEventAsSlice() {
        List<String> events = scan(List.of(OPENAI.getBytes(StandardCharsets.UTF_8)));
        assertThat(events).containsExactly(
                "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"caf\u00e9\"}}]}\n\n",
                "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\" na\u00efve\"}}]}\n\n",
                ": keep-alive\n\n",
                "data: [DONE]\n\n");
    }

    @Test
    void feed_crlfAndCrLineEnds_areBoundaries() {
        List<String> events = scan(List.of(ANTHROPIC.getBytes(StandardCharsets.UTF_8)));
        assertThat(events).containsExactly(
                "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
                "event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n",
                "event: message_stop\rdata: {\"type\":\"message_stop\"}\r\r");
    }

    @Test
    void feed_cutAtEveryByte_givesSameEventsAndBytes() {
        for (String stream : List.of(OPENAI, ANTHROPIC)) {
            byte[] all = stream.getBytes(StandardCharsets.UTF_8);
            List<String> whole = scan(List.of(all));
            for (int cut = 1; cut < all.length; cut++) {
                byte[] a = java.util.Arrays.copyOfRange(all, 0, cut);
                byte[] b = java.util.Arrays.copyOfRange(all, cut, all.length);
                assertThat(scan(List.of(a, b))).as("cut at %d", cut).isEqualTo(whole);
            }
        }
    }

    @Test
    void feed_randomPieces_concatenationEqualsInput() {
        Random rnd = new Random(7);
        byte[] all = (OPENAI + ANTHROPIC + OPENAI).getBytes(StandardCharsets.UTF_8);
        for (int round = 0; round < 200; round++) {
            List<byte[]> pieces = new ArrayList<>();
            int i = 0;
            while (i < all.length) {
                int n = 1 + rnd.nextInt(Math.min(40, all.length - i));
                pieces.add(java.util.Arrays.copyOfRange(all, i, i + n));
                i += n;
            }
            assertThat(String.join("", scan(pieces))).isEqualTo(new String(all, StandardCharsets.UTF_8));
        }
    }

    @Test
    void drainRemainder_unfinishedEvent_returnsItsBytes() {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        List<String> out = new ArrayList<>();
        ByteBuf in = Unpooled.copiedBuffer("data: a\n\ndata: b", StandardCharsets.UTF_8);
        scanner.feed(in, e -> {
            out.add(e.toString(StandardCharsets.UTF_8));
            e.release();
        });
        in.release();
        assertThat(out).containsExactly("data: a\n\n");
        ByteBuf rest = scanner.drainRemainder();
        assertThat(rest.toString(StandardCharsets.UTF_8)).isEqualTo("data: b");
        rest.release();
        scanner.release();
    }

    @Test
    void release_heldBytes_areFreed() {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        ByteBuf in = Unpooled.directBuffer().writeBytes("data: partial".getBytes(StandardCharsets.UTF_8));
        scanner.feed(in, ByteBuf::release);
        in.release();
        assertThat(in.refCnt()).isEqualTo(1); // held by the scanner's slice
        scanner.release();
        assertThat(in.refCnt()).isZero();
    }

    private static List<String> scan(List<byte[]> pieces) {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        List<String> out = new ArrayList<>();
        for (byte[] piece : pieces) {
            ByteBuf in = Unpooled.directBuffer(piece.length).writeBytes(piece);
            scanner.feed(in, e -> {
                try {
                    out.add(e.toString(StandardCharsets.UTF_8));
                } finally {
                    e.release();
                }
            });
            in.release();
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            out.add(rest.toString(StandardCharsets.UTF_8));
            rest.release();
        }
        return out;
    }
}
