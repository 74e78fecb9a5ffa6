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

    @Test
    void feed_eventPastTheLimitInOneRead_returnsFalse_afterTheEventsBeforeIt() {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT, 32);
        List<String> out = new ArrayList<>();
        ByteBuf in = Unpooled.copiedBuffer("data: 1\n\ndata: {\"x\":\"" + "y".repeat(40) + "\"}\n\ndata: 3\n\n",
                StandardCharsets.UTF_8);
        assertThat(scanner.feed(in, e -> collect(out, e))).isFalse();
        assertThat(out).containsExactly("data: 1\n\n");
        assertThat(scanner.overflowed()).isTrue();
        assertThat(scanner.drainRemainder()).as("the oversized event is dropped").isNull();
        assertThat(scanner.feed(in, e -> collect(out, e))).as("nothing more is taken").isFalse();
        assertThat(out).hasSize(1);
        in.release();
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void feed_unfinishedEventGrowingPastTheLimit_returnsFalse_andReleasesWhatItHeld() {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT, 1000);
        List<ByteBuf> reads = new ArrayList<>();
        boolean going = true;
        int fed = 0;
        // data: {"x":" and then chunks with no line end, as a hostile upstream sends them
        ByteBuf first = Unpooled.directBuffer().writeBytes("data: {\"x\":\"".getBytes(StandardCharsets.UTF_8));
        reads.add(first);
        going = scanner.feed(first, ByteBuf::release);
        while (going) {
            ByteBuf chunk = Unpooled.directBuffer(64).writeBytes("z".repeat(64).getBytes(StandardCharsets.UTF_8));
            reads.add(chunk);
            going = scanner.feed(chunk, ByteBuf::release);
            fed += 64;
            assertThat(fed).as("stopped near the limit").isLessThan(1100);
        }
        assertThat(fed).isGreaterThan(900);
        for (ByteBuf r : reads) {
            r.release();
            assertThat(r.refCnt()).as("nothing held after the overflow").isZero();
        }
    }

    @Test
    void feed_eventOfExactlyTheLimit_passesWhole_acrossReads() {
        String event = "data: " + "a".repeat(88) + "\n\n"; // 96 bytes
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT, 96);
        List<String> out = new ArrayList<>();
        byte[] all = (event + event).getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < all.length; i += 10) {
            ByteBuf in = Unpooled.wrappedBuffer(all, i, Math.min(10, all.length - i));
            assertThat(scanner.feed(in, e -> collect(out, e))).isTrue();
            in.release();
        }
        assertThat(out).containsExactly(event, event);
        scanner.release();
    }

    @Test
    void feed_eventTrickledInTinyPieces_isWholeAndExact() {
        StringBuilder data = new StringBuilder("data: ");
        for (int i = 0; i < 5000; i++) {
            data.append((char) ('a' + i % 26));
        }
        String event = data + "\n\n";
        byte[] all = (event + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
        List<byte[]> pieces = new ArrayList<>();
        for (int i = 0; i < all.length; i++) {
            pieces.add(new byte[] {all[i]}); // far more pieces than are ever held as slices
        }
        assertThat(scan(pieces)).containsExactly(event, "data: [DONE]\n\n");
    }

    private static void collect(List<String> out, ByteBuf e) {
        try {
            out.add(e.toString(StandardCharsets.UTF_8));
        } finally {
            e.release();
        }
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
