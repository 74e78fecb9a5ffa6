package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Gemini stream translators ({@link GeminiStreamToChat}, {@link GeminiStreamToMessages}) over recorded-shape
 * Gemini {@code alt=sse} streams (resources {@code gemini/stream/}; each event's JSON is checked with Google's own
 * SDK types in proxy-core's {@code GeminiSamplesAgainstGoogleSdkTest}). What each caller gets is asserted by hand,
 * field by field, from the Gemini input — not replayed from the translators' own earlier output — and the same
 * output must come whichever byte the upstream stream is cut at.
 */
class GeminiStreamTranslatorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static byte[] in(String name) {
        return GeminiTranscripts.bytes("stream/" + name + ".gemini.sse");
    }

    private static List<JsonNode> chat(String name, boolean includeUsage) throws Exception {
        return data(GeminiTranscripts.events(GeminiTranscripts.chatStream(includeUsage, false), in(name)));
    }

    private static List<String> messagesTypes(List<String> events) {
        return events.stream().map(e -> e.substring(7, e.indexOf('\n'))).toList();
    }

    private static List<JsonNode> data(List<String> events) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String e : events) {
            int d = e.indexOf("data: ");
            String payload = e.substring(d + 6).strip();
            if (!payload.equals("[DONE]")) {
                out.add(JSON.readTree(payload));
            }
        }
        return out;
    }

    private static String chatText(List<JsonNode> chunks) {
        StringBuilder s = new StringBuilder();
        chunks.forEach(c -> s.append(c.at("/choices/0/delta/content").asText("")));
        return s.toString();
    }

    private static String messagesText(List<JsonNode> events) {
        StringBuilder s = new StringBuilder();
        events.forEach(e -> s.append(e.at("/delta/text").asText("")));
        return s.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"answer-blocked", "ended-early", "error-bare-json", "error-mid-stream", "malformed",
        "max-tokens", "parallel-calls", "partial-safety", "prompt-blocked", "signature-on-text", "text",
        "thinking-tool", "usage-after-finish"})
    void everyCutOfTheUpstreamStream_givesTheSameCallerStream(String name) {
        byte[] bytes = in(name);
        check(() -> GeminiTranscripts.chatStream(true, false), bytes);
        check(GeminiTranscripts::messagesStream, bytes);
    }

    private static void check(Supplier<StreamTranslator> t, byte[] bytes) {
        String whole = GeminiTranscripts.stream(t.get(), bytes);
        for (int cut = 1; cut < bytes.length; cut++) {
            assertThat(GeminiTranscripts.stream(t.get(), bytes, cut)).as("cut at %d", cut).isEqualTo(whole);
        }
        // and every byte on its own
        int[] all = new int[bytes.length - 1];
        for (int i = 0; i < all.length; i++) {
            all[i] = i + 1;
        }
        assertThat(GeminiTranscripts.stream(t.get(), bytes, all)).as("byte by byte").isEqualTo(whole);
    }

    @Test
    void text_chatDeltasFinishAndUsage_messagesEventsInOrder() throws Exception {
        List<String> raw = GeminiTranscripts.events(GeminiTranscripts.chatStream(true, false), in("text"));
        assertThat(raw.get(raw.size() - 1)).isEqualTo("data: [DONE]\n\n");
        List<JsonNode> chunks = data(raw);
        assertThat(chunks.get(0).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
        assertThat(chatText(chunks)).isEqualTo("Hello from Gemini, ünïcödé 🎉.");
        assertThat(chunks.stream().map(c -> c.at("/choices/0/finish_reason").asText("")).filter(s -> !s.isEmpty()))
                .containsExactly("stop");
        JsonNode usage = chunks.get(chunks.size() - 1).get("usage");
        assertThat(usage.path("prompt_tokens").asLong()).isEqualTo(9);
        assertThat(chunks.get(0).path("model").asText()).isEqualTo("gemini-2.5-flash");

        List<String> m = GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("text"));
        assertThat(messagesTypes(m)).startsWith("message_start", "content_block_start", "content_block_delta")
                .endsWith("content_block_stop", "message_delta", "message_stop");
        List<JsonNode> events = data(m);
        assertThat(messagesText(events)).isEqualTo("Hello from Gemini, ünïcödé 🎉.");
        JsonNode delta = events.get(events.size() - 2);
        assertThat(delta.at("/delta/stop_reason").asText()).isEqualTo("end_turn");
        assertThat(events.get(0).at("/message/usage/input_tokens").asLong()).isEqualTo(9);
    }

    @Test
    void chatWithoutIncludeUsage_getsNoUsageChunk() throws Exception {
        assertThat(chat("text", false)).allMatch(c -> !c.hasNonNull("usage") || c.path("choices").size() > 0);
        assertThat(chat("text", false)).noneMatch(c -> c.path("choices").isEmpty());
    }

    @Test
    void maxTokens_isLengthAndMaxTokens() throws Exception {
        assertThat(chat("max-tokens", false).stream().map(c -> c.at("/choices/0/finish_reason").asText(""))
                .filter(s -> !s.isEmpty())).containsExactly("length");
        List<JsonNode> m = data(GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("max-tokens")));
        assertThat(m.get(m.size() - 2).at("/delta/stop_reason").asText()).isEqualTo("max_tokens");
    }

    @Test
    void parallelCalls_becomeToolCallsAndToolUseBlocks_withTheirArguments() throws Exception {
        List<JsonNode> chunks = chat("parallel-calls", false);
        assertThat(chatText(chunks)).isEqualTo("Checking both cities.");
        List<JsonNode> calls = new ArrayList<>();
        StringBuilder[] args = {new StringBuilder(), new StringBuilder()};
        for (JsonNode c : chunks) {
            for (JsonNode tc : c.at("/choices/0/delta/tool_calls")) {
                int index = tc.path("index").asInt();
                if (tc.has("id")) {
                    calls.add(tc);
                }
                args[index].append(tc.at("/function/arguments").asText(""));
            }
        }
        assertThat(calls).extracting(tc -> tc.at("/function/name").asText()).containsExactly("get_weather",
                "get_weather");
        assertThat(JSON.readTree(args[0].toString())).isEqualTo(JSON.readTree("{\"city\":\"Oslo\"}"));
        assertThat(JSON.readTree(args[1].toString()))
                .isEqualTo(JSON.readTree("{\"city\":\"Bergen\",\"nested\":{\"a\":[1,2.5,true,null]}}"));
        assertThat(chunks.stream().map(c -> c.at("/choices/0/finish_reason").asText(""))
                .filter(s -> !s.isEmpty())).containsExactly("tool_calls");

        List<JsonNode> m = data(GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("parallel-calls")));
        List<JsonNode> uses = m.stream().filter(e -> e.at("/content_block/type").asText().equals("tool_use")).toList();
        assertThat(uses).hasSize(2);
        assertThat(uses.get(1).at("/content_block/id").asText()).isEqualTo("call-b"); // Gemini's own id kept
        assertThat(m.get(m.size() - 2).at("/delta/stop_reason").asText()).isEqualTo("tool_use");
    }

    @Test
    void thinkingThenTool_reasoningAndThinkingBlocks_cachedAndThoughtTokens() throws Exception {
        List<JsonNode> chunks = chat("thinking-tool", true);
        StringBuilder reasoning = new StringBuilder();
        chunks.forEach(c -> reasoning.append(c.at("/choices/0/delta/reasoning").asText("")));
        assertThat(reasoning.toString()).isEqualTo("Need the weather for Oslo. I will call the tool.");
        JsonNode usage = chunks.get(chunks.size() - 1).get("usage");
        assertThat(usage.at("/prompt_tokens_details/cached_tokens").asLong()).isEqualTo(32);
        assertThat(usage.at("/completion_tokens_details/reasoning_tokens").asLong()).isGreaterThanOrEqualTo(20);

        List<JsonNode> m = data(GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("thinking-tool")));
        assertThat(m.stream().map(e -> e.at("/content_block/type").asText("")).filter(s -> !s.isEmpty()))
                .startsWith("thinking").contains("tool_use");
        assertThat(m.get(0).at("/message/usage/cache_read_input_tokens").asLong()).isEqualTo(32);
        assertThat(m.get(0).at("/message/usage/input_tokens").asLong()).isEqualTo(8);
    }

    @Test
    void signatureOnText_signsTheThinkingBlockBeforeIt() throws Exception {
        List<JsonNode> m = data(GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("signature-on-text")));
        assertThat(m.stream().map(e -> e.at("/delta/signature").asText("")).filter(s -> !s.isEmpty()))
                .containsExactly("c2lnLXR3bw==", "c2lnLXRocmVl"); // the second, on an empty part, a block of its own
        assertThat(m.stream().map(e -> e.at("/content_block/type").asText("")).filter(s -> !s.isEmpty()))
                .containsExactly("thinking", "text", "thinking");
        assertThat(messagesText(m)).isEqualTo("Hi there!");
    }

    @Test
    void usageAfterFinish_isStillTheStreamsUsage() throws Exception {
        List<JsonNode> chunks = chat("usage-after-finish", true);
        assertThat(chatText(chunks)).isEqualTo("Done.");
        JsonNode usage = chunks.get(chunks.size() - 1).get("usage");
        assertThat(usage.path("prompt_tokens").asLong()).isEqualTo(15);
        assertThat(usage.path("completion_tokens").asLong()).isEqualTo(7); // 2 candidates + 5 thoughts
        assertThat(usage.at("/completion_tokens_details/reasoning_tokens").asLong()).isEqualTo(5);
    }

    @Test
    void partialSafety_keepsWhatWasSent_andEndsAsFiltered() throws Exception {
        List<JsonNode> chunks = chat("partial-safety", false);
        assertThat(chatText(chunks)).isEqualTo("I can tell you that");
        assertThat(chunks.stream().map(c -> c.at("/choices/0/finish_reason").asText(""))
                .filter(s -> !s.isEmpty())).containsExactly("content_filter");
        List<JsonNode> m = data(GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in("partial-safety")));
        assertThat(messagesText(m)).isEqualTo("I can tell you that");
        assertThat(m.get(m.size() - 2).at("/delta/stop_reason").asText()).isEqualTo("refusal");
    }

    @ParameterizedTest
    @ValueSource(strings = {"prompt-blocked", "answer-blocked", "error-mid-stream",
        "error-bare-json", "malformed", "ended-early"})
    void blocksErrorsAndBrokenStreams_endWithTheStylesErrorEvent(String name) throws Exception {
        List<String> c = GeminiTranscripts.events(GeminiTranscripts.chatStream(false, false), in(name));
        assertThat(c.get(c.size() - 1)).startsWith("data: {\"error\"");
        assertThat(c).noneMatch(e -> e.equals("data: [DONE]\n\n"));
        List<String> m = GeminiTranscripts.events(GeminiTranscripts.messagesStream(), in(name));
        assertThat(m.get(m.size() - 1)).startsWith("event: error\n");
        assertThat(messagesTypes(m)).doesNotContain("message_stop");
        JsonNode error = data(List.of(m.get(m.size() - 1))).get(0);
        assertThat(error.path("type").asText()).isEqualTo("error");
        assertThat(error.at("/error/message").asText()).isNotEmpty();
        if (name.contains("blocked")) {
            assertThat(error.at("/error/message").asText().toLowerCase()).containsAnyOf("safety", "block", "filter");
        }
        if (name.equals("error-mid-stream")) {
            assertThat(error.at("/error/type").asText()).isEqualTo("overloaded_error");
        }
    }
}
