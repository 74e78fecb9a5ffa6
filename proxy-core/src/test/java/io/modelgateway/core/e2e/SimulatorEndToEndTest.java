package io.modelgateway.core.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.testing.TestGateway;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The three endpoints end to end on the in-process simulator provider (the default config's setup). */
class SimulatorEndToEndTest {
    static final ObjectMapper JSON = new ObjectMapper();
    private static TestGateway gw;

    @BeforeAll
    static void start() throws Exception {
        gw = TestGateway.start(TestGateway.simulatorConfig());
    }

    @AfterAll
    static void stop() {
        gw.close();
    }

    @Test
    void chat_nonStream_isAChatCompletion() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"sim-chat\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode b = JSON.readTree(r.body());
        assertThat(b.path("object").asText()).isEqualTo("chat.completion");
        assertThat(b.path("model").asText()).isEqualTo("sim-chat-1");
        assertThat(b.at("/choices/0/message/role").asText()).isEqualTo("assistant");
        assertThat(b.at("/choices/0/finish_reason").asText()).isEqualTo("length");
        assertThat(b.at("/usage/completion_tokens").asInt()).isEqualTo(5);
        assertThat(b.at("/usage/total_tokens").asInt())
                .isEqualTo(b.at("/usage/prompt_tokens").asInt() + b.at("/usage/completion_tokens").asInt());
    }

    @Test
    void chat_stream_withUsage_followsTheChunkGrammar() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions", "{\"model\":\"sim-chat\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream; charset=utf-8");
        List<JsonNode> chunks = chatChunks(r.body());
        assertThat(chunks.get(0).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        JsonNode usage = chunks.get(chunks.size() - 1);
        assertThat(usage.path("choices")).isEmpty();
        assertThat(usage.at("/usage/completion_tokens").asInt()).isPositive();
        assertThat(chunks).extracting(c -> c.path("id").asText()).containsOnly(chunks.get(0).path("id").asText());
    }

    @Test
    void messages_stream_eventNamesMatchTypes() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":32,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        assertThat(r.statusCode()).isEqualTo(200);
        String[] events = r.body().split("\n\n");
        assertThat(events[0]).startsWith("event: message_start\ndata: {\"type\":\"message_start\"");
        assertThat(events[events.length - 1]).isEqualTo("event: message_stop\ndata: {\"type\":\"message_stop\"}");
        for (String e : events) {
            String name = e.substring("event: ".length(), e.indexOf('\n'));
            JsonNode data = JSON.readTree(e.substring(e.indexOf("data: ") + 6));
            assertThat(data.path("type").asText()).isEqualTo(name);
        }
    }

    @Test
    void messages_nonStream_isAMessage() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/messages", "{\"model\":\"sim-chat\",\"max_tokens\":32,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
        JsonNode b = JSON.readTree(r.body());
        assertThat(b.path("type").asText()).isEqualTo("message");
        assertThat(b.at("/content/0/type").asText()).isEqualTo("text");
        assertThat(b.path("stop_reason").asText()).isIn("end_turn", "max_tokens");
    }

    @Test
    void embeddings_base64_decodesToTheFloatVector() throws Exception {
        String req = "{\"model\":\"sim-embed\",\"input\":[\"alpha\",\"beta\"],\"dimensions\":16%s}";
        JsonNode floats = JSON.readTree(gw.call("/api/v1/embeddings", req.formatted("")).body());
        JsonNode b64 = JSON.readTree(gw.call("/api/v1/embeddings", req.formatted(",\"encoding_format\":\"base64\"")).body());
        assertThat(floats.path("data")).hasSize(2);
        for (int i = 0; i < 2; i++) {
            assertThat(floats.at("/data/" + i + "/index").asInt()).isEqualTo(i);
            JsonNode vec = floats.at("/data/" + i + "/embedding");
            assertThat(vec).hasSize(16);
            ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(b64.at("/data/" + i + "/embedding").asText()))
                    .order(ByteOrder.LITTLE_ENDIAN);
            for (int d = 0; d < 16; d++) {
                assertThat(bytes.getFloat()).isEqualTo((float) vec.get(d).asDouble());
            }
        }
    }

    @Test
    void faultHeader_givesTheInjectedStatus() throws Exception {
        HttpResponse<String> r = gw.call("/api/v1/chat/completions",
                "{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}",
                "x-sim-fault", "status=503,retry_after=2");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("retry-after")).hasValue("2");
        assertThat(r.headers().firstValue("retry-after-ms")).hasValue("2000");
        assertThat(r.headers().firstValue("x-request-id")).isPresent();
    }

    static List<JsonNode> chatChunks(String body) throws Exception {
        assertThat(body).endsWith("data: [DONE]\n\n");
        List<JsonNode> out = new ArrayList<>();
        for (String e : body.split("\n\n")) {
            if (e.startsWith(":")) {
                continue; // an SSE comment (keep-alive): SDK parsers skip it
            }
            assertThat(e).startsWith("data: ");
            String data = e.substring(6);
            if (!data.equals("[DONE]")) {
                out.add(JSON.readTree(data));
            }
        }
        return out;
    }
}
