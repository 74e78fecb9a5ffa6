package io.modelgateway.codecs.json;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DuplicateKeysTest {

    @Test
    void find_namesThePathOfTheFirstDuplicate() {
        assertThat(find("{\"a\":1,\"b\":{\"c\":[1,{\"d\":0},{\"e\":1,\"e\":2}]},\"a\":3}")).isEqualTo("b.c[2].e");
        assertThat(find("{\"a\":1,\"a\":2}")).isEqualTo("a");
        assertThat(find("{\"m\":[[],{\"x\":{}},{\"x\":{\"y\":1,\"y\":1}}]}")).isEqualTo("m[2].x.y");
    }

    @Test
    void find_noDuplicateOrNotJson_isNull() {
        assertThat(find("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}]}")).isNull();
        assertThat(find("{\"a\":")).isNull();
        assertThat(DuplicateKeys.find("{\"k\":1,\"k\":2}")).isEqualTo("k");
    }

    @Test
    void error_is400WithThePathAsParamAndTheKeyInTheMessage() {
        GatewayError e = DuplicateKeys.error("messages[1].role");
        assertThat(e.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.param()).isEqualTo("messages[1].role");
        assertThat(e.code()).isEqualTo("duplicate_key");
        assertThat(e.message()).startsWith("Duplicate key 'messages[1].role'");
        assertThat(DuplicateKeys.error("k".repeat(500)).message()).hasSizeLessThan(200);
    }

    @Test
    void names_collidingMaskBits_stillTellNamesApart() {
        DuplicateKeys.Names names = new DuplicateKeys.Names();
        // "Aa" and "BB" have the same String hash: same mask bit and same hash, told apart by equals
        assertThat(names.add("Aa")).isTrue();
        assertThat(names.add("BB")).isTrue();
        assertThat(names.add("Aa")).isFalse();
        assertThat(names.add("BB")).isFalse();
        names.clear();
        assertThat(names.add("Aa")).isTrue();
    }

    @Test
    void names_pastTheLinearLimit_keepEveryName() {
        DuplicateKeys.Names names = new DuplicateKeys.Names();
        for (int i = 0; i < 3 * DuplicateKeys.Names.LINEAR_MAX; i++) {
            assertThat(names.add("k" + i)).isTrue();
        }
        assertThat(names.add("k0")).isFalse();
        assertThat(names.add("k" + (3 * DuplicateKeys.Names.LINEAR_MAX - 1))).isFalse();
        names.clear();
        assertThat(names.add("k0")).isTrue();
    }

    private static String find(String json) {
        ByteBuf buf = Unpooled.directBuffer().writeBytes(json.getBytes(StandardCharsets.UTF_8));
        try {
            String path = DuplicateKeys.find(buf);
            assertThat(buf.readerIndex()).isZero();
            return path;
        } finally {
            buf.release();
        }
    }
}
