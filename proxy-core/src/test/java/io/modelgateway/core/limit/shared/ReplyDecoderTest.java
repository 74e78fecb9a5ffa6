package io.modelgateway.core.limit.shared;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisArrayAggregator;
import io.netty.handler.codec.redis.RedisBulkStringAggregator;
import io.netty.handler.codec.redis.RedisDecoder;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.codec.redis.SimpleStringRedisMessage;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplyDecoder} against Netty's own Redis decoder and aggregators, the independent reading of the same bytes:
 * every reply shape our scripts and the handshake get (integer arrays, integers, bulk strings and their null, simple
 * strings, errors, nested arrays), whole, cut at every byte and byte by byte; and the bounds that close the
 * connection before a hostile announcement sizes anything.
 */
class ReplyDecoderTest {

    /** What a Redis server sends for our calls, and the shapes around them. */
    private static final String[] REPLIES = {
        "*13\r\n:1\r\n:20417\r\n:100\r\n:99\r\n:600000\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n:0\r\n",
        "*13\r\n:0\r\n:20417\r\n:0\r\n:0\r\n:0\r\n:100000\r\n:-5\r\n:1764080400123456\r\n:2\r\n:2\r\n:1200\r\n:99995\r\n:10\r\n",
        ":1\r\n", ":0\r\n", ":-1\r\n", ":9223372036854775807\r\n", ":-9223372036854775807\r\n",
        "$40\r\n" + "0123456789abcdef0123456789abcdef01234567" + "\r\n", "$0\r\n\r\n", "$-1\r\n",
        "+OK\r\n", "+PONG\r\n", "-NOSCRIPT No matching script. Please use EVAL.\r\n",
        "-ERR wrong number of arguments for 'evalsha' command\r\n",
        "*2\r\n:1764080400\r\n:123456\r\n", "*0\r\n", "*-1\r\n",
        "*3\r\n*2\r\n:1\r\n$3\r\nabc\r\n$-1\r\n+x\r\n",
        "*3\r\n:1\r\n:2\r\n$1\r\nz\r\n", "*2\r\n:7\r\n*1\r\n:8\r\n",
    };

    @Test
    void everyReply_wholeCutEverywhereAndByteByByte_readsAsNettysDecoderReadsIt() {
        StringBuilder all = new StringBuilder();
        for (String r : REPLIES) {
            all.append(r);
        }
        byte[] bytes = all.toString().getBytes(StandardCharsets.UTF_8);
        List<String> expected = describe(decode(nettys(), bytes, List.of(bytes.length)));
        assertThat(expected).hasSize(REPLIES.length);

        assertThat(describe(decode(ours(), bytes, List.of(bytes.length)))).isEqualTo(expected);
        for (int cut = 1; cut < bytes.length; cut++) {
            assertThat(describe(decode(ours(), bytes, List.of(cut, bytes.length - cut)))).as("cut at %d", cut)
                    .isEqualTo(expected);
        }
        List<Integer> ones = new ArrayList<>();
        for (int i = 0; i < bytes.length; i++) {
            ones.add(1);
        }
        assertThat(describe(decode(ours(), bytes, ones))).isEqualTo(expected);
    }

    @Test
    void randomIntegerArrays_readAsNettysDecoderReadsThem() {
        Random random = new Random(7);
        StringBuilder all = new StringBuilder();
        for (int r = 0; r < 300; r++) {
            int n = random.nextInt(20);
            all.append('*').append(n).append("\r\n");
            for (int i = 0; i < n; i++) {
                all.append(':').append(random.nextLong() >> random.nextInt(64)).append("\r\n");
            }
        }
        byte[] bytes = all.toString().getBytes(StandardCharsets.US_ASCII);
        List<Integer> pieces = new ArrayList<>();
        for (int left = bytes.length; left > 0; ) {
            int n = Math.min(left, 1 + random.nextInt(64));
            pieces.add(n);
            left -= n;
        }
        assertThat(describe(decode(ours(), bytes, pieces)))
                .isEqualTo(describe(decode(nettys(), bytes, List.of(bytes.length))));
    }

    @Test
    void array_announcingMoreThanTheBound_closesBeforeAnythingIsSized() {
        assertClosedBy("*536870000\r\n:1\r\n");
    }

    @Test
    void bulkString_announcingMoreThanTheBound_closes() {
        assertClosedBy("$100000000\r\nxxxx");
    }

    @Test
    void lineWithoutEnd_pastTheBound_closes() {
        assertClosedBy("+" + "x".repeat(ReplyDecoder.MAX_LINE + 10));
    }

    @Test
    void arraysNestedTooDeep_close() {
        assertClosedBy("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n");
    }

    @Test
    void notResp_closes() {
        assertClosedBy("HTTP/1.1 200 OK\r\n");
        assertClosedBy(":12a\r\n");
        assertClosedBy("$3\r\nabcd\r\n");
        assertClosedBy(":1\rx");
    }

    @Test
    void aReplyInPieces_waitsForItsEnd_andReleasesWhatItHeld() {
        EmbeddedChannel ch = ours();
        ch.writeInbound(Unpooled.copiedBuffer("*2\r\n$3\r\nabc\r\n", StandardCharsets.US_ASCII));
        assertThat((Object) ch.readInbound()).isNull();
        ch.writeInbound(Unpooled.copiedBuffer(":5\r\n", StandardCharsets.US_ASCII));
        ArrayRedisMessage a = ch.readInbound();
        try {
            assertThat(describe(a)).isEqualTo("[bulk:abc, int:5]");
        } finally {
            ReferenceCountUtil.release(a);
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    private static void assertClosedBy(String bytes) {
        EmbeddedChannel ch = ours();
        ch.writeInbound(Unpooled.copiedBuffer(bytes, StandardCharsets.US_ASCII));
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(ch.isOpen()).as(bytes).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    private static EmbeddedChannel ours() {
        return new EmbeddedChannel(new ReplyDecoder());
    }

    private static EmbeddedChannel nettys() {
        return new EmbeddedChannel(new RedisDecoder(), new RedisBulkStringAggregator(), new RedisArrayAggregator());
    }

    /** Feeds {@code bytes} in pieces of the given sizes and returns what came out. */
    private static List<RedisMessage> decode(EmbeddedChannel ch, byte[] bytes, List<Integer> pieces) {
        int at = 0;
        for (int n : pieces) {
            ByteBuf piece = Unpooled.buffer(n);
            piece.writeBytes(bytes, at, n);
            at += n;
            ch.writeInbound(piece);
        }
        List<RedisMessage> out = new ArrayList<>();
        for (RedisMessage m; (m = ch.readInbound()) != null; ) {
            out.add(m);
        }
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return out;
    }

    /** Text of the messages, releasing them. */
    private static List<String> describe(List<RedisMessage> messages) {
        List<String> out = new ArrayList<>();
        for (RedisMessage m : messages) {
            try {
                out.add(describe(m));
            } finally {
                ReferenceCountUtil.release(m);
            }
        }
        return out;
    }

    private static String describe(RedisMessage m) {
        if (m instanceof IntegerRedisMessage i) {
            return "int:" + i.value();
        }
        if (m instanceof SimpleStringRedisMessage s) {
            return "simple:" + s.content();
        }
        if (m instanceof ErrorRedisMessage e) {
            return "error:" + e.content();
        }
        if (m instanceof FullBulkStringRedisMessage b) {
            return b.isNull() ? "bulk:null" : "bulk:" + b.content().toString(StandardCharsets.UTF_8);
        }
        if (m instanceof IntegerArrayReply a) {
            List<String> children = new ArrayList<>();
            for (long v : a.values()) {
                children.add("int:" + v);
            }
            return children.toString();
        }
        if (m instanceof ArrayRedisMessage a) {
            if (a.isNull()) {
                return "array:null";
            }
            List<String> children = new ArrayList<>();
            for (RedisMessage c : a.children()) {
                children.add(describe(c));
            }
            return children.toString();
        }
        return "unknown:" + m;
    }
}
