package io.modelgateway.codecs.error;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.ApiStyle;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ErrorBodiesTest {
    @Test
    void body_openAiStyle_hasAllFourKeys() {
        GatewayError e = GatewayError.invalid("Missing required parameter: 'messages'.", "messages",
                "missing_required_parameter");
        assertThat(text(ErrorBodies.body(ByteBufAllocator.DEFAULT, ApiStyle.OPENAI, e, "req_1"))).isEqualTo(
                "{\"error\":{\"message\":\"Missing required parameter: 'messages'.\",\"type\":\"invalid_request_error\","
                        + "\"param\":\"messages\",\"code\":\"missing_required_parameter\"}}");
    }

    @Test
    void body_anthropicStyle_carriesRequestId() {
        GatewayError e = GatewayError.of(ErrorKind.AUTHENTICATION, "invalid x-api-key");
        assertThat(text(ErrorBodies.body(ByteBufAllocator.DEFAULT, ApiStyle.ANTHROPIC, e, "req_7"))).isEqualTo(
                "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"},"
                        + "\"request_id\":\"req_7\"}");
    }

    @Test
    void body_messageWithQuotesAndNewlines_isEscaped() {
        GatewayError e = GatewayError.of(ErrorKind.INTERNAL, "a \"b\"\nc");
        assertThat(text(ErrorBodies.body(ByteBufAllocator.DEFAULT, ApiStyle.OPENAI, e, null)))
                .contains("\"message\":\"a \\\"b\\\"\\nc\"").contains("\"code\":null");
    }

    @Test
    void streamEvent_perStyle_isOneSseEvent() {
        GatewayError e = GatewayError.of(ErrorKind.UPSTREAM_ERROR, "Upstream connection lost");
        assertThat(text(ErrorBodies.streamEvent(ByteBufAllocator.DEFAULT, ApiStyle.OPENAI, e))).isEqualTo(
                "data: {\"error\":{\"message\":\"Upstream connection lost\",\"type\":\"server_error\",\"param\":null,"
                        + "\"code\":\"upstream_error\"}}\n\n");
        assertThat(text(ErrorBodies.streamEvent(ByteBufAllocator.DEFAULT, ApiStyle.ANTHROPIC, e))).isEqualTo(
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                        + "\"message\":\"Upstream connection lost\"}}\n\n");
    }

    @Test
    void overloaded_statusDependsOnStyle() {
        assertThat(ErrorKind.OVERLOADED.status(ApiStyle.OPENAI)).isEqualTo(503);
        assertThat(ErrorKind.OVERLOADED.status(ApiStyle.ANTHROPIC)).isEqualTo(529);
    }

    private static String text(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }
}
