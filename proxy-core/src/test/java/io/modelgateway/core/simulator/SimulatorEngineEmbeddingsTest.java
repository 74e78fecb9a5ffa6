package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.answer;
import static io.modelgateway.core.simulator.SimTestSupport.body;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Endpoint;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimulatorEngineEmbeddingsTest {

    private static final Endpoint EMBEDDINGS = Endpoint.EMBEDDINGS;

    private static JsonNode embed(String fields) {
        SimulatedResponse r = answer(EMBEDDINGS, "{\"model\":\"sim-embed\"" + fields + "}");
        assertThat(r.status()).as(r.body() == null ? "" : new String(r.body())).isEqualTo(200);
        return body(r);
    }

    private static float[] floats(JsonNode embedding) {
        float[] out = new float[embedding.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) embedding.get(i).doubleValue();
        }
        return out;
    }

    private static float[] decode(String base64) {
        ByteBuffer b = ByteBuffer.wrap(Base64.getDecoder().decode(base64)).order(ByteOrder.LITTLE_ENDIAN);
        float[] out = new float[b.remaining() / 4];
        for (int i = 0; i < out.length; i++) {
            out[i] = b.getFloat();
        }
        return out;
    }

    private static double norm(float[] v) {
        double s = 0;
        for (float f : v) {
            s += (double) f * f;
        }
        return Math.sqrt(s);
    }

    @Test
    void answer_batch_oneUnitVectorPerInputInOrder() {
        JsonNode b = embed(",\"input\":[\"alpha\",\"beta\",\"alpha\"]");

        assertThat(b.path("object").asText()).isEqualTo("list");
        assertThat(b.path("model").asText()).isEqualTo("sim-embed");
        JsonNode data = b.path("data");
        assertThat(data).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(data.get(i).path("object").asText()).isEqualTo("embedding");
            assertThat(data.get(i).path("index").asInt()).isEqualTo(i);
            float[] v = floats(data.get(i).path("embedding"));
            assertThat(v).hasSize(1536);
            assertThat(norm(v)).isCloseTo(1.0, within(1e-5));
        }
        assertThat(data.get(2).path("embedding")).as("same text, same vector").isEqualTo(data.get(0).path("embedding"));
        assertThat(data.get(1).path("embedding")).isNotEqualTo(data.get(0).path("embedding"));
        // "alpha" 5 bytes -> 2, "beta" 4 -> 1, "alpha" -> 2
        assertThat(b.path("usage").path("prompt_tokens").asInt()).isEqualTo(5);
        assertThat(b.path("usage").path("total_tokens").asInt()).isEqualTo(5);
    }

    @Test
    void answer_sameTextInOtherRequest_sameVector() {
        JsonNode a = embed(",\"input\":\"café au lait\"").path("data").get(0).path("embedding");
        JsonNode b = embed(",\"input\":[\"x\",\"café au lait\"]").path("data").get(1).path("embedding");

        assertThat(b).isEqualTo(a);
    }

    @Test
    void answer_dimensions_truncatedAndRenormalisedNativeVector() {
        float[] full = floats(embed(",\"input\":\"hello\"").path("data").get(0).path("embedding"));
        float[] short256 = floats(embed(",\"input\":\"hello\",\"dimensions\":256").path("data").get(0).path("embedding"));

        assertThat(short256).hasSize(256);
        assertThat(norm(short256)).isCloseTo(1.0, within(1e-5));
        double prefixNorm = 0;
        for (int i = 0; i < 256; i++) {
            prefixNorm += (double) full[i] * full[i];
        }
        prefixNorm = Math.sqrt(prefixNorm);
        for (int i = 0; i < 256; i++) {
            assertThat((double) short256[i]).isCloseTo(full[i] / prefixNorm, within(1e-6));
        }
    }

    @Test
    void answer_base64_decodesToTheFloatValues() {
        JsonNode asFloat = embed(",\"input\":[\"one\",\"two\"],\"dimensions\":64");
        JsonNode asBase64 = embed(",\"input\":[\"one\",\"two\"],\"dimensions\":64,\"encoding_format\":\"base64\"");

        for (int i = 0; i < 2; i++) {
            JsonNode encoded = asBase64.path("data").get(i).path("embedding");
            assertThat(encoded.isTextual()).isTrue();
            assertThat(encoded.asText()).matches("[A-Za-z0-9+/]+=*");
            assertThat(encoded.asText().length() % 4).isZero();
            assertThat(decode(encoded.asText())).containsExactly(floats(asFloat.path("data").get(i).path("embedding")));
        }
        assertThat(asBase64.path("usage")).isEqualTo(asFloat.path("usage"));
    }

    @Test
    void answer_tokenArrays_acceptedAndCountedPerToken() {
        JsonNode single = embed(",\"input\":[15339,1917]");
        JsonNode batch = embed(",\"input\":[[15339,1917],[0]]");

        assertThat(single.path("data")).hasSize(1);
        assertThat(single.path("usage").path("prompt_tokens").asInt()).isEqualTo(2);
        assertThat(batch.path("data")).hasSize(2);
        assertThat(batch.path("data").get(0).path("embedding")).isEqualTo(single.path("data").get(0).path("embedding"));
        assertThat(batch.path("usage").path("prompt_tokens").asInt()).isEqualTo(3);
    }

    @Test
    void answer_invalidRequests_400WithParam() {
        Map<String, String> cases = Map.of(
                "{\"input\":\"x\"}", "model",
                "{\"model\":\"e\"}", "input",
                "{\"model\":\"e\",\"input\":\"\"}", "input",
                "{\"model\":\"e\",\"input\":[]}", "input",
                "{\"model\":\"e\",\"input\":[\"a\",1]}", "input[1]",
                "{\"model\":\"e\",\"input\":[[1],[]]}", "input[1]",
                "{\"model\":\"e\",\"input\":\"x\",\"dimensions\":0}", "dimensions",
                "{\"model\":\"e\",\"input\":\"x\",\"dimensions\":1537}", "dimensions",
                "{\"model\":\"e\",\"input\":\"x\",\"encoding_format\":\"int8\"}", "encoding_format");
        cases.forEach((request, param) -> {
            SimulatedResponse r = answer(EMBEDDINGS, request);
            assertThat(r.status()).as(request).isEqualTo(400);
            assertThat(body(r).path("error").path("param").asText()).as(request).isEqualTo(param);
            assertThat(body(r).path("error").path("type").asText()).isEqualTo("invalid_request_error");
        });
    }
}
