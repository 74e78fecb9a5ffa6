package io.modelgateway.codecs.bedrock;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The InvokeModel body made from a Messages body: the top-level {@code model} and {@code stream} members found by
 * the byte walk (not the ones nested in messages or tools, not inside strings), replaced and removed by splicing;
 * the result checked by Jackson (an independent parser), every other member as it was.
 */
class BedrockInvokeBodyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode invoke(String body, List<String> betas) throws Exception {
        ByteBuf in = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        ByteBuf out = null;
        try {
            BedrockInvokeBody.Members m = BedrockInvokeBody.scan(in);
            out = BedrockInvokeBody.fromMessages(ByteBufAllocator.DEFAULT, in, m, betas);
            assertThat(out).isNotNull();
            return JSON.readTree(out.toString(StandardCharsets.UTF_8));
        } finally {
            in.release();
            if (out != null) {
                out.release();
            }
        }
    }

    @Test
    void modelAndStream_topLevelOnly_replacedAndRemoved_restUntouched() throws Exception {
        String body = """
                { "messages" : [{"role":"user","content":"say \\"model\\": x, \\"stream\\": true"}],
                  "tools":[{"name":"t","input_schema":{"type":"object","properties":{"model":{"type":"string"},
                    "stream":{"type":"boolean"}}}}],
                  "model" : "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
                  "metadata":{"model":"nested"},
                  "stream" : true ,
                  "max_tokens": 10 }""";

        JsonNode out = invoke(body, List.of());
        JsonNode expected = JSON.readTree(body);
        ((com.fasterxml.jackson.databind.node.ObjectNode) expected).remove(List.of("model", "stream"));
        ((com.fasterxml.jackson.databind.node.ObjectNode) expected).put("anthropic_version", "bedrock-2023-05-31");

        assertThat(out).isEqualTo(expected);
        BedrockInvokeBody.Members m = BedrockInvokeBody.scan(Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        assertThat(m.model()).isEqualTo("us.anthropic.claude-3-7-sonnet-20250219-v1:0");
    }

    @Test
    void streamFirstAndLast_andBetasAsAList() throws Exception {
        JsonNode first = invoke("{\"stream\":false,\"model\":\"m\",\"max_tokens\":1,\"messages\":[]}",
                List.of("a-1", "b\"2"));
        JsonNode last = invoke("{\"model\":\"m\",\"max_tokens\":1,\"messages\":[],\"stream\":true}", List.of());

        assertThat(first.has("stream")).isFalse();
        assertThat(first.path("anthropic_beta")).hasSize(2);
        assertThat(first.path("anthropic_beta").path(1).asText()).isEqualTo("b\"2");
        assertThat(last.has("stream")).isFalse();
        assertThat(last.path("max_tokens").asInt()).isEqualTo(1);
    }

    @Test
    void noModel_orAnEscapedOne_givesNoBody() {
        ByteBuf none = Unpooled.copiedBuffer("{\"messages\":[],\"max_tokens\":1}", StandardCharsets.UTF_8);
        ByteBuf escaped = Unpooled.copiedBuffer("{\"model\":\"a\\u002eb\"}", StandardCharsets.UTF_8);
        try {
            assertThat(BedrockInvokeBody.scan(none).model()).isNull();
            assertThat(BedrockInvokeBody.fromMessages(ByteBufAllocator.DEFAULT, none, BedrockInvokeBody.scan(none),
                    List.of())).isNull();
            assertThat(BedrockInvokeBody.scan(escaped).model()).isNull();
        } finally {
            none.release();
            escaped.release();
        }
    }

    @Test
    void claudeIds_goToInvokeModel_othersToConverse() {
        assertThat(BedrockModels.Operation.of("anthropic.claude-sonnet-4-5-20250929-v1:0", true))
                .isEqualTo(BedrockModels.Operation.INVOKE_STREAM);
        assertThat(BedrockModels.Operation.of("eu.anthropic.claude-3-haiku-20240307-v1:0", false))
                .isEqualTo(BedrockModels.Operation.INVOKE);
        assertThat(BedrockModels.Operation.of("meta.llama3-3-70b-instruct-v1:0", true))
                .isEqualTo(BedrockModels.Operation.CONVERSE_STREAM);
        assertThat(BedrockModels.Operation.of("amazon.nova-pro-v1:0", false))
                .isEqualTo(BedrockModels.Operation.CONVERSE);
        assertThat(BedrockModels.path("anthropic.claude-v2:1", BedrockModels.Operation.INVOKE))
                .isEqualTo("/model/anthropic.claude-v2%3A1/invoke");
    }
}
