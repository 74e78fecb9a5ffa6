package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.answer;
import static io.modelgateway.core.simulator.SimTestSupport.body;
import static io.modelgateway.core.simulator.SimTestSupport.events;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.simulator.SimTestSupport.Sse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The simulator's Responses API (contract 12.1): deterministic answers, the typed stream numbered from 0 with the same
 * output as the non-stream answer, tool calls per {@code tool_choice}, usage by type, its 400s and its stream error.
 * The shapes themselves are checked by the official openai SDK (OfficialSdkCompatibilityTest).
 */
class SimulatorEngineResponsesTest {
    private static final Endpoint RESPONSES = Endpoint.RESPONSES;
    private static final String TOOLS = ",\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}]";

    private static String request(String extra) {
        return "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}]" + extra + "}";
    }

    private static JsonNode response(String extra, String... headers) {
        SimulatedResponse r = answer(RESPONSES, request(extra), headers);
        assertThat(r.status()).as(r.body() == null ? "" : new String(r.body())).isEqualTo(200);
        return body(r);
    }

    @Test
    void answer_deterministic_streamCarriesTheSameOutputNumberedFromZero() {
        JsonNode a = response(",\"max_output_tokens\":200");
        JsonNode b = response(",\"max_output_tokens\":200");
        assertThat(a.path("output").get(0).path("content").get(0).path("text").asText())
                .isNotEmpty()
                .isEqualTo(b.path("output").get(0).path("content").get(0).path("text").asText());
        assertThat(a.path("status").asText()).isEqualTo("completed");

        List<Sse> events = events(answer(RESPONSES, request(",\"max_output_tokens\":200,\"stream\":true")));
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < events.size(); i++) {
            JsonNode e = events.get(i).json();
            assertThat(e.path("type").asText()).isEqualTo(events.get(i).event());
            assertThat(e.path("sequence_number").asInt()).isEqualTo(i);
            if (events.get(i).event().equals("response.output_text.delta")) {
                text.append(e.path("delta").asText());
            }
        }
        assertThat(events.get(0).event()).isEqualTo("response.created");
        assertThat(events.get(events.size() - 1).event()).isEqualTo("response.completed");
        JsonNode last = events.get(events.size() - 1).json().path("response");
        assertThat(text.toString()).isEqualTo(a.path("output").get(0).path("content").get(0).path("text").asText());
        assertThat(last.path("usage")).isEqualTo(a.path("usage"));
    }

    @Test
    void usage_cachedAndReasoningTokensInTheirFields() {
        JsonNode u = response("", "x-sim-cached-tokens", "50", "x-sim-reasoning-tokens", "3", "x-sim-output-tokens",
                "10").path("usage");
        JsonNode plain = response("", "x-sim-output-tokens", "10").path("usage");
        assertThat(u.path("input_tokens").asLong()).isEqualTo(plain.path("input_tokens").asLong() + 50);
        assertThat(u.at("/input_tokens_details/cached_tokens").asLong()).isEqualTo(50);
        assertThat(u.path("output_tokens").asLong()).isEqualTo(10);
        assertThat(u.at("/output_tokens_details/reasoning_tokens").asLong()).isEqualTo(3);
        assertThat(u.path("total_tokens").asLong()).isEqualTo(u.path("input_tokens").asLong() + 10);
    }

    @Test
    void tools_requiredCallsThem_afterAnOutputAutoAnswers() {
        JsonNode first = response(TOOLS + ",\"tool_choice\":\"required\"");
        JsonNode call = first.path("output").get(0);
        assertThat(call.path("type").asText()).isEqualTo("function_call");
        assertThat(call.path("name").asText()).isEqualTo("get_weather");
        assertThat(call.path("arguments").asText()).contains("\"city\"");
        String followUp = "{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":\"Weather?\"},"
                + call + ",{\"type\":\"function_call_output\",\"call_id\":\"" + call.path("call_id").asText()
                + "\",\"output\":\"sunny\"}]" + TOOLS + "}";
        JsonNode second = body(answer(RESPONSES, followUp));
        assertThat(second.path("output").get(0).path("type").asText()).isEqualTo("message");
    }

    @Test
    void maxOutputTokensReached_isIncomplete() {
        JsonNode r = response(",\"max_output_tokens\":16", "x-sim-output-tokens", "40");
        assertThat(r.path("status").asText()).isEqualTo("incomplete");
        assertThat(r.at("/incomplete_details/reason").asText()).isEqualTo("max_output_tokens");
        assertThat(r.at("/usage/output_tokens").asLong()).isEqualTo(16);
    }

    @Test
    void badRequests_are400NamingTheField() {
        String[][] cases = {
            {"{\"model\":\"m\"}", "input"},
            {"{\"model\":\"m\",\"input\":\"x\",\"previous_response_id\":\"resp_1\"}", "previous_response_id"},
            {"{\"model\":\"m\",\"input\":[{\"type\":\"function_call_output\",\"output\":\"x\"}]}", "input[0].call_id"},
            {"{\"model\":\"m\",\"input\":\"x\",\"text\":{\"format\":{\"type\":\"xml\"}}}", "text.format.type"},
            {"{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"function\"}]}", "tools[0].name"},
        };
        for (String[] c : cases) {
            SimulatedResponse r = answer(RESPONSES, c[0]);
            assertThat(r.status()).as(c[0]).isEqualTo(400);
            assertThat(body(r).at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
        }
    }

    @Test
    void errorAfter_endsWithTheResponsesErrorEventNumberedInSequence() {
        List<Sse> events = events(answer(RESPONSES, request(",\"stream\":true"), "x-sim-fault", "error_after=2"));
        Sse last = events.get(events.size() - 1);
        assertThat(last.event()).isEqualTo("error");
        assertThat(last.json().path("type").asText()).isEqualTo("error");
        assertThat(last.json().path("code").asText()).isEqualTo("server_error");
        assertThat(last.json().path("sequence_number").asInt()).isEqualTo(events.size() - 1);
    }

    @Test
    void inputTokens_countsTheInputLikeTheAnswerDoes() {
        JsonNode count = body(answer(Endpoint.RESPONSES_INPUT_TOKENS, request("")));
        assertThat(count.path("object").asText()).isEqualTo("response.input_tokens");
        assertThat(count.path("input_tokens").asLong()).isEqualTo(response("").at("/usage/input_tokens").asLong());
    }
}
