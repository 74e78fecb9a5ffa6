package io.modelgateway.core.simulator;

import static io.modelgateway.core.simulator.SimTestSupport.answer;
import static io.modelgateway.core.simulator.SimTestSupport.body;
import static io.modelgateway.core.simulator.SimTestSupport.chatRequest;
import static io.modelgateway.core.simulator.SimTestSupport.events;
import static io.modelgateway.core.simulator.SimTestSupport.messagesRequest;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.FaultSpec;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimTestSupport.Sse;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatorEngineFaultTest {

    private static final String CHAT_STREAM = chatRequest(",\"stream\":true");
    private static final String MESSAGES_STREAM = messagesRequest(",\"stream\":true");

    private static long chatContentEvents(List<Sse> events) {
        return events.stream().filter(e -> !e.data().equals("[DONE]"))
                .filter(e -> e.json().path("choices").path(0).path("delta").has("content")
                        && !e.json().path("choices").path(0).path("delta").has("role"))
                .count();
    }

    @Test
    void answer_status429WithRetryAfter_rateLimitErrorInBothStyles() {
        SimulatedResponse chat = answer(Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "status=429,retry_after=2");
        SimulatedResponse messages = answer(Endpoint.MESSAGES, messagesRequest(""), "x-sim-fault", "status=429;retry_after=2");

        assertThat(chat.status()).isEqualTo(429);
        assertThat(chat.headers()).containsEntry("retry-after", "2");
        JsonNode openAi = body(chat).path("error");
        assertThat(openAi.path("type").asText()).isEqualTo("requests");
        assertThat(openAi.path("code").asText()).isEqualTo("rate_limit_exceeded");
        assertThat(openAi.has("param")).isTrue();
        assertThat(messages.status()).isEqualTo(429);
        assertThat(messages.headers()).containsEntry("retry-after", "2");
        assertThat(body(messages).path("error").path("type").asText()).isEqualTo("rate_limit_error");
    }

    @Test
    void answer_overloadStatuses_styleSpecificBodies() {
        SimulatedResponse chat503 = answer(Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "status=503");
        SimulatedResponse messages529 = answer(Endpoint.MESSAGES, messagesRequest(""), "x-sim-fault", "status=529");
        SimulatedResponse embed500 = answer(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":\"x\"}", "x-sim-fault", "status=500");

        assertThat(chat503.status()).isEqualTo(503);
        assertThat(body(chat503).path("error").path("type").asText()).isEqualTo("server_error");
        assertThat(body(chat503).path("error").path("code").asText()).isEqualTo("overloaded");
        assertThat(chat503.headers()).doesNotContainKey("retry-after");
        assertThat(messages529.status()).isEqualTo(529);
        assertThat(body(messages529).path("error").path("type").asText()).isEqualTo("overloaded_error");
        assertThat(embed500.status()).isEqualTo(500);
        assertThat(body(embed500).path("error").path("type").asText()).isEqualTo("server_error");
    }

    @Test
    void answer_statusFaultFromDefaults_appliesUnlessHeaderOverrides() {
        SimulatorEngine engine = new SimulatorEngine(new SimulatorSettings(0, 0, null, "status=503"));

        assertThat(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest("")).status()).isEqualTo(503);
        assertThat(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "").status()).isEqualTo(200);
    }

    @Test
    void answer_delayAndTtft_addUpBeforeNonStreamHeaders() {
        SimulatorEngine engine = new SimulatorEngine(new SimulatorSettings(40, 0, null, null));

        assertThat(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest("")).headerDelayMs()).isEqualTo(40);
        assertThat(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "delay_ms=10").headerDelayMs())
                .isEqualTo(50);
        assertThat(answer(engine, Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":\"x\"}", "x-sim-ttft-ms", "7")
                .headerDelayMs()).isEqualTo(7);
        assertThat(answer(engine, Endpoint.MESSAGES, messagesRequest(""), "x-sim-fault", "status=529,delay_ms=25")
                .headerDelayMs()).isEqualTo(25);
    }

    @Test
    void answer_streamPace_ttftFirstThenOneIntervalPerContentEvent() {
        SimulatedResponse r = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM,
                "x-sim-ttft-ms", "120", "x-sim-tps", "50", "x-sim-output-tokens", "5", "x-sim-fault", "delay_ms=3");

        List<SimEvent> events = r.events();
        assertThat(r.headerDelayMs()).isEqualTo(3);
        assertThat(events).hasSize(1 + 5 + 1 + 1); // role, 5 words, finish, [DONE]
        assertThat(events.get(0).delayNanos()).isEqualTo(120_000_000L);
        for (int i = 1; i <= 5; i++) {
            assertThat(events.get(i).delayNanos()).isEqualTo(20_000_000L);
        }
        assertThat(events.get(6).delayNanos()).isZero();
        assertThat(events.get(7).delayNanos()).isZero();
    }

    @Test
    void answer_streamWithoutTps_noDelays() {
        SimulatedResponse r = answer(Endpoint.MESSAGES, MESSAGES_STREAM);

        assertThat(r.events()).allSatisfy(e -> assertThat(e.delayNanos()).isZero());
    }

    @Test
    void answer_errorAfterInChatStream_errorEventAfterKContentChunksAndNoDone() {
        SimulatedResponse r = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "error_after=3");

        List<Sse> events = events(r);
        assertThat(r.cutAtEnd()).isFalse();
        assertThat(events).noneMatch(e -> e.data().equals("[DONE]"));
        Sse last = events.get(events.size() - 1);
        assertThat(last.event()).isNull();
        assertThat(last.json().path("error").path("type").asText()).isEqualTo("server_error");
        assertThat(last.json().path("error").has("code")).isTrue();
        assertThat(chatContentEvents(events.subList(0, events.size() - 1))).isEqualTo(3);
        assertThat(events).hasSize(1 + 3 + 1);
    }

    @Test
    void answer_errorAfterInMessagesStream_errorEventAndNoMessageStop() {
        SimulatedResponse r = answer(Endpoint.MESSAGES, MESSAGES_STREAM, "x-sim-fault", "error_after=2");

        List<Sse> events = events(r);
        assertThat(events).noneMatch(e -> "message_stop".equals(e.event()));
        assertThat(events.stream().filter(e -> "content_block_delta".equals(e.event())).count()).isEqualTo(2);
        Sse last = events.get(events.size() - 1);
        assertThat(last.event()).isEqualTo("error");
        assertThat(last.json().path("type").asText()).isEqualTo("error");
        assertThat(last.json().path("error").path("type").asText()).isEqualTo("api_error");
    }

    @Test
    void answer_cutAfter_keepsKContentEventsThenCuts() {
        SimulatedResponse chat = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "cut_after=4");
        SimulatedResponse messages = answer(Endpoint.MESSAGES, MESSAGES_STREAM, "x-sim-fault", "cut_after=0");

        assertThat(chat.cutAtEnd()).isTrue();
        List<Sse> chatEvents = events(chat);
        assertThat(chatContentEvents(chatEvents)).isEqualTo(4);
        assertThat(chatEvents).hasSize(5).noneMatch(e -> e.data().equals("[DONE]"));
        assertThat(messages.cutAtEnd()).isTrue();
        assertThat(events(messages)).extracting(Sse::event)
                .containsExactly("message_start", "ping", "content_block_start");
    }

    @Test
    void answer_faultCountBeyondAnswer_stillFiresAfterLastContent() {
        SimulatedResponse r = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM,
                "x-sim-fault", "cut_after=1000", "x-sim-output-tokens", "6");

        assertThat(r.cutAtEnd()).isTrue();
        assertThat(chatContentEvents(events(r))).isEqualTo(6);
        assertThat(r.events()).hasSize(7);
    }

    @Test
    void answer_errorAndCutBoth_smallerCountWins() {
        SimulatedResponse error = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "error_after=2,cut_after=5");
        SimulatedResponse cut = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "error_after=5,cut_after=2");

        assertThat(error.cutAtEnd()).isFalse();
        assertThat(events(error).get(events(error).size() - 1).json().has("error")).isTrue();
        assertThat(cut.cutAtEnd()).isTrue();
        assertThat(chatContentEvents(events(cut))).isEqualTo(2);
    }

    @Test
    void answer_streamFaultsOnNonStreamRequests_500OrCutWithoutBody() {
        SimulatedResponse error = answer(Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "error_after=3");
        SimulatedResponse cut = answer(Endpoint.MESSAGES, messagesRequest(""), "x-sim-fault", "cut_after=3",
                "x-sim-ttft-ms", "5");

        assertThat(error.status()).isEqualTo(500);
        assertThat(body(error).path("error").path("type").asText()).isEqualTo("server_error");
        assertThat(cut.status()).isEqualTo(200);
        assertThat(cut.body()).isNull();
        assertThat(cut.events()).isEmpty();
        assertThat(cut.cutAtEnd()).isTrue();
        assertThat(cut.headerDelayMs()).isEqualTo(5);
    }

    @Test
    void answer_invalidOverrideHeaders_400InStyle() {
        String[][] bad = {
            {"x-sim-ttft-ms", "-1"}, {"x-sim-ttft-ms", "soon"}, {"x-sim-tps", "fast"}, {"x-sim-tps", "NaN"},
            {"x-sim-output-tokens", "0"}, {"x-sim-fault", "status=200"}, {"x-sim-fault", "explode=1"},
        };
        for (String[] h : bad) {
            SimulatedResponse chat = answer(Endpoint.CHAT_COMPLETIONS, chatRequest(""), h[0], h[1]);
            SimulatedResponse messages = answer(Endpoint.MESSAGES, messagesRequest(""), h[0], h[1]);

            assertThat(chat.status()).as(h[0] + ": " + h[1]).isEqualTo(400);
            assertThat(body(chat).path("error").path("param").asText()).isEqualTo(h[0]);
            assertThat(messages.status()).isEqualTo(400);
            assertThat(body(messages).path("error").path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(body(messages).path("error").path("message").asText()).contains(h[0]);
        }
    }

    @Test
    void answer_outputTokensDefaultAndHeader_headerWins() {
        SimulatorEngine engine = new SimulatorEngine(new SimulatorSettings(0, 0, 7, null));

        assertThat(body(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest(""))).path("usage")
                .path("completion_tokens").asInt()).isEqualTo(7);
        assertThat(body(answer(engine, Endpoint.CHAT_COMPLETIONS, chatRequest(""), "X-Sim-Output-Tokens", "9"))
                .path("usage").path("completion_tokens").asInt()).isEqualTo(9);
    }

    @Test
    void answer_stallAfter_keepsKContentEventsThenStallsWithoutTerminator() {
        SimulatedResponse chat = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "stall_after=3");
        SimulatedResponse messages = answer(Endpoint.MESSAGES, MESSAGES_STREAM, "x-sim-fault", "stall_after=2");

        assertThat(chat.stallAtEnd()).isTrue();
        assertThat(chat.cutAtEnd()).isFalse();
        List<Sse> chatEvents = events(chat);
        assertThat(chatContentEvents(chatEvents)).isEqualTo(3);
        assertThat(chatEvents).hasSize(4).noneMatch(e -> e.data().equals("[DONE]") || e.json().has("error"));
        assertThat(messages.stallAtEnd()).isTrue();
        assertThat(events(messages)).noneMatch(e -> "message_stop".equals(e.event()) || "error".equals(e.event()));
        assertThat(events(messages).stream().filter(e -> "content_block_delta".equals(e.event())).count()).isEqualTo(2);
    }

    @Test
    void answer_stallAfterOnNonStream_headThenNothing_andSmallerCountWins() {
        SimulatedResponse stalled = answer(Endpoint.CHAT_COMPLETIONS, chatRequest(""), "x-sim-fault", "stall_after=1");
        SimulatedResponse cutFirst = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "stall_after=3,cut_after=2");

        assertThat(stalled.status()).isEqualTo(200);
        assertThat(stalled.contentType()).isEqualTo(SimulatedResponse.JSON);
        assertThat(stalled.body()).isNull();
        assertThat(stalled.events()).isEmpty();
        assertThat(stalled.stallAtEnd()).isTrue();
        assertThat(cutFirst.cutAtEnd()).isTrue();
        assertThat(cutFirst.stallAtEnd()).isFalse();
        assertThat(chatContentEvents(events(cutFirst))).isEqualTo(2);
    }

    @Test
    void answer_malformedNonStream_a200WithTheFirstHalfOfTheBody() {
        SimulatedResponse good = answer(Endpoint.MESSAGES, messagesRequest(""));
        SimulatedResponse bad = answer(Endpoint.MESSAGES, messagesRequest(""), "x-sim-fault", "malformed=1");

        assertThat(bad.status()).isEqualTo(200);
        assertThat(bad.contentType()).isEqualTo(SimulatedResponse.JSON);
        assertThat(bad.body()).hasSize(good.body().length / 2);
        // Ids are random: compare what follows the id.
        String g = new String(good.body(), java.nio.charset.StandardCharsets.ISO_8859_1);
        String b = new String(bad.body(), java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThat(b).startsWith("{\"id\":\"msg_");
        assertThat(g.substring(g.indexOf(",\"type\""))).startsWith(b.substring(b.indexOf(",\"type\"")));
    }

    @Test
    void answer_malformedStream_theKthContentEventIsNotJson_theRestUnchanged() {
        SimulatedResponse good = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM);
        SimulatedResponse bad = answer(Endpoint.CHAT_COMPLETIONS, CHAT_STREAM, "x-sim-fault", "malformed=2");
        SimulatedResponse first = answer(Endpoint.MESSAGES, MESSAGES_STREAM, "x-sim-fault", "malformed=0");

        assertThat(bad.events()).hasSameSizeAs(good.events());
        assertThat(bad.cutAtEnd()).isFalse();
        for (int i = 0; i < good.events().size(); i++) {
            String g = new String(good.events().get(i).bytes(), java.nio.charset.StandardCharsets.UTF_8);
            String b = new String(bad.events().get(i).bytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (i == 2) { // role chunk, 1st content chunk, then the 2nd content chunk
                assertThat(b).startsWith("data: {").endsWith("\n\n").isNotEqualTo(g);
                assertThat(b).hasSize(6 + (g.length() - 8) / 2 + 2); // "data: " + half the JSON + the blank line
                assertThat(b.trim()).doesNotEndWith("}");
            } else {
                assertThat(b).hasSameSizeAs(g).endsWith(g.substring(Math.max(0, g.indexOf(",\"object\""))));
            }
        }
        String msgStart = new String(first.events().get(0).bytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(msgStart).startsWith("event: message_start\ndata: {").endsWith("\n\n");
        assertThat(msgStart.trim()).doesNotEndWith("}");
        assertThat(new String(first.events().get(first.events().size() - 1).bytes(),
                java.nio.charset.StandardCharsets.UTF_8)).startsWith("event: message_stop");
    }

    @Test
    void parse_unknownKey_listsEveryKey() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FaultSpec.parse("explode=1"))
                .hasMessageContaining("stall_after").hasMessageContaining("malformed");
        assertThat(FaultSpec.parse("stall_after=2,malformed=0")).isEqualTo(new FaultSpec(0, 0, -1, -1, -1, 2, 0));
        assertThat(FaultSpec.parse("malformed=1").isNone()).isFalse();
    }
}
