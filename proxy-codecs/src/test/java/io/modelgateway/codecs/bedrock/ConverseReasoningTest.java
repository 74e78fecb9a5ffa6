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
 * Converse's reasoning and stop sequences (GD-32), expectations written by hand from Bedrock's API reference
 * ({@code reasoningContent} with {@code reasoningText.text} / {@code .signature} or {@code redactedContent};
 * {@code additionalModelResponseFieldPaths} and {@code additionalModelResponseFields}; Nova 2's
 * {@code reasoningConfig}).
 */
class ConverseReasoningTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode request(String messages, String model) throws Exception {
        ByteBuf in = Unpooled.copiedBuffer(messages, StandardCharsets.UTF_8);
        try {
            return JSON.readTree(Converse.request(in, model).body());
        } finally {
            in.release();
        }
    }

    private static JsonNode answer(String converse, List<String> stops) throws Exception {
        ByteBuf in = Unpooled.copiedBuffer(converse, StandardCharsets.UTF_8);
        ByteBuf out = Converse.answer(ByteBufAllocator.DEFAULT, in, "m", "msg_1", stops);
        try {
            return JSON.readTree(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
            in.release();
        }
    }

    private static String stream(Converse.Stream s, String type, String payload) {
        ByteBuf in = Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8);
        ByteBuf out = s.event(ByteBufAllocator.DEFAULT, type, in);
        in.release();
        if (out == null) {
            return "";
        }
        try {
            return out.toString(StandardCharsets.UTF_8);
        } finally {
            out.release();
        }
    }

    @Test
    void request_thinkingBlocksGoBackAsReasoningContent_andNova2GetsItsReasoningSwitch() throws Exception {
        String body = """
                {"model":"x","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},
                 "stop_sequences":["END"],
                 "messages":[{"role":"user","content":"q"},
                  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},
                   {"type":"redacted_thinking","data":"b3BhcXVl"},{"type":"thinking","thinking":"plain","signature":""},
                   {"type":"text","text":"a"}]},
                  {"role":"user","content":"more"}]}""";
        JsonNode nova = request(body, "us.amazon.nova-2-lite-v1:0");
        JsonNode assistant = nova.path("messages").get(1).path("content");
        assertThat(assistant.get(0)).isEqualTo(JSON.readTree(
                "{\"reasoningContent\":{\"reasoningText\":{\"text\":\"hmm\",\"signature\":\"sig1\"}}}"));
        assertThat(assistant.get(1)).isEqualTo(JSON.readTree("{\"reasoningContent\":{\"redactedContent\":\"b3BhcXVl\"}}"));
        assertThat(assistant.get(2)).isEqualTo(JSON.readTree("{\"reasoningContent\":{\"reasoningText\":{\"text\":\"plain\"}}}"));
        assertThat(nova.path("additionalModelRequestFields")).isEqualTo(JSON.readTree(
                "{\"reasoningConfig\":{\"type\":\"enabled\",\"maxReasoningEffort\":\"medium\"}}"));
        assertThat(nova.path("additionalModelResponseFieldPaths")).isEqualTo(JSON.readTree("[\"/stop_sequence\"]"));
        // A model without a documented switch gets no request field it would refuse (GD-32).
        JsonNode llama = request(body, "meta.llama3-3-70b-instruct-v1:0");
        assertThat(llama.has("additionalModelRequestFields")).isFalse();
        assertThat(llama.path("messages").get(1).path("content").get(0).has("reasoningContent")).isTrue();
        assertThat(request(body.replace("2048}", "1024}"), "amazon.nova-2-lite-v1:0")
                .path("additionalModelRequestFields").path("reasoningConfig").path("maxReasoningEffort").asText())
                .isEqualTo("low");
        assertThat(request(body.replace("2048}", "8192}"), "arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-2-lite-v1:0")
                .path("additionalModelRequestFields").path("reasoningConfig").path("maxReasoningEffort").asText())
                .isEqualTo("high");
        assertThat(request(body, "amazon.nova-pro-v1:0").has("additionalModelRequestFields")).isFalse();
        assertThat(request("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}", "x")
                .has("additionalModelResponseFieldPaths")).isFalse();
    }

    @Test
    void answer_reasoningBlocksAndTheMatchedStopSequence() throws Exception {
        String converse = """
                {"output":{"message":{"role":"assistant","content":[
                  {"reasoningContent":{"reasoningText":{"text":"let me see","signature":"sig2"}}},
                  {"reasoningContent":{"redactedContent":"c2VjcmV0"}},
                  {"text":"four"}]}},
                 "stopReason":"stop_sequence","additionalModelResponseFields":{"stop_sequence":"B"},
                 "usage":{"inputTokens":3,"outputTokens":5,"totalTokens":8}}""";
        JsonNode a = answer(converse, List.of("A", "B"));
        assertThat(a.path("content").get(0)).isEqualTo(JSON.readTree(
                "{\"type\":\"thinking\",\"thinking\":\"let me see\",\"signature\":\"sig2\"}"));
        assertThat(a.path("content").get(1)).isEqualTo(JSON.readTree("{\"type\":\"redacted_thinking\",\"data\":\"c2VjcmV0\"}"));
        assertThat(a.path("stop_reason").asText()).isEqualTo("stop_sequence");
        assertThat(a.path("stop_sequence").asText()).isEqualTo("B");
        String unnamed = converse.replace(",\"additionalModelResponseFields\":{\"stop_sequence\":\"B\"}", "");
        assertThat(answer(unnamed, List.of("only")).path("stop_sequence").asText()).isEqualTo("only");
        assertThat(answer(unnamed, List.of("A", "B")).path("stop_sequence").isNull()).isTrue();
        assertThat(answer(converse.replace("\"stop_sequence\",\"add", "\"end_turn\",\"add"), List.of("A"))
                .path("stop_sequence").isNull()).isTrue();
    }

    @Test
    void stream_reasoningDeltasSignatureRedactedAndStopSequence() {
        Converse.Stream s = new Converse.Stream("m", "msg_2", List.of("X", "Y"));
        assertThat(stream(s, "messageStart", "{\"role\":\"assistant\"}")).startsWith("event: message_start\n");
        String thinking = stream(s, "contentBlockDelta",
                "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"text\":\"step\"}}}");
        assertThat(thinking).isEqualTo("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                + "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
                + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                + "{\"type\":\"thinking_delta\",\"thinking\":\"step\"}}\n\n");
        assertThat(stream(s, "contentBlockDelta",
                "{\"contentBlockIndex\":0,\"delta\":{\"reasoningContent\":{\"signature\":\"sig3\"}}}"))
                .contains("{\"type\":\"signature_delta\",\"signature\":\"sig3\"}");
        assertThat(stream(s, "contentBlockStop", "{\"contentBlockIndex\":0}")).contains("content_block_stop");
        assertThat(stream(s, "contentBlockDelta",
                "{\"contentBlockIndex\":1,\"delta\":{\"reasoningContent\":{\"redactedContent\":\"ZGF0YQ==\"}}}"))
                .isEqualTo("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,"
                        + "\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"ZGF0YQ==\"}}\n\n");
        assertThat(stream(s, "contentBlockStop", "{\"contentBlockIndex\":1}")).contains("\"index\":1");
        assertThat(stream(s, "messageStop", "{\"stopReason\":\"stop_sequence\","
                + "\"additionalModelResponseFields\":{\"stop_sequence\":\"Y\"}}")).isEmpty();
        String end = stream(s, "metadata", "{\"usage\":{\"inputTokens\":1,\"outputTokens\":2}}");
        assertThat(end).contains("\"delta\":{\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"Y\"}")
                .contains("event: message_stop");
    }
}
