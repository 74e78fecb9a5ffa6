package io.modelgateway.codecs.json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.Endpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** GD-21 accounting: the upstream is always asked for its usage chunk, whatever else stream_options says. */
class IncludeUsageEditTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String MSG = "\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    @Test
    void noStreamOptions_memberAdded() throws Exception {
        JsonNode n = edited("{ " + MSG + ",\"stream\":true}");
        assertThat(n.at("/stream_options/include_usage").asBoolean()).isTrue();
        assertThat(n.path("model").asText()).isEqualTo("m");
    }

    @Test
    void emptyStreamOptions_includeUsageAdded() throws Exception {
        assertThat(edited("{" + MSG + ",\"stream\":true,\"stream_options\":{ }}").at("/stream_options/include_usage")
                .asBoolean()).isTrue();
    }

    @Test
    void otherStreamOptions_kept() throws Exception {
        JsonNode n = edited("{" + MSG + ",\"stream\":true,\"stream_options\":{\"include_obfuscation\":false}}");
        assertThat(n.at("/stream_options/include_usage").asBoolean()).isTrue();
        assertThat(n.at("/stream_options/include_obfuscation").isBoolean()).isTrue();
    }

    @Test
    void includeUsageFalseOrNull_turnedTrue() throws Exception {
        assertThat(edited("{" + MSG + ",\"stream\":true,\"stream_options\":{\"include_usage\":false,\"x\":1}}")
                .at("/stream_options/include_usage").asBoolean()).isTrue();
        assertThat(edited("{" + MSG + ",\"stream\":true,\"stream_options\":{\"include_usage\" : null}}")
                .at("/stream_options/include_usage").asBoolean()).isTrue();
    }

    @Test
    void alreadyAsked_orNotAStream_noEdit() {
        assertThat(peek("{" + MSG + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}").includeUsageEdit()).isNull();
        assertThat(peek("{" + MSG + "}").includeUsageEdit()).isNull();
        assertThat(peek("{" + MSG + ",\"stream\":false}").includeUsageEdit()).isNull();
    }

    private static RequestPeek peek(String body) {
        return RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), false);
    }

    private static JsonNode edited(String body) throws Exception {
        ByteBuf in = Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8));
        RequestPeek p = RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, in, false);
        assertThat(p.ok()).isTrue();
        ByteBuf out = BodySplicer.splice(ByteBufAllocator.DEFAULT, in, p.includeUsageEdit());
        try {
            return JSON.readTree(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
            in.release();
        }
    }
}
