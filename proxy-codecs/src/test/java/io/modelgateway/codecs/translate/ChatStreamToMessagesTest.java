package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.assertWellFormed;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.newTranslator;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.run;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.text;
import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.resource;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Contract 8.9 golden transcripts: an OpenAI-style upstream stream in ({@code .chat.sse}), the exact
 * Anthropic events the caller sees out ({@code .messages.sse}, generated ids as {@code msg_ID} / {@code toolu_ID}).
 */
class ChatStreamToMessagesTest {
    static final String DIR = "a2c/stream/";
    static final List<String> TRANSCRIPTS = List.of("worked-example", "text", "parallel-tools", "reasoning-signed",
            "reasoning-unsigned", "refusal", "length", "error-chunk", "error-overloaded", "eof-before-finish",
            "closed-tool-index", "finish-then-eof", "malformed", "framing", "azure-content-filter",
            "azure-async-filter");

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"worked-example", "text", "parallel-tools", "reasoning-signed", "reasoning-unsigned",
            "refusal", "length", "error-chunk", "error-overloaded", "eof-before-finish", "closed-tool-index",
            "finish-then-eof", "malformed", "framing", "azure-content-filter", "azure-async-filter"})
    void onEvent_goldenTranscript_givesExactCallerEvents(String name) {
        List<String> events = run(resource(DIR + name + ".chat.sse"));
        assertWellFormed(events);
        assertThat(text(events)).isEqualTo(new String(resource(DIR + name + ".messages.sse"), StandardCharsets.UTF_8));
    }

    @Test
    void transcripts_listedOnce_matchTheParameterList() {
        assertThat(TRANSCRIPTS).doesNotHaveDuplicates().hasSize(16);
    }

    @Test
    void usage_afterStream_isTheUpstreamUsageIn88Terms() {
        StreamTranslator t = newTranslator();
        run(t, List.of(resource(DIR + "reasoning-signed.chat.sse")), true);
        assertThat(t.finished()).isTrue();
        assertThat(t.usage()).isEqualTo(new Usage(400, 96, 12, 1024, 40));
    }

    @Test
    void usage_implausibleCounts_readAsAbsent_andTheStreamEndsNormally() {
        String text = new String(resource(DIR + "text.chat.sse"), StandardCharsets.UTF_8)
                .replace("\"prompt_tokens\":1436", "\"prompt_tokens\":99999999999999999999999")
                .replace("\"completion_tokens\":96", "\"completion_tokens\":9.6e1")
                .replace("\"cached_tokens\":1024", "\"cached_tokens\":-1");
        StreamTranslator t = newTranslator();

        List<String> events = run(t, List.of(text.getBytes(StandardCharsets.UTF_8)), true);

        assertWellFormed(events);
        assertThat(events).noneMatch(e -> e.startsWith("event: error"));
        assertThat(events.get(events.size() - 1)).startsWith("event: message_stop");
        assertThat(t.usage()).isEqualTo(new Usage(0, 96, 0, 0, 0));
    }

    /**
     * 8.9 step 1: message_start carries the gateway's count of the input (a client such as LangChain's ChatAnthropic
     * reads the input count there only); message_delta carries the upstream's exact counts.
     */
    @Test
    void messageStart_carriesTheGatewaysInputCount_messageDeltaTheUpstreams() {
        StreamTranslator t = newTranslator();
        assertThat(t.wantsInputEstimate()).isTrue();
        t.inputEstimate(19);

        List<String> events = run(t, List.of(resource(DIR + "text.chat.sse")), true);

        assertWellFormed(events);
        assertThat(events.get(0)).startsWith("event: message_start").contains(
                "\"usage\":{\"input_tokens\":19,\"output_tokens\":0,\"cache_creation_input_tokens\":0,"
                        + "\"cache_read_input_tokens\":0}");
        String delta = events.stream().filter(e -> e.startsWith("event: message_delta")).findFirst().orElseThrow();
        assertThat(delta).contains("\"input_tokens\":412,");
    }

    @Test
    void usage_beforeTheUsageChunk_isZero() {
        StreamTranslator t = newTranslator();
        assertThat(t.usage()).isEqualTo(Usage.ZERO);
        assertThat(t.finished()).isFalse();
    }

    @Test
    void onEnd_connectionBrokeAfterFinish_isAnErrorNotMessageStop() {
        String all = new String(resource(DIR + "finish-then-eof.chat.sse"), StandardCharsets.UTF_8);
        StreamTranslator t = newTranslator();
        List<String> events = run(t, List.of(all.getBytes(StandardCharsets.UTF_8)), false);
        assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).isEqualTo("event: error\ndata: {\"type\":\"error\",\"error\":"
                + "{\"type\":\"api_error\",\"message\":\"Upstream connection lost\"}}\n\n");
        assertThat(t.finished()).isTrue();
    }

    @Test
    void onEnd_nothingReceived_isAnErrorWithoutMessageStart() {
        List<String> events = run(newTranslator(), List.of(), true);
        assertThat(events).containsExactly("event: error\ndata: {\"type\":\"error\",\"error\":"
                + "{\"type\":\"api_error\",\"message\":\"Upstream stream ended early\"}}\n\n");
    }

    @Test
    void onEvent_doneBeforeFinishReason_isAnError() {
        String s = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"
                + "data: [DONE]\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).contains("\"type\":\"api_error\"");
        assertThat(String.join("", events)).doesNotContain("message_stop");
    }

    @Test
    void onEvent_afterFinished_emitsNothingMore() {
        String s = new String(resource(DIR + "worked-example.chat.sse"), StandardCharsets.UTF_8)
                + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"late\"}}]}\n\n: ping\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).startsWith("event: message_stop\n");
    }

    @Test
    void onEvent_errorEventField_isAnError() {
        String s = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n"
                + "event: error\ndata: {\"message\":\"Service overloaded, try later\",\"code\":\"overloaded\"}\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).isEqualTo("event: error\ndata: {\"type\":\"error\",\"error\":"
                + "{\"type\":\"overloaded_error\",\"message\":\"Service overloaded, try later\"}}\n\n");
    }

    @Test
    void onEvent_errorFirst_isOnlyTheErrorEvent() {
        String s = "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertThat(events).containsExactly("event: error\ndata: {\"type\":\"error\",\"error\":"
                + "{\"type\":\"api_error\",\"message\":\"Rate limit reached\"}}\n\n");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"data: [1,2]\n\n", "data: \"text\"\n\n", "data: {\"a\":1} {\"b\":2}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"\\ud83d\"}}]}}\n\n", "data: nul\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999999999999999}]}}]}\n\n"})
    void onEvent_notAChunk_isOneErrorEvent(String s) {
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(events).hasSize(1);
        assertThat(events.get(0)).startsWith("event: error\n");
    }

    @Test
    void onEvent_invalidUtf8_isAnErrorNotAnException() {
        byte[] head = "data: {\"choices\":[{\"delta\":{\"content\":\"".getBytes(StandardCharsets.US_ASCII);
        byte[] tail = "\"}}]}\n\n".getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[head.length + 2 + tail.length];
        System.arraycopy(head, 0, all, 0, head.length);
        all[head.length] = (byte) 0xC3;
        all[head.length + 1] = (byte) 0x28; // not a continuation byte
        System.arraycopy(tail, 0, all, head.length + 2, tail.length);
        List<String> events = run(all);
        assertWellFormed(events);
        assertThat(events.get(events.size() - 1)).startsWith("event: error\n");
    }

    @Test
    void onEvent_loneSurrogateInText_isPassedOnEscaped() {
        String s = "data: {\"choices\":[{\"delta\":{\"content\":\"a\\ud83d b \\ud83c\\udf89\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(String.join("", events)).contains("\"text_delta\",\"text\":\"a\\uD83D b \uD83C\uDF89\"");
    }

    @Test
    void onEvent_toolCallsWithoutIndex_continueTheOpenCall() {
        String s = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c2\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        String all = String.join("", events);
        assertThat(all).contains("\"id\":\"c1\",\"name\":\"f\"", "\"partial_json\":\"{\\\"a\\\"\"",
                "\"partial_json\":\":1}\"", "\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"c2\"",
                "\"stop_reason\":\"tool_use\"");
    }

    @Test
    void onEvent_signatureWithoutText_startsAThinkingBlock() {
        String s = "data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"signature\":\"s1\"}]}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{\"reasoning\":\"more\"}}]}\n\n"
                + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        String all = String.join("", events);
        assertThat(all).contains(
                "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}",
                "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s1\"}}",
                "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}",
                "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"more\"}}");
    }

    @Test
    void onEvent_keepAliveBeforeFirstChunk_isNotAPing() {
        String s = ": keep-alive\n\n" + new String(resource(DIR + "worked-example.chat.sse"), StandardCharsets.UTF_8);
        List<String> events = run(s.getBytes(StandardCharsets.UTF_8));
        assertWellFormed(events);
        assertThat(events.get(0)).startsWith("event: message_start\n");
        assertThat(String.join("", events)).doesNotContain("ping");
    }
}
