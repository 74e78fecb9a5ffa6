package io.modelgateway.core.limit.shared;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RespTest {

    /** What {@code resp} holds, as text. */
    private static String written(Resp resp) {
        ByteBuf out = Unpooled.buffer();
        try {
            resp.writeTo(out);
            assertThat(out.readableBytes()).isEqualTo(resp.length());
            return out.toString(StandardCharsets.UTF_8);
        } finally {
            out.release();
        }
    }

    @Test
    void command_partsOfEveryKind_areArraysOfBulkStrings() {
        Resp resp = new Resp();
        resp.array(4);
        resp.bulk("EVALSHA".getBytes(StandardCharsets.US_ASCII));
        resp.bulk("mgw:u:km:team/é");
        resp.bulk(-1);
        resp.bulk(9_007_199_254_740_992L);

        assertThat(written(resp)).isEqualTo("*4\r\n$7\r\nEVALSHA\r\n"
                + "$16\r\nmgw:u:km:team/é\r\n$2\r\n-1\r\n$16\r\n9007199254740992\r\n");
    }

    @Test
    void bulk_text_isItsUtf8Bytes_asciiOrNot() {
        for (String text : new String[] {"", "mgw:u:k:bench", "\u007f", "é", "km:ÿ/€/😀", "a".repeat(1000)}) {
            Resp resp = new Resp();
            resp.bulk(text);
            byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
            assertThat(written(resp)).as(text).isEqualTo("$" + utf8.length + "\r\n" + text + "\r\n");
        }
    }

    @Test
    void reset_startsTheNextCommand_andALargeOneIsNotKept() {
        Resp resp = new Resp();
        byte[] body = new byte[Resp.KEEP_MAX * 2];
        java.util.Arrays.fill(body, (byte) 'x');
        resp.array(2);
        resp.bulk(body);
        resp.bulk(7);
        assertThat(resp.length()).isEqualTo(4 + 1 + 5 + 2 + body.length + 2 + 7);

        resp.reset();
        assertThat(resp.length()).isZero();
        resp.array(1);
        resp.bulk("PING");
        assertThat(written(resp)).isEqualTo("*1\r\n$4\r\nPING\r\n");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 7, 10, 99, 100, -9, -10, 1234567890123L, Long.MAX_VALUE, Long.MIN_VALUE})
    void bulk_number_isItsDecimalDigits(long n) {
        Resp resp = new Resp();
        resp.bulk(n);

        String digits = Long.toString(n);
        assertThat(written(resp)).isEqualTo("$" + digits.length() + "\r\n" + digits + "\r\n");
    }

    @Test
    void bulk_number_everyLengthAndBoundary_matchesLongToString() {
        java.util.List<Long> values = new java.util.ArrayList<>();
        for (long p = 1; p > 0 && p <= Long.MAX_VALUE / 10 * 10; p *= 10) {
            for (long v : new long[] {p - 1, p, p + 1, -p, -(p - 1), 3 * p + 7}) {
                values.add(v);
            }
            if (p > Long.MAX_VALUE / 10) {
                break;
            }
        }
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 2000; i++) {
            values.add(random.nextLong() >> random.nextInt(64));
        }
        Resp resp = new Resp();
        StringBuilder expected = new StringBuilder();
        for (long n : values) {
            resp.reset();
            resp.bulk(n);
            String digits = Long.toString(n);
            assertThat(written(resp)).as("%d", n).isEqualTo("$" + digits.length() + "\r\n" + digits + "\r\n");
        }
        // Many parts in one command, the array growing under them.
        resp.reset();
        resp.array(values.size());
        expected.append('*').append(values.size()).append("\r\n");
        for (long n : values) {
            resp.bulk(n);
            String digits = Long.toString(n);
            expected.append('$').append(digits.length()).append("\r\n").append(digits).append("\r\n");
        }
        assertThat(written(resp)).isEqualTo(expected.toString());
    }

    @Test
    void luaScript_shaIsTheSha1OfTheBody() {
        LuaScript admit = LuaScript.load("admit.lua");

        assertThat(admit.shaHex()).matches("[0-9a-f]{40}");
        assertThat(LuaScript.load("admit.lua").shaHex()).isEqualTo(admit.shaHex());
        assertThat(LuaScript.load("settle.lua").shaHex()).isNotEqualTo(admit.shaHex());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 9, 10, 85, 99, 100, 995, 1000, 10_000})
    void bulk_headAndNumber_isTheBulkOfTheirConcatenation(int headLength) {
        String head = "h".repeat(headLength);
        for (long n : new long[] {0, 7, 12345, -3, Long.MAX_VALUE, Long.MIN_VALUE}) {
            Resp resp = new Resp();
            resp.bulk(head.getBytes(StandardCharsets.US_ASCII), n);
            String text = head + n;
            assertThat(written(resp)).as(headLength + "/" + n).isEqualTo("$" + text.length() + "\r\n" + text + "\r\n");
        }
    }

    @Test
    void raw_appendsPartsEncodedBefore_asTheyWere() {
        Resp once = new Resp();
        once.bulk("mgw:u:k:team");
        once.bulk(100_000);
        byte[] parts = once.toByteArray();
        assertThat(parts).hasSize(once.length());

        Resp resp = new Resp();
        resp.array(4);
        resp.bulk("EVALSHA".getBytes(StandardCharsets.US_ASCII));
        resp.raw(parts);
        resp.bulk(-1);
        assertThat(written(resp)).isEqualTo("*4\r\n$7\r\nEVALSHA\r\n$12\r\nmgw:u:k:team\r\n$6\r\n100000\r\n"
                + "$2\r\n-1\r\n");
    }
}
