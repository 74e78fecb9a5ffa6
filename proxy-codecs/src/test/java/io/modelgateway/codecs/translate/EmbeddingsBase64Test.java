package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class EmbeddingsBase64Test {
    @Test
    void encode_contractWorkedExample() {
        assertThat(EmbeddingsBase64.encode(new float[] {0.1f, -0.2f, 0.5f}, 3)).isEqualTo("zczMPc3MTL4AAAA/");
    }

    @Test
    void translate_floatArrays_becomeBase64AndTheRestIsKept() throws Exception {
        String in = "{\"object\":\"list\",\"model\":\"e-1\",\"data\":[{\"object\":\"embedding\",\"index\":0,"
                + "\"embedding\":[0.1,-0.2,0.5]},{\"object\":\"embedding\",\"index\":1,\"embedding\":[0.5]}],"
                + "\"usage\":{\"prompt_tokens\":4,\"total_tokens\":4}}";
        ByteBuf body = Unpooled.copiedBuffer(in, StandardCharsets.UTF_8);
        ByteBuf out = new EmbeddingsBase64().translate(ByteBufAllocator.DEFAULT, body);
        try {
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(
                    "{\"object\":\"list\",\"model\":\"e-1\",\"data\":[{\"object\":\"embedding\",\"index\":0,"
                            + "\"embedding\":\"zczMPc3MTL4AAAA/\"},{\"object\":\"embedding\",\"index\":1,"
                            + "\"embedding\":\"AAAAPw==\"}],\"usage\":{\"prompt_tokens\":4,\"total_tokens\":4}}");
            assertThat(body.readerIndex()).isZero();
        } finally {
            out.release();
            body.release();
        }
    }

    @Test
    void translate_garbage_isAnUpstreamError() {
        ByteBuf body = Unpooled.copiedBuffer("{\"data\":[{\"embedding\":[1,", StandardCharsets.UTF_8);
        try {
            assertThatThrownBy(() -> new EmbeddingsBase64().translate(ByteBufAllocator.DEFAULT, body))
                    .isInstanceOf(TranslationException.class);
        } finally {
            body.release();
        }
    }
}
