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
    void feed_toASink_lendsRangesInPlace_andHoldsNothingOnceAnEventEnds() {
        // The sink form (what the gateway's relay uses): each event is a range of a buffer lent for the call. A range
        // of a read is that read itself, untouched; an event that spanned reads is lent from the scanner's own pieces
        // and dropped after the call, so once the stream ends on a whole event no read is held any longer.
        Random rnd = new Random(11);
        byte[] all = (OPENAI + ANTHROPIC + OPENAI).getBytes(StandardCharsets.UTF_8);
        List<String> expected = scan(List.of(all));
        for (int round = 0; round < 200; round++) {
            SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
            List<String> out = new ArrayList<>();
            List<ByteBuf> reads = new ArrayList<>();
            int i = 0;
            while (i < all.length) {
                int n = 1 + rnd.nextInt(Math.min(60, all.length - i));
                ByteBuf in = Unpooled.directBuffer(n).writeBytes(all, i, n);
                reads.add(in);
                int readerIndex = in.readerIndex();
                int writerIndex = in.writerIndex();
                assertThat(scanner.feed(in, (buf, index, length) -> {
                    assertThat(buf.refCnt()).isPositive();
                    out.add(buf.toString(index, length, StandardCharsets.UTF_8));
                })).isTrue();
                assertThat(in.readerIndex()).isEqualTo(readerIndex);
                assertThat(in.writerIndex()).isEqualTo(writerIndex);
                i += n;
            }
            assertThat(scanner.drainRemainder()).isNull();
            assertThat(out).isEqualTo(expected);
            for (ByteBuf in : reads) {
                assertThat(in.refCnt()).as("only the test's own reference is left").isEqualTo(1);
                in.release();
            }
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

    /**
     * Event boundaries against a splitter written here, byte by byte from the scanner's stated rule (an event ends
     * at its second line end in a row, CR LF counting as one; a CR that may yet be followed by its LF waits for it),
     * on random bytes rich in CR and LF, cut into random reads of 1 byte to 30 KB: events longer than the scanner's
     * eight-kilobyte copy window, reads that end inside it, line ends on every side of its edges.
     */
    @Test
    void feed_randomBytesAndReads_sameEventsAsAByteByByteSplitter() {
        Random rnd = new Random(11);
        byte[] alphabet = {'\r', '\n', '\n', 'a', 'd', ':', ' ', '{', (byte) 0xC3, 0};
        for (int round = 0; round < 300; round++) {
            int length = rnd.nextInt(round % 10 == 0 ? 40_000 : 600);
            int run = 1 + rnd.nextInt(round % 3 == 0 ? 12_000 : 30); // long runs without line ends now and then
            byte[] all = new byte[length];
            for (int i = 0; i < length; i++) {
                boolean plain = rnd.nextInt(run) != 0;
                all[i] = plain ? (byte) ('b' + rnd.nextInt(20)) : alphabet[rnd.nextInt(alphabet.length)];
            }
            List<byte[]> reads = new ArrayList<>();
            for (int i = 0; i < length; ) {
                int n = 1 + rnd.nextInt(Math.min(length - i, rnd.nextBoolean() ? 30_000 : 50));
                reads.add(java.util.Arrays.copyOfRange(all, i, i + n));
                i += n;
            }
            assertThat(scanLatin1(reads)).as("round %d", round).isEqualTo(split(all));
        }
    }

    /**
     * Line ends on and around the edges of the scanner's copy window (8,192 bytes from where a search starts): long
     * lines whose end falls a few bytes before, on or after an edge, one edge or three further on, after a first
     * event that moves where the window starts; CR LF pairs cut by an edge too. One read each.
     */
    @Test
    void feed_lineEndsAtTheCopyWindowEdges_sameEventsAsAByteByByteSplitter() {
        for (String end : List.of("\n\n", "\r\n\r\n", "\r\r")) {
            for (String first : List.of("", "data: a\n\n", "event: e\ndata: {}\n\n")) {
                for (int edge = 1; edge <= 3; edge++) {
                    for (int off = -4; off <= 4; off++) {
                        int line = edge * 8192 + off - "data: ".length();
                        String text = first + "data: " + "x".repeat(line) + end + "data: y" + end + "data: z";
                        byte[] all = text.getBytes(StandardCharsets.ISO_8859_1);
                        assertThat(scanLatin1(List.of(all))).as("edge %d%+d after %s", edge, off, first)
                                .isEqualTo(split(all));
                    }
                }
            }
        }
    }

    /** An event handler that feeds another scanner on the same thread: each scanner still finds its own events. */
    @Test
    void feed_anotherScannerFedFromAnEventHandler_bothSplitRight() {
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            big.append("data: ").append("x".repeat(300 + i)).append("\n\n");
        }
        byte[] outer = big.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] inner = "event: ping\ndata: {}\n\ndata: [DONE]\n\n".getBytes(StandardCharsets.ISO_8859_1);
        SseEventScanner first = new SseEventScanner(ByteBufAllocator.DEFAULT);
        SseEventScanner second = new SseEventScanner(ByteBufAllocator.DEFAULT);
        List<String> outerEvents = new ArrayList<>();
        List<String> innerEvents = new ArrayList<>();
        ByteBuf in = Unpooled.directBuffer(outer.length).writeBytes(outer);
        first.feed(in, e -> {
            collectLatin1(outerEvents, e);
            ByteBuf other = Unpooled.directBuffer(inner.length).writeBytes(inner);
            second.feed(other, e2 -> collectLatin1(innerEvents, e2));
            other.release();
        });
        in.release();
        assertThat(outerEvents).isEqualTo(split(outer));
        assertThat(innerEvents).hasSize(80).containsOnly("event: ping\ndata: {}\n\n", "data: [DONE]\n\n");
        first.release();
        second.release();
    }

    /** The scanner's rule, one byte at a time over the whole input: the events, then what is left unfinished. */
    private static List<String> split(byte[] d) {
        List<String> events = new ArrayList<>();
        int start = 0;
        int ends = 0;
        for (int i = 0; i < d.length; i++) {
            byte b = d[i];
            if (b == '\n' && i > 0 && d[i - 1] == '\r') {
                if (ends >= 2) { // the LF of a CR LF that made the blank line
                    events.add(new String(d, start, i + 1 - start, StandardCharsets.ISO_8859_1));
                    start = i + 1;
                    ends = 0;
                }
            } else if (b == '\r' || b == '\n') {
                ends++;
                boolean lfMayFollow = b == '\r' && (i + 1 == d.length || d[i + 1] == '\n');
                if (ends >= 2 && !lfMayFollow) {
                    events.add(new String(d, start, i + 1 - start, StandardCharsets.ISO_8859_1));
                    start = i + 1;
                    ends = 0;
                }
            } else {
                ends = 0;
            }
        }
        if (start < d.length) {
            events.add(new String(d, start, d.length - start, StandardCharsets.ISO_8859_1));
        }
        return events;
    }

    private static List<String> scanLatin1(List<byte[]> reads) {
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        List<String> out = new ArrayList<>();
        for (byte[] read : reads) {
            ByteBuf in = Unpooled.directBuffer(read.length).writeBytes(read);
            scanner.feed(in, e -> collectLatin1(out, e));
            in.release();
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            collectLatin1(out, rest);
        }
        return out;
    }

    private static void collectLatin1(List<String> out, ByteBuf e) {
        try {
            out.add(e.toString(StandardCharsets.ISO_8859_1));
        } finally {
            e.release();
        }
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
