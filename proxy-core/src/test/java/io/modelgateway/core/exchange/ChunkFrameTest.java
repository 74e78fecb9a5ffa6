package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ChunkFrameTest {

    /**
     * Frames of many sizes (each hex digit count, the powers of 16 and one below), one after another in a chunked
     * answer, read back by Netty's own HTTP response decoder: the data comes out whole and in order, and each size line
     * is the shortest hex form of the data's length (no leading zeros).
     */
    @Test
    void frames_readBackByAnHttpDecoder_asTheirData() {
        int[] sizes = {1, 2, 15, 16, 17, 255, 256, 4095, 4096, 65_535, 65_536, 1_048_575, 1_048_576, 300};
        SplittableRandom random = new SplittableRandom(3);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.writeBytes("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        for (int size : sizes) {
            byte[] data = new byte[size];
            for (int i = 0; i < size; i++) {
                data[i] = (byte) random.nextInt(256);
            }
            expected.writeBytes(data);
            ByteBuf b = ChunkFrame.newBuffer(ByteBufAllocator.DEFAULT, 16);
            b.writeBytes(data); // grows past the first capacity for most sizes
            assertThat(ChunkFrame.frame(b)).isEqualTo(size);
            byte[] framed = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), framed);
            b.release();
            String sizeLine = new String(framed, 0, Integer.toHexString(size).length() + 2, StandardCharsets.US_ASCII);
            assertThat(sizeLine).isEqualTo(Integer.toHexString(size) + "\r\n");
            wire.writeBytes(framed);
        }
        wire.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        EmbeddedChannel decoder = new EmbeddedChannel(new HttpResponseDecoder());
        decoder.writeInbound(Unpooled.wrappedBuffer(wire.toByteArray()));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        boolean last = false;
        Object msg;
        while ((msg = decoder.readInbound()) != null) {
            if (msg instanceof HttpResponse r) {
                assertThat(r.decoderResult().isSuccess()).isTrue();
            }
            if (msg instanceof HttpContent c) {
                assertThat(c.decoderResult().isSuccess()).isTrue();
                byte[] piece = new byte[c.content().readableBytes()];
                c.content().readBytes(piece);
                body.writeBytes(piece);
                last |= msg instanceof LastHttpContent;
            }
            io.netty.util.ReferenceCountUtil.release(msg);
        }
        decoder.finishAndReleaseAll();
        assertThat(last).isTrue();
        assertThat(body.toByteArray()).isEqualTo(expected.toByteArray());
    }

    @Test
    void frame_ofNoData_isRefused_aZeroChunkWouldEndTheBody() {
        ByteBuf b = ChunkFrame.newBuffer(ByteBufAllocator.DEFAULT, 8);
        try {
            assertThatThrownBy(() -> ChunkFrame.frame(b)).isInstanceOf(IllegalArgumentException.class);
        } finally {
            b.release();
        }
    }
}
