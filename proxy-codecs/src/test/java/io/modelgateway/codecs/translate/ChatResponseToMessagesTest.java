package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.resource;
import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.error.ErrorKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Contract 8.6–8.8 golden files: a chat completion from the OpenAI-style upstream in, the Anthropic
 * message the caller sees out. Generated ids are compared as {@code msg_ID} / {@code toolu_ID}.
 */
class ChatResponseToMessagesTest {
    private static final String DIR = "a2c/response/";
    private static final Pattern MSG_ID = Pattern.compile("msg_[0-9A-Za-z]{24}(?![0-9A-Za-z_-])");
    private static final Pattern TOOLU_ID = Pattern.compile("toolu_[0-9A-Za-z]{24}(?![0-9A-Za-z_-])");

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"text", "tool-calls", "reasoning-details", "reasoning-content", "refusal",
            "empty-no-usage", "azure-content-filter"})
    void translate_goldenResponse_givesExactMessage(String name) throws Exception {
        String out = translate(responseTranslator(), resource(DIR + name + ".chat.json"));
        assertThat(out).as("compact").isEqualTo(new String(MessagesRequestToChat.MAPPER.writeValueAsBytes(tree(out)), StandardCharsets.UTF_8));
        assertThat(tree(normaliseIds(out))).isEqualTo(tree(resource(DIR + name + ".messages.json")));
    }

    @Test
    void translate_newMessageIdEachTime() throws Exception {
        ResponseTranslator t = responseTranslator();
        String a = translate(t, resource(DIR + "text.chat.json"));
        String b = translate(t, resource(DIR + "text.chat.json"));
        assertThat(tree(a).get("id").textValue()).matches("msg_[0-9A-Za-z]{24}")
                .isNotEqualTo(tree(b).get("id").textValue());
    }

    @Test
    void usage_afterTranslate_isTheLastUsageWithReasoningTokens() throws Exception {
        ResponseTranslator t = responseTranslator();
        assertThat(t.usage()).isEqualTo(Usage.ZERO);
        translate(t, resource(DIR + "reasoning-details.chat.json"));
        assertThat(t.usage()).isEqualTo(new Usage(50, 150, 100, 50, 120));
        assertThat(t.usage().promptTokens()).isEqualTo(200);
        translate(t, resource(DIR + "text.chat.json"));
        assertThat(t.usage()).isEqualTo(new Usage(412, 96, 0, 1024, 0));
    }

    @Test
    void translate_implausibleCounts_readAsAbsent_andTheAnswerIsStillTranslated() throws Exception {
        ResponseTranslator t = responseTranslator();
        String out = translate(t, ("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},"
                + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":99999999999999999999999,"
                + "\"completion_tokens\":12.0,\"prompt_tokens_details\":{\"cached_tokens\":-1},"
                + "\"completion_tokens_details\":{\"reasoning_tokens\":1e18}}}").getBytes(StandardCharsets.UTF_8));

        JsonNode usage = tree(out).path("usage");
        assertThat(usage.path("input_tokens").asLong()).isZero();
        assertThat(usage.path("output_tokens").asLong()).isEqualTo(12);
        assertThat(usage.path("cache_read_input_tokens").asLong()).isZero();
        assertThat(t.usage()).isEqualTo(new Usage(0, 12, 0, 0, 0));
    }

    @Test
    void translate_signatureOnlyDetailWithPlainReasoning_signsThePlainReasoning() throws Exception {
        String out = translate(responseTranslator(), ("{\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"
                + "\"role\":\"assistant\",\"content\":\"A\",\"reasoning\":\"Because.\",\"reasoning_details\":["
                + "{\"type\":\"reasoning.text\",\"signature\":\"sig\",\"index\":0},"
                + "{\"type\":\"reasoning.encrypted\",\"data\":\"enc\",\"index\":1}]},\"finish_reason\":\"stop\"}]}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(tree(out).get("content")).isEqualTo(tree("[{\"type\":\"thinking\",\"thinking\":\"Because.\","
                + "\"signature\":\"sig\"},{\"type\":\"redacted_thinking\",\"data\":\"enc\"},"
                + "{\"type\":\"text\",\"text\":\"A\"}]"));
    }

    @Test
    void translate_summaryDetails_becomeThinkingBlocks() throws Exception {
        String out = translate(responseTranslator(), ("{\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"
                + "\"role\":\"assistant\",\"content\":\"A\",\"reasoning\":\"S1S2\",\"reasoning_details\":["
                + "{\"type\":\"reasoning.summary\",\"summary\":\"S1\"},{\"type\":\"reasoning.summary\",\"summary\":\"S2\"}]},"
                + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8));
        assertThat(tree(out).get("content")).isEqualTo(tree("[{\"type\":\"thinking\",\"thinking\":\"S1\",\"signature\":\"\"},"
                + "{\"type\":\"thinking\",\"thinking\":\"S2\",\"signature\":\"\"},{\"type\":\"text\",\"text\":\"A\"}]"));
    }

    @Test
    void translate_modelMissing_usesTheUpstreamModelName() throws Exception {
        String out = translate(responseTranslator(), ("{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                + "\"content\":\"x\"},\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8));
        assertThat(tree(out).get("model").textValue()).isEqualTo(MessagesRequestToChatTest.UPSTREAM_MODEL);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"error\"}]}",
            "{\"id\":\"x\",\"choices\":[]}",
            "{\"id\":\"x\"}",
            "{\"choices\":[{\"message\":{\"content\":\"Hi\"",
            "<html>Bad gateway</html>",
            "",
            "[1,2]",
            "{\"error\":{\"message\":\"Provider returned error\",\"code\":502}}",
    })
    void translate_unusableUpstreamBody_isUpstreamError(String body) {
        TranslationException e = catchThrowableOfType(TranslationException.class,
                () -> translate(responseTranslator(), body.getBytes(StandardCharsets.UTF_8)));
        assertThat(e.error().kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR);
        assertThat(e.error().kind().anthropicType()).isEqualTo("api_error");
    }

    @Test
    void translate_overloadErrorIn200Body_isOverloaded() {
        byte[] body = "{\"error\":{\"message\":\"The server is overloaded\",\"code\":503}}".getBytes(StandardCharsets.UTF_8);
        TranslationException e = catchThrowableOfType(TranslationException.class,
                () -> translate(responseTranslator(), body));
        assertThat(e.error().kind()).isEqualTo(ErrorKind.OVERLOADED);
        assertThat(e.error().kind().anthropicType()).isEqualTo("overloaded_error");
        assertThat(e.error().message()).isEqualTo("The server is overloaded");
    }

    /** The answer translator of the long-tool-names request, so shortened names can be restored (GD-22). */
    static ResponseTranslator responseTranslator() throws TranslationException {
        byte[] request = resource(MessagesRequestToChatTest.DIR + "long-tool-names.messages.json");
        TranslatedRequest r = MessagesRequestToChat.translate(ByteBufAllocator.DEFAULT, Unpooled.wrappedBuffer(request),
                new MessagesRequestToChatOptions(MessagesRequestToChatTest.UPSTREAM_MODEL, false, false));
        r.body().release();
        return r.response();
    }

    private static String translate(ResponseTranslator t, byte[] body) throws TranslationException {
        ByteBuf in = ByteBufAllocator.DEFAULT.directBuffer(Math.max(1, body.length)).writeBytes(body);
        try {
            ByteBuf out = t.translate(ByteBufAllocator.DEFAULT, in);
            try {
                return out.toString(StandardCharsets.UTF_8);
            } finally {
                out.release();
            }
        } finally {
            assertThat(in.readerIndex()).isZero();
            in.release();
        }
    }

    static String normaliseIds(String s) {
        return TOOLU_ID.matcher(MSG_ID.matcher(s).replaceAll("msg_ID")).replaceAll("toolu_ID");
    }
}
