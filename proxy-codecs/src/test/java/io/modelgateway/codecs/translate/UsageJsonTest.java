package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/**
 * Each style's usage object to the five token types and back (contract 8.8), with the worked example of 8.8: 400
 * uncached, 1000 read from the cache, 50 out.
 */
class UsageJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    interface Writer {
        void write(JsonGenerator g) throws IOException;
    }

    private static JsonNode written(Writer w) throws IOException {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            w.write(g);
        }
        return JSON.readTree(out.toString());
    }

    @Test
    void contractExample_anthropicToChat_promptIncludesCacheReads() throws Exception {
        Usage u = UsageJson.messages(JSON.readTree("{\"input_tokens\":400,\"output_tokens\":50,"
                + "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":1000}"));
        JsonNode chat = written(g -> UsageJson.writeChat(g, u, false));
        assertThat(chat).isEqualTo(JSON.readTree("{\"prompt_tokens\":1400,\"completion_tokens\":50,"
                + "\"total_tokens\":1450,\"prompt_tokens_details\":{\"cached_tokens\":1000,\"cache_write_tokens\":0}}"));
    }

    @Test
    void contractExample_chatToAnthropic_inputExcludesCacheReads() throws Exception {
        Usage u = UsageJson.chat(JSON.readTree("{\"prompt_tokens\":1400,\"completion_tokens\":50,\"total_tokens\":1450,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":1000,\"cache_write_tokens\":0}}"));
        assertThat(u).isEqualTo(new Usage(400, 50, 0, 1000, 0));
        JsonNode messages = written(g -> UsageJson.writeMessages(g, u, false));
        assertThat(messages).isEqualTo(JSON.readTree("{\"input_tokens\":400,\"output_tokens\":50,"
                + "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":1000}"));
    }

    @Test
    void everyType_roundTripsThroughEachStyle() throws Exception {
        Usage u = new Usage(400, 90, 100, 1000, 64);
        assertThat(UsageJson.chat(written(g -> UsageJson.writeChat(g, u, true)))).isEqualTo(u);
        assertThat(UsageJson.messages(written(g -> UsageJson.writeMessages(g, u, true)))).isEqualTo(u);
        // The Responses API has no cache-write count: those tokens come back as uncached input.
        Usage responses = UsageJson.responses(written(g -> UsageJson.writeResponses(g, u)));
        assertThat(responses).isEqualTo(new Usage(500, 90, 0, 1000, 64));
        assertThat(responses.promptTokens()).isEqualTo(u.promptTokens());
    }

    @Test
    void responses_usage_inputIncludesCacheReads() throws Exception {
        JsonNode usage = JSON.readTree("{\"input_tokens\":1500,\"input_tokens_details\":{\"cached_tokens\":1024},"
                + "\"output_tokens\":90,\"output_tokens_details\":{\"reasoning_tokens\":64},\"total_tokens\":1590}");
        Usage u = UsageJson.responses(usage);
        assertThat(u).isEqualTo(new Usage(476, 90, 0, 1024, 64));
        assertThat(written(g -> UsageJson.writeResponses(g, u))).isEqualTo(usage);
    }

    @Test
    void reasoningReported_onlyWhenTheUpstreamSaidIt() throws Exception {
        Usage u = new Usage(1, 2, 0, 0, 0);
        assertThat(written(g -> UsageJson.writeChat(g, u, false)).has("completion_tokens_details")).isFalse();
        assertThat(written(g -> UsageJson.writeMessages(g, u, false)).has("output_tokens_details")).isFalse();
        assertThat(UsageJson.chatReportsReasoning(JSON.readTree("{\"completion_tokens_details\":{}}"))).isFalse();
        assertThat(UsageJson.chatReportsReasoning(
                JSON.readTree("{\"completion_tokens_details\":{\"reasoning_tokens\":0}}"))).isTrue();
        assertThat(UsageJson.messagesReportsReasoning(
                JSON.readTree("{\"output_tokens_details\":{\"thinking_tokens\":-1}}"))).isFalse();
    }

    @Test
    void implausibleCounts_readAsZero_andSumsSaturate() throws Exception {
        Usage u = UsageJson.chat(JSON.readTree("{\"prompt_tokens\":1e30,\"completion_tokens\":-4,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":100000001}}"));
        assertThat(u).isEqualTo(Usage.ZERO);
        Usage huge = new Usage(Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, 0);
        assertThat(huge.totalTokens()).isEqualTo(Long.MAX_VALUE);
        assertThat(new Usage(0, 10, 0, 0, 64).outputWithoutReasoning()).isZero();
    }
}
