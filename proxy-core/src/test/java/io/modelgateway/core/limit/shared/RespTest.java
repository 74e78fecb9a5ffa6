package io.modelgateway.core.limit.shared;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RespTest {

    @Test
    void command_partsOfEveryKind_areArraysOfBulkStrings() {
        ByteBuf out = Unpooled.buffer();
        try {
            Resp.array(out, 4);
            Resp.bulk(out, "EVALSHA".getBytes(StandardCharsets.US_ASCII));
            Resp.bulk(out, "mgw:", "u:", "km:team/é");
            Resp.bulk(out, -1);
            Resp.bulk(out, 9_007_199_254_740_992L);

            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("*4\r\n$7\r\nEVALSHA\r\n"
                    + "$16\r\nmgw:u:km:team/é\r\n$2\r\n-1\r\n$16\r\n9007199254740992\r\n");
        } finally {
            out.release();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 7, 10, 99, 100, -9, -10, 1234567890123L, Long.MAX_VALUE, Long.MIN_VALUE})
    void bulk_number_isItsDecimalDigits(long n) {
        ByteBuf out = Unpooled.buffer();
        try {
            Resp.bulk(out, n);

            String digits = Long.toString(n);
            assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo("$" + digits.length() + "\r\n" + digits + "\r\n");
        } finally {
            out.release();
        }
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
        ByteBuf out = Unpooled.buffer();
        try {
            for (long n : values) {
                out.clear();
                Resp.bulk(out, n);
                String digits = Long.toString(n);
                assertThat(out.toString(StandardCharsets.US_ASCII)).as("%d", n)
                        .isEqualTo("$" + digits.length() + "\r\n" + digits + "\r\n");
                assertThat(Resp.length(n)).isEqualTo(digits.length());
            }
        } finally {
            out.release();
        }
    }

    @Test
    void luaScript_shaIsTheSha1OfTheBody() {
        LuaScript admit = LuaScript.load("admit.lua");

        assertThat(admit.shaHex()).matches("[0-9a-f]{40}");
        assertThat(LuaScript.load("admit.lua").shaHex()).isEqualTo(admit.shaHex());
        assertThat(LuaScript.load("settle.lua").shaHex()).isNotEqualTo(admit.shaHex());
    }
}
