package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.resource;
import static io.modelgateway.codecs.translate.ResponsesHarness.DIR;
import static io.modelgateway.codecs.translate.ResponsesHarness.answerTranslator;
import static io.modelgateway.codecs.translate.ResponsesHarness.assertGolden;
import static io.modelgateway.codecs.translate.ResponsesHarness.assertWellFormed;
import static io.modelgateway.codecs.translate.ResponsesHarness.normaliseIds;
import static io.modelgateway.codecs.translate.ResponsesHarness.run;
import static io.modelgateway.codecs.translate.ResponsesHarness.text;
import static io.modelgateway.codecs.translate.ResponsesHarness.translate;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.translate.ResponsesHarness.Upstream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden transcripts of contract 12.3–12.5 for both directions: a Responses request → the chat request and the
 * Anthropic request; a chat answer and an Anthropic answer → the response object; a chat stream and an Anthropic
 * stream → the typed events. The upstream answers and streams are the same inputs the chat ⇄ messages goldens use
 * (a2c: chat upstreams, c2a: Anthropic upstreams), so every edge case there (reasoning, refusals, parallel tools,
 * errors, early ends, malformed events, framing) is covered here too.
 */
class ResponsesTranslationGoldenTest {
    static final List<String> REQUESTS = List.of("basic", "items-tools", "structured", "reasoning-replay");
    static final List<String> CHAT_ANSWERS = List.of("empty-no-usage", "reasoning-content", "reasoning-details",
            "refusal", "text", "tool-calls");
    static final List<String> ANTHROPIC_ANSWERS = List.of("json-response-with-tool", "json-response",
            "max-tokens-empty", "parallel-tool-calls", "redacted-thinking-cache-write", "refusal",
            "server-tools-stop-sequence", "thinking-text-tool");
    static final List<String> CHAT_STREAMS = List.of("closed-tool-index", "eof-before-finish", "error-chunk",
            "error-overloaded", "finish-then-eof", "framing", "length", "malformed", "parallel-tools",
            "reasoning-signed", "reasoning-unsigned", "refusal", "text", "worked-example");
    static final List<String> ANTHROPIC_STREAMS = List.of("ended-early", "error-api", "error-overloaded",
            "error-rate-limit", "framing", "json-response", "malformed", "parallel-tools-cache", "redacted-thinking",
            "server-tools-refusal", "thinking-text-tool");

    static Stream<Arguments> requests() {
        return REQUESTS.stream().flatMap(n -> Stream.of(Arguments.of(n, Upstream.CHAT),
                Arguments.of(n, Upstream.ANTHROPIC)));
    }

    /** The upstream bytes of a stream golden, from the chat ⇄ messages goldens. */
    static byte[] upstreamStream(Upstream upstream, String name) {
        return upstream == Upstream.CHAT ? resource("a2c/stream/" + name + ".chat.sse")
                : resource("c2a/stream/" + name + ".anthropic.sse");
    }

    static String streamGolden(Upstream upstream, String name) {
        return "stream/" + name + (upstream == Upstream.CHAT ? ".from-chat" : ".from-anthropic") + ".responses.sse";
    }

    static Stream<Arguments> streams() {
        return Stream.concat(CHAT_STREAMS.stream().map(n -> Arguments.of(n, Upstream.CHAT)),
                ANTHROPIC_STREAMS.stream().map(n -> Arguments.of(n, Upstream.ANTHROPIC)));
    }

    static Stream<Arguments> answers() {
        return Stream.concat(CHAT_ANSWERS.stream().map(n -> Arguments.of(n, Upstream.CHAT)),
                ANTHROPIC_ANSWERS.stream().map(n -> Arguments.of(n, Upstream.ANTHROPIC)));
    }

    @ParameterizedTest(name = "{0} → {1}")
    @MethodSource("requests")
    void request_translated_matchesGolden(String name, Upstream upstream) throws Exception {
        TranslatedRequest t = translate(upstream, resource(DIR + "request/" + name + ".responses.json"),
                ByteBufAllocator.DEFAULT);
        try {
            JsonNode out = ResponsesRequestToChat.JSON.readTree(t.body().toString(StandardCharsets.UTF_8));
            String pretty = ResponsesRequestToChat.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out) + "\n";
            assertGolden(pretty, "request/" + name + (upstream == Upstream.CHAT ? ".chat.json" : ".messages.json"));
        } finally {
            t.body().release();
        }
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("answers")
    void response_translated_matchesGolden(String name, Upstream upstream) throws Exception {
        byte[] upstreamBody = upstream == Upstream.CHAT ? resource("a2c/response/" + name + ".chat.json")
                : resource("c2a/response/" + name + ".anthropic.json");
        ResponseTranslator translator = answerTranslator(upstream, name);
        ByteBuf out = translator.translate(ByteBufAllocator.DEFAULT, Unpooled.wrappedBuffer(upstreamBody));
        try {
            JsonNode json = ResponsesRequestToChat.JSON.readTree(out.toString(StandardCharsets.UTF_8));
            assertThat(json.path("object").asText()).isEqualTo("response");
            assertThat(json.path("output").isArray()).isTrue();
            String pretty = ResponsesRequestToChat.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json);
            assertGolden(normaliseIds(pretty) + "\n", "response/" + name
                    + (upstream == Upstream.CHAT ? ".from-chat" : ".from-anthropic") + ".responses.json");
        } finally {
            out.release();
        }
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("streams")
    void stream_translated_matchesGoldenAndIsWellFormed(String name, Upstream upstream) {
        StreamTranslator t = answerTranslator(upstream, name).newStream(ByteBufAllocator.DEFAULT);
        List<String> events = run(t, List.of(upstreamStream(upstream, name)), true, ByteBufAllocator.DEFAULT);
        assertWellFormed(events);
        assertThat(t.finished()).isTrue();
        assertGolden(text(events), streamGolden(upstream, name));
    }

    @Test
    void request_previousResponseId_isRefusedWith400() {
        byte[] body = "{\"model\":\"m\",\"input\":\"Hi\",\"previous_response_id\":\"resp_1\"}"
                .getBytes(StandardCharsets.UTF_8);
        for (Upstream upstream : Upstream.values()) {
            assertThatThrownBy(() -> translate(upstream, body, ByteBufAllocator.DEFAULT))
                    .isInstanceOfSatisfying(TranslationException.class, e -> {
                        assertThat(e.error().param()).isEqualTo("previous_response_id");
                        assertThat(e.error().kind().status(io.modelgateway.codecs.ApiStyle.OPENAI)).isEqualTo(400);
                    });
        }
    }

    @Test
    void request_hostedTool_isRefusedWith400() {
        byte[] body = "{\"model\":\"m\",\"input\":\"Hi\",\"tools\":[{\"type\":\"web_search\"}]}"
                .getBytes(StandardCharsets.UTF_8);
        for (Upstream upstream : Upstream.values()) {
            assertThatThrownBy(() -> translate(upstream, body, ByteBufAllocator.DEFAULT))
                    .isInstanceOfSatisfying(TranslationException.class,
                            e -> assertThat(e.error().param()).startsWith("tools[0]"));
        }
    }
}
