package io.modelgateway.codecs.sse;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;

/**
 * Any bytes, cut anywhere: the events handed on, followed by the remainder, are exactly the bytes fed in,
 * and every buffer is released. Regression mode (the default, used in CI) replays the seeds in
 * src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class SseEventScannerFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void scan_anyBytesAnyCut_preservesBytes(byte[] data) {
        int cut = data.length == 0 ? 0 : (data[0] & 0xff) % data.length;
        SseEventScanner scanner = new SseEventScanner(ByteBufAllocator.DEFAULT);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        feed(scanner, data, 0, cut, out);
        feed(scanner, data, cut, data.length, out);
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            byte[] b = new byte[rest.readableBytes()];
            rest.readBytes(b);
            out.writeBytes(b);
            rest.release();
        }
        scanner.release();
        assertThat(out.toByteArray()).isEqualTo(data);
    }

    private static void feed(SseEventScanner scanner, byte[] data, int from, int to, ByteArrayOutputStream out) {
        if (to <= from) {
            return;
        }
        ByteBuf in = Unpooled.directBuffer(to - from).writeBytes(data, from, to - from);
        scanner.feed(in, e -> {
            byte[] b = new byte[e.readableBytes()];
            e.readBytes(b);
            out.writeBytes(b);
            e.release();
        });
        in.release();
    }
}
