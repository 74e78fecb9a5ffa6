package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A number as {@link DecimalText}: the JDK's decimal text (also as counted and written by its helpers), and the same
 * bytes from Netty's encoder as for the JDK's String.
 */
class DecimalTextTest {

    private static List<Long> numbers() {
        List<Long> n = new ArrayList<>(List.of(0L, 1L, 9L, Long.MAX_VALUE, Long.MAX_VALUE - 1));
        for (long p = 1; ; p *= 10) { // each power of ten and its neighbours, up to 10^18
            n.add(p);
            n.add(p - 1);
            n.add(p + 1);
            if (p > Long.MAX_VALUE / 10) {
                break;
            }
        }
        Random r = new Random(20261130);
        for (int i = 0; i < 5000; i++) {
            n.add((r.nextLong() >>> 1) >>> r.nextInt(63));
        }
        return n;
    }

    @Test
    void everyCharacterAndTheLength_areTheJdksDecimalText() {
        for (long v : numbers()) {
            String expected = Long.toString(v);
            DecimalText t = new DecimalText(v);
            assertThat(t.length()).as(expected).isEqualTo(expected.length());
            assertThat(t.toString()).isEqualTo(expected);
            assertThat(AsciiString.contentEquals(t, expected)).as(expected).isTrue();
            assertThat(t.subSequence(0, t.length()).toString()).isEqualTo(expected);
            assertThat(DecimalText.digitCount(v)).isEqualTo(expected.length());
            ByteBuf written = Unpooled.buffer();
            DecimalText.write(written, v);
            assertThat(written.toString(StandardCharsets.US_ASCII)).isEqualTo(expected);
            written.release();
        }
        assertThat(new DecimalText(4096).subSequence(1, 3).toString()).isEqualTo("09");
        assertThatThrownBy(() -> new DecimalText(5).charAt(1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new DecimalText(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nettysEncoder_writesTheSameHeadAsForTheString() {
        for (long v : numbers().subList(0, 200)) {
            assertThat(encoded(new DecimalText(v))).isEqualTo(encoded(Long.toString(v)));
        }
    }

    private static String encoded(CharSequence remaining) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpResponseEncoder());
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        r.headers().set("x-ratelimit-remaining-requests", remaining).set("content-length", 0);
        ch.writeOutbound(r);
        StringBuilder wire = new StringBuilder();
        for (ByteBuf b; (b = ch.readOutbound()) != null; b.release()) {
            wire.append(b.toString(StandardCharsets.US_ASCII));
        }
        ch.finishAndReleaseAll();
        return wire.toString();
    }
}
