package io.modelgateway.codecs.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class EventBytesTest {

    private static byte[] copied(EventBytes view) {
        return Arrays.copyOf(view.bytes(), view.length());
    }

    @Test
    void sliceDirectAndComposite_giveTheReadableBytes_andLeaveTheEventAsItWas() {
        byte[] text = "event: ping\ndata: {\"type\":\"ping\"}\n\n".getBytes(StandardCharsets.US_ASCII);
        ByteBuf wide = Unpooled.buffer().writeZero(11).writeBytes(text).writeZero(5);
        ByteBuf direct = Unpooled.directBuffer().writeBytes(text);
        CompositeByteBuf composite = Unpooled.compositeBuffer()
                .addComponent(true, Unpooled.wrappedBuffer(text, 0, 7))
                .addComponent(true, Unpooled.wrappedBuffer(text, 7, text.length - 7));
        try {
            ByteBuf slice = wide.slice(11, text.length);
            for (ByteBuf event : new ByteBuf[] {slice, direct, composite}) {
                int reader = event.readerIndex();
                int writer = event.writerIndex();
                assertThat(copied(EventBytes.of(event))).isEqualTo(text);
                assertThat(event.readerIndex()).isEqualTo(reader);
                assertThat(event.writerIndex()).isEqualTo(writer);
            }
            direct.readerIndex(7);
            assertThat(copied(EventBytes.of(direct))).as("from the reader index on")
                    .isEqualTo(Arrays.copyOfRange(text, 7, text.length));
        } finally {
            wide.release();
            direct.release();
            composite.release();
        }
    }

    /**
     * Events of every size between the first array's and past the kept limit: the thread's array grows up to the
     * limit and is reused; a longer event gets an array of its own, and the next short event is in the kept array
     * again, whole and with nothing of the long one in its length.
     */
    @Test
    void growsUpToTheKeptLimit_andLongerEventsGetTheirOwnArray() {
        int[] sizes = {0, 1, 1023, 1024, 1025, 5000, EventBytes.KEPT, EventBytes.KEPT + 1, 3 * EventBytes.KEPT, 17};
        byte[] previous = null;
        for (int n : sizes) {
            byte[] text = new byte[n];
            for (int i = 0; i < n; i++) {
                text[i] = (byte) ('a' + (i * 7 + n) % 26);
            }
            ByteBuf event = Unpooled.wrappedBuffer(text);
            try {
                EventBytes view = EventBytes.of(event);
                assertThat(view.length()).isEqualTo(n);
                assertThat(copied(view)).as("%d bytes", n).isEqualTo(text);
                if (n > EventBytes.KEPT) {
                    assertThat(view.bytes()).as("an array of its own").isNotSameAs(previous).hasSize(n);
                } else {
                    assertThat(view.bytes().length).isLessThanOrEqualTo(EventBytes.KEPT);
                    previous = view.bytes();
                }
            } finally {
                event.release();
            }
        }
    }

    /** The data check on an event longer than the kept array answers as on a short one. */
    @Test
    void checksOnALongEvent() {
        String content = "x".repeat(3 * EventBytes.KEPT);
        ByteBuf ok = Unpooled.copiedBuffer("data: {\"c\":\"" + content + "\"}\n\n", StandardCharsets.US_ASCII);
        ByteBuf cut = Unpooled.copiedBuffer("data: {\"c\":\"" + content + "\n\n", StandardCharsets.US_ASCII);
        try {
            assertThat(SseDataCheck.plausible(ok)).isTrue();
            assertThat(SseDataCheck.plausible(cut)).isFalse();
        } finally {
            ok.release();
            cut.release();
        }
    }
}
