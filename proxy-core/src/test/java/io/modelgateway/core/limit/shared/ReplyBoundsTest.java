package io.modelgateway.core.limit.shared;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisArrayAggregator;
import io.netty.handler.codec.redis.RedisBulkStringAggregator;
import io.netty.handler.codec.redis.RedisDecoder;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ReplyBoundsTest {

    private static EmbeddedChannel channel() {
        return new EmbeddedChannel(new RedisDecoder(), new ReplyBounds(), new RedisBulkStringAggregator(),
                new RedisArrayAggregator());
    }

    private static void feed(EmbeddedChannel ch, String resp) {
        ch.writeInbound(Unpooled.copiedBuffer(resp, StandardCharsets.US_ASCII));
    }

    @Test
    void replies_withinBounds_passWhole() {
        EmbeddedChannel ch = channel();

        feed(ch, "*2\r\n:1\r\n:-7\r\n$40\r\n" + "a".repeat(40) + "\r\n");

        ArrayRedisMessage array = ch.readInbound();
        FullBulkStringRedisMessage sha = ch.readInbound();
        try {
            assertThat(array.children()).hasSize(2);
            assertThat(((IntegerRedisMessage) array.children().get(1)).value()).isEqualTo(-7);
            assertThat(sha.content().toString(StandardCharsets.US_ASCII)).isEqualTo("a".repeat(40));
            assertThat(ch.isOpen()).isTrue();
        } finally {
            ReferenceCountUtil.release(array);
            ReferenceCountUtil.release(sha);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void array_announcingMoreThanTheBound_closesBeforeAnythingIsSized() {
        EmbeddedChannel ch = channel();

        feed(ch, "*536870000\r\n:1\r\n");

        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void bulkString_announcingMoreThanTheBound_closes() {
        EmbeddedChannel ch = channel();

        feed(ch, "$100000000\r\nxxxx");

        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
