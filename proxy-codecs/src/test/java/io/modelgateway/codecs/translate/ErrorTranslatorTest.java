package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.buf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Contract 8.10 / 7.3: upstream errors re-expressed by status in the caller's style, both directions. */
class ErrorTranslatorTest {
    private static final String ANTHROPIC_OVERLOADED =
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
                    + "\"request_id\":\"req_011\"}";
    private static final String OPENAI_503 = "{\"error\":{\"message\":\"The server is overloaded or not ready yet.\","
            + "\"type\":\"server_error\",\"param\":null,\"code\":null}}";

    private static GatewayError translate(ApiStyle upstream, int status, String body, ApiStyle caller) {
        ByteBuf b = body == null ? Unpooled.EMPTY_BUFFER : buf(body);
        try {
            GatewayError e = ErrorTranslator.fromUpstream(upstream, status, b, caller);
            if (body != null) {
                assertThat(b.readerIndex()).as("body is borrowed, not read").isZero();
                assertThat(b.refCnt()).isEqualTo(1);
            }
            return e;
        } finally {
            if (body != null) {
                b.release();
            }
        }
    }

    /** The status, error type and body the caller sees (what SDKs pick their exception class from). */
    private static String seen(GatewayError e, ApiStyle caller) {
        ByteBuf body = ErrorBodies.body(ByteBufAllocator.DEFAULT, caller, e, "req_1");
        try {
            return e.kind().status(caller) + " " + body.toString(StandardCharsets.UTF_8);
        } finally {
            body.release();
        }
    }

    @Test
    void fromUpstream_anthropicOverloadedForChatCaller_is503ServerErrorOverloaded() {
        GatewayError e = translate(ApiStyle.ANTHROPIC, 529, ANTHROPIC_OVERLOADED, ApiStyle.OPENAI);
        assertThat(seen(e, ApiStyle.OPENAI)).isEqualTo("503 {\"error\":{\"message\":\"Overloaded\","
                + "\"type\":\"server_error\",\"param\":null,\"code\":\"overloaded\"}}");
    }

    @Test
    void fromUpstream_anthropicOverloadedTypeWithOtherStatus_isStillOverloaded() {
        assertThat(translate(ApiStyle.ANTHROPIC, 500, ANTHROPIC_OVERLOADED, ApiStyle.OPENAI).kind())
                .isEqualTo(ErrorKind.OVERLOADED);
    }

    @Test
    void fromUpstream_openAi503ForMessagesCaller_is529OverloadedError() {
        GatewayError e = translate(ApiStyle.OPENAI, 503, OPENAI_503, ApiStyle.ANTHROPIC);
        assertThat(seen(e, ApiStyle.ANTHROPIC)).isEqualTo("529 {\"type\":\"error\",\"error\":{\"type\":"
                + "\"overloaded_error\",\"message\":\"The server is overloaded or not ready yet.\"},"
                + "\"request_id\":\"req_1\"}");
    }

    @ParameterizedTest(name = "{0} {1} → {3}")
    @MethodSource("statuses")
    void fromUpstream_byStatus_followsTable73InBothDirections(ApiStyle upstream, int status, String body,
            ErrorKind kind, int openAiStatus, int anthropicStatus) {
        for (ApiStyle caller : new ApiStyle[] {ApiStyle.OPENAI, ApiStyle.ANTHROPIC}) { // the caller styles (GEMINI is upstream-only)
            GatewayError e = translate(upstream, status, body, caller);
            assertThat(e.kind()).as("caller %s", caller).isEqualTo(kind);
            assertThat(e.kind().status(caller)).isEqualTo(caller == ApiStyle.OPENAI ? openAiStatus : anthropicStatus);
            assertThat(e.message()).isNotBlank();
        }
    }

    static Stream<Arguments> statuses() {
        String anthropic400 = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}";
        String openai400 = "{\"error\":{\"message\":\"bad\",\"type\":\"invalid_request_error\",\"param\":null,"
                + "\"code\":null}}";
        return Stream.of(
                arguments(ApiStyle.ANTHROPIC, 400, anthropic400, ErrorKind.INVALID_REQUEST, 400, 400),
                arguments(ApiStyle.OPENAI, 400, openai400, ErrorKind.INVALID_REQUEST, 400, 400),
                arguments(ApiStyle.OPENAI, 422, openai400, ErrorKind.INVALID_REQUEST, 400, 400),
                arguments(ApiStyle.ANTHROPIC, 401, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                        + "\"message\":\"invalid x-api-key\"}}", ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 401, openai400, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.ANTHROPIC, 402, null, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.ANTHROPIC, 403, "{\"type\":\"error\",\"error\":{\"type\":\"permission_error\","
                        + "\"message\":\"no\"}}", ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 403, null, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.ANTHROPIC, 404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\","
                        + "\"message\":\"model: x\"}}", ErrorKind.NOT_FOUND, 404, 404),
                arguments(ApiStyle.OPENAI, 404, null, ErrorKind.NOT_FOUND, 404, 404),
                arguments(ApiStyle.OPENAI, 405, null, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 408, null, ErrorKind.UPSTREAM_TIMEOUT, 504, 504),
                arguments(ApiStyle.ANTHROPIC, 413, "{\"type\":\"error\",\"error\":{\"type\":\"request_too_large\","
                        + "\"message\":\"Request exceeds the maximum allowed number of bytes.\"}}",
                        ErrorKind.REQUEST_TOO_LARGE, 413, 413),
                arguments(ApiStyle.OPENAI, 413, null, ErrorKind.REQUEST_TOO_LARGE, 413, 413),
                arguments(ApiStyle.ANTHROPIC, 429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
                        + "\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
                        ErrorKind.RATE_LIMIT, 429, 429),
                arguments(ApiStyle.OPENAI, 429, "{\"error\":{\"message\":\"Rate limit reached for requests\","
                        + "\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
                        ErrorKind.RATE_LIMIT, 429, 429),
                arguments(ApiStyle.OPENAI, 429, "{\"error\":{\"message\":\"You exceeded your current quota\","
                        + "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}",
                        ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.ANTHROPIC, 500, "{\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                        + "\"message\":\"Internal server error\"}}", ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 500, null, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 502, "<html><body>Bad gateway</body></html>", ErrorKind.UPSTREAM_ERROR,
                        502, 502),
                arguments(ApiStyle.OPENAI, 503, OPENAI_503, ErrorKind.OVERLOADED, 503, 529),
                arguments(ApiStyle.ANTHROPIC, 503, null, ErrorKind.OVERLOADED, 503, 529),
                arguments(ApiStyle.ANTHROPIC, 504, "{\"type\":\"error\",\"error\":{\"type\":\"timeout_error\","
                        + "\"message\":\"Request timed out\"}}", ErrorKind.UPSTREAM_TIMEOUT, 504, 504),
                arguments(ApiStyle.OPENAI, 504, null, ErrorKind.UPSTREAM_TIMEOUT, 504, 504),
                arguments(ApiStyle.OPENAI, 524, null, ErrorKind.UPSTREAM_TIMEOUT, 504, 504),
                arguments(ApiStyle.ANTHROPIC, 529, ANTHROPIC_OVERLOADED, ErrorKind.OVERLOADED, 503, 529),
                arguments(ApiStyle.OPENAI, 599, null, ErrorKind.UPSTREAM_ERROR, 502, 502),
                arguments(ApiStyle.OPENAI, 302, null, ErrorKind.UPSTREAM_ERROR, 502, 502));
    }

    @ParameterizedTest
    @EnumSource(ApiStyle.class)
    void fromUpstream_upstream401_isNever401ForTheCaller(ApiStyle caller) {
        GatewayError e = translate(ApiStyle.OPENAI, 401, "{\"error\":{\"message\":\"Incorrect API key provided: "
                + "sk-proj-********************************************abcd. You can find your API key at "
                + "https://platform.openai.com/account/api-keys.\",\"type\":\"invalid_request_error\",\"param\":null,"
                + "\"code\":\"invalid_api_key\"}}", caller);
        assertThat(e.kind().status(caller)).isEqualTo(502);
        assertThat(e.code()).isEqualTo("upstream_error");
        assertThat(e.message()).startsWith("The upstream provider rejected the gateway's credentials (HTTP 401).")
                .doesNotContain("sk-proj").doesNotContain("abcd").contains("[redacted]");
        assertThat(seen(e, ApiStyle.ANTHROPIC)).contains("\"type\":\"api_error\"");
    }

    @Test
    void fromUpstream_keysInAnyMessage_areRedacted() {
        GatewayError e = translate(ApiStyle.ANTHROPIC, 400, "{\"type\":\"error\",\"error\":{\"type\":"
                + "\"invalid_request_error\",\"message\":\"key sk-ant-api03-AbCdEf_123-xyz and Bearer abcdefghijkl.mnop "
                + "and x-api-key: supersecretvalue and AIzaSyA1234567890abcdefghijk are bad\"}}", ApiStyle.OPENAI);
        assertThat(e.message()).isEqualTo("key [redacted] and Bearer [redacted] and x-api-key: [redacted] and "
                + "[redacted] are bad");
    }

    @Test
    void fromUpstream_internalModelId_isReplacedByTheCallersModel() {
        ByteBuf b = buf("{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\","
                + "\"message\":\"model: claude-internal-2026\"}}");
        try {
            GatewayError e = ErrorTranslator.fromUpstream(ApiStyle.ANTHROPIC, 404, b, ApiStyle.OPENAI,
                    "claude-internal-2026", "acme/claude");
            assertThat(e.message()).isEqualTo("model: acme/claude");
        } finally {
            b.release();
        }
    }

    @Test
    void fromUpstream_openAiDetailsForChatCaller_keepParamAndCode() {
        GatewayError e = translate(ApiStyle.OPENAI, 400, "{\"error\":{\"message\":\"This model's maximum context "
                + "length is 128000 tokens.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                + "\"code\":\"context_length_exceeded\"}}", ApiStyle.OPENAI);
        assertThat(e.param()).isEqualTo("messages");
        assertThat(e.code()).isEqualTo("context_length_exceeded");
    }

    @Test
    void fromUpstream_anthropicPromptTooLongForChatCaller_isContextLengthExceeded() {
        GatewayError e = translate(ApiStyle.ANTHROPIC, 400, "{\"type\":\"error\",\"error\":{\"type\":"
                + "\"invalid_request_error\",\"message\":\"prompt is too long: 205351 tokens > 200000 maximum\"}}",
                ApiStyle.OPENAI);
        assertThat(seen(e, ApiStyle.OPENAI)).isEqualTo("400 {\"error\":{\"message\":\"prompt is too long: 205351 "
                + "tokens > 200000 maximum\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                + "\"code\":\"context_length_exceeded\"}}");
    }

    @Test
    void fromUpstream_messagesCaller_getsNoOpenAiDetails() {
        GatewayError e = translate(ApiStyle.OPENAI, 400, "{\"error\":{\"message\":\"bad\",\"type\":"
                + "\"invalid_request_error\",\"param\":\"messages[1]\",\"code\":\"invalid_value\"}}", ApiStyle.ANTHROPIC);
        assertThat(e.param()).isNull();
        assertThat(seen(e, ApiStyle.ANTHROPIC)).isEqualTo("400 {\"type\":\"error\",\"error\":{\"type\":"
                + "\"invalid_request_error\",\"message\":\"bad\"},\"request_id\":\"req_1\"}");
    }

    @ParameterizedTest
    @MethodSource("looseBodies")
    void fromUpstream_looseOpenAiCompatibleBodies_keepTheirMessage(String body) {
        assertThat(translate(ApiStyle.OPENAI, 400, body, ApiStyle.ANTHROPIC).message()).isEqualTo("nope");
    }

    static Stream<String> looseBodies() {
        return Stream.of("{\"error\":\"nope\"}", "{\"message\":\"nope\"}", "{\"detail\":\"nope\"}",
                " \n{\"error\":{\"code\":400,\"message\":\"nope\",\"metadata\":{}}}");
    }

    @ParameterizedTest
    @MethodSource("unreadableBodies")
    void fromUpstream_emptyOrNonJsonBody_givesAGenericMessage(String body) {
        GatewayError e = translate(ApiStyle.ANTHROPIC, 500, body, ApiStyle.OPENAI);
        assertThat(e.message()).isEqualTo("The upstream provider returned an error (HTTP 500).");
        assertThat(translate(ApiStyle.OPENAI, 503, body, ApiStyle.ANTHROPIC).message())
                .isEqualTo("The upstream provider is overloaded (HTTP 503). Please retry later.");
    }

    static Stream<String> unreadableBodies() {
        return Stream.of("", "   ", "<html>oops</html>", "{\"error\":", "{\"error\":{\"message\":42}}", "[1,2]",
                "{\"error\":{\"message\":\"   \"}}");
    }

    @Test
    void fromUpstream_nullBody_givesAGenericMessage() {
        assertThat(ErrorTranslator.fromUpstream(ApiStyle.OPENAI, 429, null, ApiStyle.OPENAI).message())
                .isEqualTo("The upstream provider's rate limit was reached. Please retry later.");
    }

    @Test
    void fromUpstream_hugeMessage_isCut() {
        String longMessage = "x".repeat(5000);
        GatewayError e = translate(ApiStyle.ANTHROPIC, 400, "{\"type\":\"error\",\"error\":{\"type\":"
                + "\"invalid_request_error\",\"message\":\"" + longMessage + "\"}}", ApiStyle.OPENAI);
        assertThat(e.message()).hasSize(ErrorTranslator.MAX_MESSAGE_CHARS + 1).endsWith("…");
    }
}
