package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Contract 8.5 golden files: an Anthropic {@code /messages} request in, the exact chat request the
 * OpenAI-style upstream gets out (compared as JSON trees; the output must also be compact).
 */
class MessagesRequestToChatTest {
    static final String DIR = "a2c/request/";
    static final String UPSTREAM_MODEL = "gpt-large-2026-08-01";

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource({
            // caller request,     expected upstream request,       max_completion_tokens, reasoning_details
            "basic,                basic,                           true,  false",
            "system-roles,         system-roles,                    false, false",
            "images,               images,                          false, false",
            "tools,                tools,                           true,  false",
            "tool-results,         tool-results,                    false, false",
            "long-tool-names,      long-tool-names,                 false, false",
            "thinking-replayed,    thinking-replayed.accepted,      false, true",
            "thinking-replayed,    thinking-replayed.dropped,       true,  false",
            "structured-stream,    structured-stream,               true,  false",
            "merged-turns,         merged-turns,                    false, false",
    })
    void translate_goldenRequest_givesExactUpstreamRequest(String in, String expected, boolean maxCompletion,
            boolean reasoningDetails) throws Exception {
        byte[] body = resource(DIR + in + ".messages.json");
        JsonNode out = translate(body, new MessagesRequestToChatOptions(UPSTREAM_MODEL, maxCompletion, reasoningDetails));
        assertThat(out).isEqualTo(tree(resource(DIR + expected + ".chat.json")));
    }

    @Test
    void translate_streamRequest_alwaysAsksForUsage() throws Exception {
        ByteBuf in = utf8("{\"max_tokens\":5,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        TranslatedRequest r = MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, in, options());
        try {
            assertThat(r.stream()).isTrue();
            assertThat(r.body().toString(StandardCharsets.UTF_8)).isEqualTo("{\"model\":\"" + UPSTREAM_MODEL
                    + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5,"
                    + "\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
            assertThat(in.readerIndex()).isZero();
            assertThat(in.refCnt()).isEqualTo(1);
        } finally {
            r.body().release();
            in.release();
        }
    }

    @Test
    void translate_noStream_sendsNeitherStreamNorN() throws Exception {
        JsonNode out = translate("{\"max_tokens\":5,\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(out.has("stream")).isFalse();
        assertThat(out.has("stream_options")).isFalse();
        assertThat(out.has("n")).isFalse();
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"type\":\"auto\"}                                    | \"auto\"                                          | ",
            "{\"type\":\"any\"}                                     | \"required\"                                      | ",
            "{\"type\":\"none\"}                                    | \"none\"                                          | ",
            "{\"type\":\"tool\",\"name\":\"f\"}                     | {\"type\":\"function\",\"function\":{\"name\":\"f\"}} | ",
            "{\"type\":\"auto\",\"disable_parallel_tool_use\":true} | \"auto\"                                          | false",
            "{\"type\":\"any\",\"disable_parallel_tool_use\":true}  | \"required\"                                      | false",
            "{\"type\":\"tool\",\"name\":\"f\",\"disable_parallel_tool_use\":true} | {\"type\":\"function\",\"function\":{\"name\":\"f\"}} | false",
            "{\"type\":\"auto\",\"disable_parallel_tool_use\":false} | \"auto\"                                         | ",
    })
    void translate_toolChoice_mapsPerContract(String choice, String expected, String parallel) throws Exception {
        JsonNode out = translate("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}],\"tool_choice\":" + choice + "}");
        assertThat(out.get("tool_choice")).isEqualTo(tree(expected));
        if (parallel == null) {
            assertThat(out.has("parallel_tool_calls")).isFalse();
        } else {
            assertThat(out.get("parallel_tool_calls").booleanValue()).isFalse();
        }
    }

    @Test
    void translate_toolChoiceWithoutTools_isDroppedWithParallelFlag() throws Exception {
        JsonNode out = translate("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"tool_choice\":{\"type\":\"none\",\"disable_parallel_tool_use\":true},\"tools\":[]}");
        assertThat(out.has("tool_choice")).isFalse();
        assertThat(out.has("parallel_tool_calls")).isFalse();
        assertThat(out.has("tools")).isFalse();
    }

    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource(delimiter = '|', value = {
            "{\"type\":\"enabled\",\"budget_tokens\":1024}       |                      | low",
            "{\"type\":\"enabled\",\"budget_tokens\":2047}       |                      | low",
            "{\"type\":\"enabled\",\"budget_tokens\":2048}       |                      | medium",
            "{\"type\":\"enabled\",\"budget_tokens\":4095}       |                      | medium",
            "{\"type\":\"enabled\",\"budget_tokens\":4096}       |                      | high",
            "{\"type\":\"enabled\",\"budget_tokens\":32000}      |                      | high",
            "{\"type\":\"adaptive\"}                             |                      | medium",
            "{\"type\":\"adaptive\"}                             | {\"effort\":\"low\"}    | low",
            "{\"type\":\"adaptive\"}                             | {\"effort\":\"medium\"} | medium",
            "{\"type\":\"adaptive\"}                             | {\"effort\":\"high\"}   | high",
            "{\"type\":\"adaptive\"}                             | {\"effort\":\"xhigh\"}  | high",
            "{\"type\":\"adaptive\",\"display\":\"omitted\"}     | {\"effort\":\"max\"}    | high",
            "{\"type\":\"disabled\"}                             | {\"effort\":\"max\"}    | ",
    })
    void translate_thinking_becomesReasoningEffort(String thinking, String outputConfig, String effort)
            throws Exception {
        JsonNode out = translate("{\"max_tokens\":64000,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"thinking\":" + thinking + (outputConfig == null ? "" : ",\"output_config\":" + outputConfig) + "}");
        if (effort == null) {
            assertThat(out.has("reasoning_effort")).isFalse();
        } else {
            assertThat(out.get("reasoning_effort").textValue()).isEqualTo(effort);
        }
    }

    @Test
    void translate_emptySystem_sendsNoSystemMessage() throws Exception {
        JsonNode out = translate("{\"max_tokens\":5,\"system\":[],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(out.get("messages")).isEqualTo(tree("[{\"role\":\"user\",\"content\":\"hi\"}]"));
    }

    @Test
    void translate_emptyStopSequences_sendsNoStop() throws Exception {
        JsonNode out = translate("{\"max_tokens\":5,\"stop_sequences\":[],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(out.has("stop")).isFalse();
    }

    // ---- 400s ------------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "document block | {\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"read\"},{\"type\":\"document\",\"source\":{\"type\":\"text\",\"media_type\":\"text/plain\",\"data\":\"x\"}}]}]} | messages[0].content[1] | unsupported_value",
            "document in a tool result | {\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":[{\"type\":\"document\",\"source\":{}}]}]}]} | messages[0].content[0].content[0] | unsupported_value",
            "container | {\"max_tokens\":5,\"container\":\"c1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} | container | unsupported_parameter",
            "mcp_servers | {\"max_tokens\":5,\"mcp_servers\":[{\"type\":\"url\",\"url\":\"https://x\",\"name\":\"x\"}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} | mcp_servers | unsupported_parameter",
            "context_management | {\"max_tokens\":5,\"context_management\":{\"edits\":[]},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} | context_management | unsupported_parameter",
            "server tool | {\"max_tokens\":5,\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}},{\"type\":\"web_search_20250305\",\"name\":\"web_search\",\"max_uses\":5}],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} | tools[1] | unsupported_value",
            "file image source | {\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":\"file_1\"}}]}]} | messages[0].content[0].source | unsupported_value",
            "unknown role | {\"max_tokens\":5,\"messages\":[{\"role\":\"tool\",\"content\":\"hi\"}]} | messages[0].role | invalid_value",
            "empty user content | {\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[]}]} | messages[0].content | invalid_value",
            "missing messages | {\"max_tokens\":5} | messages | missing_required_parameter",
            "tool_use input not an object | {\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":[1]}]}]} | messages[0].content[0].input | invalid_type",
            "text not a string | {\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":5}]}]} | messages[0].content[0].text | invalid_type",
            "not JSON | {\"max_tokens\":5,\"messages\":[ | | invalid_json",
    })
    void translate_untranslatable_isInvalidRequestWithFieldPath(String what, String body, String param, String code) {
        TranslationException e = catchThrowableOfType(TranslationException.class,
                () -> MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, utf8Released(body), options()));
        GatewayError error = e.error();
        assertThat(error.kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(error.kind().anthropicType()).isEqualTo("invalid_request_error");
        assertThat(error.code()).isEqualTo(code);
        if (param != null) {
            assertThat(error.param()).startsWith(param);
            assertThat(error.message()).startsWith(param);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\",\"text\":\"b\"}]}]} | messages[0].content[0].text",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"city\":\"Paris\",\"city\":\"Rome\"}}]}]} | messages[0].content[0].input.city",
            "{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"metadata\":{\"user_id\":\"a\",\"user_id\":\"b\"}} | metadata.user_id",
    })
    void translate_duplicateKeyAnywhere_isInvalidRequestNamingIt(String body, String path) {
        // The tree keeps the last of two equal keys; an upstream reading the caller's bytes might take the first.
        TranslationException e = catchThrowableOfType(TranslationException.class,
                () -> MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, utf8Released(body), options()));
        assertThat(e.error().kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(e.error().code()).isEqualTo("duplicate_key");
        assertThat(e.error().param()).isEqualTo(path);
        assertThat(e.error().message()).contains("'" + path + "'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"[]", "\"text\"", ""})
    void translate_bodyNotAnObject_isInvalidRequest(String body) {
        TranslationException e = catchThrowableOfType(TranslationException.class,
                () -> MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, utf8Released(body), options()));
        assertThat(e.error().kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
    }

    // ---- helpers ---------------------------------------------------------------------------------------------

    private static MessagesRequestToChatOptions options() {
        return new MessagesRequestToChatOptions(UPSTREAM_MODEL, false, false);
    }

    private static JsonNode translate(String body) throws Exception {
        return translate(body.getBytes(StandardCharsets.UTF_8), options());
    }

    /** Translates and checks the output is compact JSON; every buffer is released. */
    static JsonNode translate(byte[] body, MessagesRequestToChatOptions options) throws Exception {
        ByteBuf in = ByteBufAllocator.DEFAULT.directBuffer(body.length).writeBytes(body);
        try {
            TranslatedRequest r = MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, in, options);
            try {
                String text = r.body().toString(StandardCharsets.UTF_8);
                JsonNode tree = tree(text);
                assertThat(text).as("compact JSON").isEqualTo(new String(MessagesRequestToChat.MAPPER.writeValueAsBytes(tree), StandardCharsets.UTF_8));
                assertThat(r.response()).isInstanceOf(ChatResponseToMessages.class);
                return tree;
            } finally {
                r.body().release();
            }
        } finally {
            assertThat(in.readerIndex()).isZero();
            in.release();
        }
    }

    /** A heap buffer that needs no release (the translator only borrows it). */
    private static ByteBuf utf8Released(String s) {
        return Unpooled.wrappedBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    private static ByteBuf utf8(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    static JsonNode tree(String json) {
        try {
            return MessagesRequestToChat.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode tree(byte[] json) {
        return tree(new String(json, StandardCharsets.UTF_8));
    }

    static byte[] resource(String name) {
        try (InputStream in = MessagesRequestToChatTest.class.getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
