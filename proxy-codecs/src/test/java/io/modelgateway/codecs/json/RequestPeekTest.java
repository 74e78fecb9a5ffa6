package io.modelgateway.codecs.json;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RequestPeekTest {

    @Test
    void peek_chatStream_readsModelOffsetsAndFlags() {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"h\u00e9\"}],\"model\":\"sim-chat\","
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"max_tokens\":9,\"extra\":{\"a\":[1]}}";
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, body);
        assertThat(p.ok()).as("%s", p.error()).isTrue();
        assertThat(p.model()).isEqualTo("sim-chat");
        assertThat(p.stream()).isTrue();
        assertThat(p.includeUsageEdit()).as("include_usage already true: no edit").isNull();
        assertThat(p.maxTokens()).isEqualTo(9);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        assertThat(new String(bytes, p.modelStart(), p.modelEnd() - p.modelStart(), StandardCharsets.UTF_8))
                .isEqualTo("\"sim-chat\"");
    }

    @Test
    void peek_compositeBodySplitInsideModel_offsetsStillAbsolute() {
        String body = "{\"model\":\"a-very-long-model-name\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        CompositeByteBuf composite = ByteBufAllocator.DEFAULT.compositeBuffer();
        composite.addComponent(true, Unpooled.directBuffer().writeBytes(bytes, 0, 15));
        composite.addComponent(true, Unpooled.directBuffer().writeBytes(bytes, 15, bytes.length - 15));
        try {
            RequestPeek p = RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, composite, false);
            assertThat(p.ok()).isTrue();
            assertThat(p.model()).isEqualTo("a-very-long-model-name");
            assertThat(body.substring(p.modelStart(), p.modelEnd())).isEqualTo("\"a-very-long-model-name\"");
            ByteBuf spliced = BodySplicer.replaceString(ByteBufAllocator.DEFAULT, composite, p.modelStart(),
                    p.modelEnd(), "up\"stream");
            assertThat(spliced.toString(StandardCharsets.UTF_8))
                    .isEqualTo(body.replace("\"a-very-long-model-name\"", "\"up\\\"stream\""));
            spliced.release();
        } finally {
            composite.release();
        }
    }

    @Test
    void peek_whitespaceAroundTokens_offsetsFrameTheStringToken() {
        String body = "{ \"messages\" : [ {\"role\":\"user\"} ] ,\n  \"model\" :\t \"m-1\" , \"encoding_format\" : \"base64\" }";
        for (ByteBuf buf : new ByteBuf[] {wrap(body), Unpooled.directBuffer().writeBytes(body.getBytes(StandardCharsets.UTF_8))}) {
            RequestPeek p = RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, buf, false);
            assertThat(body.substring(p.modelStart(), p.modelEnd())).isEqualTo("\"m-1\"");
            buf.release();
        }
    }

    @Test
    void peek_memberOffsets_blanksAndEscapedNames_frameTheWrittenMember() {
        // Member starts are the scanner's offsets of each name's opening quote, whatever blanks or escapes the member
        // is written with. Expected offsets come from the text itself.
        String[] bodies = {
            "{\"model\":\"m\",\"stream\":true,\"temperature\":1,\"messages\":[{\"role\":\"user\"}]}",
            "{ \"model\"\n :\t\"m\" ,\r\n\"stream\"  :  true , \"temperature\"\t:0.5,\"messages\":[{\"role\":\"user\"}]}",
            "{\"mo\\u0064el\":\"m\",\"str\\u0065am\" : true,\"t\\u0065mperature\":1,\"messages\":[{\"role\":\"user\"}]}",
            "{\"x\\\"model\":1,\"model\":\"m\",\"stream\":false,\"temperature\":0,\"messages\":[{\"role\":\"user\"}]}"};
        String[][] written = {
            {"\"model\"", "\"stream\"", "\"temperature\""},
            {"\"model\"", "\"stream\"", "\"temperature\""},
            {"\"mo\\u0064el\"", "\"str\\u0065am\"", "\"t\\u0065mperature\""},
            {"\"model\":\"m\"", "\"stream\"", "\"temperature\""}};
        for (int k = 0; k < bodies.length; k++) {
            // Chat keeps the temperature member's place (GD-19 may remove it), messages the stream member's.
            for (Endpoint endpoint : new Endpoint[] {Endpoint.CHAT_COMPLETIONS, Endpoint.MESSAGES}) {
                String body = endpoint == Endpoint.MESSAGES ? bodies[k].replace("\"messages\"", "\"max_tokens\":5,\"messages\"")
                        : bodies[k];
                for (ByteBuf buf : new ByteBuf[] {wrap(body), Unpooled.directBuffer().writeBytes(body.getBytes(StandardCharsets.UTF_8))}) {
                    try {
                        RequestPeek p = RequestPeek.peek(endpoint, buf, false);
                        assertThat(p.ok()).as("%s: %s", body, p.error()).isTrue();
                        assertThat(p.modelMemberStart()).as(body).isEqualTo(body.indexOf(written[k][0]));
                        if (endpoint == Endpoint.MESSAGES) {
                            assertThat(p.streamMemberStart()).as(body).isEqualTo(body.indexOf(written[k][1]));
                        } else {
                            assertThat(p.temperatureMemberStart()).as(body).isEqualTo(body.indexOf(written[k][2]));
                        }
                        assertThat(body.substring(p.modelStart(), p.modelEnd())).isEqualTo("\"m\"");
                        assertThat(p.bodyInner()).isEqualTo(body.indexOf('{') + 1);
                    } finally {
                        buf.release();
                    }
                }
            }
        }
    }

    @Test
    void peek_modelWithEscapedQuoteAndBackslash_endsAfterTheClosingQuote() {
        String body = "{\"model\":\"a\\\"b\\\\\",\"messages\":[{\"role\":\"user\"}]}";
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, body);
        assertThat(p.ok()).as("%s", p.error()).isTrue();
        assertThat(p.model()).isEqualTo("a\"b\\");
        assertThat(body.substring(p.modelStart(), p.modelEnd())).isEqualTo("\"a\\\"b\\\\\"");
    }

    @Test
    void peek_malformedJson_isInvalidJson() {
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"x\",");
        assertThat(p.error().kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(p.error().code()).isEqualTo("invalid_json");
    }

    @Test
    void peek_trailingGarbage_isInvalidJson() {
        RequestPeek p = peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":\"x\"} x");
        assertThat(p.error().code()).isEqualTo("invalid_json");
    }

    @Test
    void peek_missingMessages_namesParam() {
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"x\"}");
        assertThat(p.error().param()).isEqualTo("messages");
        assertThat(p.error().code()).isEqualTo("missing_required_parameter");
    }

    @Test
    void peek_missingModel_namesParam() {
        RequestPeek p = peek(Endpoint.EMBEDDINGS, "{\"input\":\"x\"}");
        assertThat(p.error().param()).isEqualTo("model");
    }

    @Test
    void peek_messagesWithoutMaxTokens_isMissing() {
        RequestPeek p = peek(Endpoint.MESSAGES, "{\"model\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":\"h\"}]}");
        assertThat(p.error().param()).isEqualTo("max_tokens");
    }

    /** Each message's role, however it is escaped, is checked; a refusal names the message and the role. */
    @Test
    void peek_roles_escapedOrNot_areCheckedPerMessage_andARefusalNamesThem() {
        String ok = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\"},{\"role\":\"\\u0075ser\"},"
                + "{\"role\":\"assistant\"},{\"role\":\"tool\"},{\"role\":\"developer\"}]}";
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, ok).ok()).isTrue();
        RequestPeek typo = peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"role\":\"assistent\"}]}");
        assertThat(typo.error().param()).isEqualTo("messages[1].role");
        assertThat(typo.error().message()).contains("'assistent'");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"role\":\"User\"}]}").error().param())
                .isEqualTo("messages[1].role");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"role\":\"use\"}]}").error().param())
                .isEqualTo("messages[1].role");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"role\":\"users\"}]}").error().param())
                .isEqualTo("messages[1].role");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"content\":\"x\"}]}").error().param())
                .isEqualTo("messages[1].role");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"},{\"role\":\"user\"},7]}").error().param())
                .isEqualTo("messages[2]");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"m\",\"messages\":[{\"role\":true}]}").error().param()).isEqualTo("messages[0].role");
        assertThat(peek(Endpoint.MESSAGES, "{\"model\":\"m\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\"},"
                + "{\"role\":\"tool\"}]}").error().param()).isEqualTo("messages[1].role");
    }

    @Test
    void peek_systemRoleInMessages_dependsOnVersion() {
        String body = "{\"model\":\"x\",\"max_tokens\":5,\"messages\":[{\"role\":\"system\",\"content\":\"s\"},"
                + "{\"role\":\"user\",\"content\":\"h\"}]}";
        assertThat(peek(Endpoint.MESSAGES, body).error().param()).isEqualTo("messages[0].role");
        assertThat(RequestPeek.peek(Endpoint.MESSAGES, wrap(body), true).ok()).isTrue();
    }

    @Test
    void peek_streamOptionsWithoutStream_isRejected() {
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"x\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"h\"}],\"stream_options\":{\"include_usage\":true}}");
        assertThat(p.error().param()).isEqualTo("stream_options");
    }

    @Test
    void peek_wrongTypes_nameFieldPath() {
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":1,\"messages\":[]}").error().param())
                .isEqualTo("model");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":\"hi\"}").error().code())
                .isEqualTo("invalid_type");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"function\"}]}")
                .error().code()).isEqualTo("unsupported_value");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}],"
                + "\"temperature\":3}").error().param()).isEqualTo("temperature");
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}],"
                + "\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}").error().param()).isEqualTo("stop");
    }

    @Test
    void peek_nullOptionalField_isAbsent() {
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"x\"}],\"stream\":null,\"max_tokens\":null,\"stream_options\":null}");
        assertThat(p.ok()).isTrue();
        assertThat(p.stream()).isFalse();
    }

    @Test
    void peek_embeddingInputs_validated() {
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":[\"a\",\"b\"],\"encoding_format\":"
                + "\"base64\",\"dimensions\":8}").ok()).isTrue();
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":[[1,2],[3]]}").ok()).isTrue();
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":\"\"}").error().param()).isEqualTo("input");
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":[]}").error().param()).isEqualTo("input");
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":[\"a\",1]}").error().param())
                .isEqualTo("input");
        assertThat(peek(Endpoint.EMBEDDINGS, "{\"model\":\"e\",\"input\":\"a\",\"encoding_format\":\"hex\"}")
                .error().param()).isEqualTo("encoding_format");
    }

    @Test
    void peek_tooDeep_isRefused() {
        String deep = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"x\":" + "[".repeat(400)
                + "]".repeat(400) + "}]}";
        assertThat(peek(Endpoint.CHAT_COMPLETIONS, deep).error().code()).isEqualTo("invalid_json");
    }

    @Test
    void peek_invalidUtf8_isInvalidJson() {
        byte[] bad = "{\"model\":\"m\u00ff\",\"messages\":[]}".getBytes(StandardCharsets.ISO_8859_1);
        ByteBuf buf = Unpooled.wrappedBuffer(bad);
        assertThat(RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, buf, false).error().code()).isEqualTo("invalid_json");
    }

    @Test
    void peek_thinkingBudget_mustBeBelowMaxTokens() {
        String body = "{\"model\":\"m\",\"max_tokens\":1000,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048},"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}";
        assertThat(peek(Endpoint.MESSAGES, body).error().param()).isEqualTo("thinking.budget_tokens");
    }

    @Test
    void removeMember_temperatureAnywhere_leavesValidJsonWithoutIt() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        String[] bodies = {
            "{\"temperature\": 0.5, \"model\":\"m\",\"messages\":[{\"role\":\"user\"}]}",
            "{\"model\":\"m\",\"temperature\":1,\"messages\":[{\"role\":\"user\"}]}",
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}] , \"temperature\" : 2 }",
            "{\"temperature\":0.1,\"model\":\"m\",\"messages\":[{\"role\":\"user\"}]}"};
        for (String body : bodies) {
            ByteBuf in = wrap(body);
            RequestPeek p = RequestPeek.peek(Endpoint.CHAT_COMPLETIONS, in, false);
            assertThat(p.hasTemperature()).isTrue();
            ByteBuf out = BodySplicer.splice(ByteBufAllocator.DEFAULT, in,
                    BodySplicer.removeMember(in, p.temperatureMemberStart(), p.temperatureMemberEnd()),
                    BodySplicer.string(p.modelStart(), p.modelEnd(), "up"));
            com.fasterxml.jackson.databind.JsonNode tree = mapper.readTree(out.toString(StandardCharsets.UTF_8));
            assertThat(tree.has("temperature")).as(body).isFalse();
            assertThat(tree.path("model").asText()).isEqualTo("up");
            out.release();
        }
    }

    @Test
    void peek_duplicateModel_is400NamingTheKey() {
        // The attack: last key wins here, an upstream that takes the first would serve model-b.
        RequestPeek p = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"model-b\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"x\"}],\"model\":\"model-a\"}");
        assertThat(p.ok()).isFalse();
        assertThat(p.error().kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
        assertThat(p.error().param()).isEqualTo("model");
        assertThat(p.error().code()).isEqualTo("duplicate_key");
        assertThat(p.error().message()).contains("'model'");
    }

    @Test
    void peek_duplicateKeysTheGatewayReads_eachRefusedOnEveryEndpoint() {
        String msgs = "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]";
        String[][] cases = {
            {"CHAT_COMPLETIONS", "{\"model\":\"m\"," + msgs + ",\"max_tokens\":1,\"max_tokens\":99999}", "max_tokens"},
            {"CHAT_COMPLETIONS", "{\"model\":\"m\"," + msgs + ",\"stream\":false,\"stream\":true}", "stream"},
            {"CHAT_COMPLETIONS", "{\"model\":\"m\"," + msgs + ",\"stream\":true,\"stream_options\":"
                    + "{\"include_usage\":false,\"include_usage\":true}}", "stream_options.include_usage"},
            {"CHAT_COMPLETIONS", "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},"
                    + "{\"role\":\"tool\",\"content\":\"b\",\"role\":\"user\"}]}", "messages[1].role"},
            {"MESSAGES", "{\"model\":\"m\",\"max_tokens\":2048," + msgs + ",\"thinking\":{\"type\":\"enabled\","
                    + "\"budget_tokens\":1024,\"budget_tokens\":1}}", "thinking.budget_tokens"},
            {"MESSAGES", "{\"model\":\"m\",\"max_tokens\":5," + msgs + ",\"max_tokens\":1}", "max_tokens"},
            {"EMBEDDINGS", "{\"model\":\"e\",\"input\":\"a\",\"encoding_format\":\"float\","
                    + "\"encoding_format\":\"base64\"}", "encoding_format"},
            // a key the gateway does not read counts too: the upstream reads every top-level key
            {"CHAT_COMPLETIONS", "{\"tools\":[],\"model\":\"m\"," + msgs + ",\"tools\":[{}]}", "tools"},
            // the same key sent as null still counts (null is "absent" only for the value's meaning)
            {"CHAT_COMPLETIONS", "{\"model\":\"m\"," + msgs + ",\"model\":null}", "model"},
        };
        for (String[] c : cases) {
            RequestPeek p = peek(Endpoint.valueOf(c[0]), c[1]);
            assertThat(p.ok()).as(c[1]).isFalse();
            assertThat(p.error().param()).as(c[1]).isEqualTo(c[2]);
            assertThat(p.error().code()).as(c[1]).isEqualTo("duplicate_key");
        }
        // the same name in different objects is no duplicate
        RequestPeek apart = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}],\"metadata\":{\"model\":\"x\"},"
                + "\"stream\":true,\"stream_options\":{\"stream\":1,\"include_usage\":true}}");
        assertThat(apart.ok()).as("%s", apart.error()).isTrue();
        // objects the peek skips go upstream as bytes and are never interpreted here: nothing to disagree on
        RequestPeek skipped = peek(Endpoint.CHAT_COMPLETIONS, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"text\",\"type\":\"text\",\"text\":\"a\"}]}],"
                + "\"metadata\":{\"a\":1,\"a\":2}}");
        assertThat(skipped.ok()).as("%s", skipped.error()).isTrue();
    }

    @Test
    void peek_wideTopLevel_findsADuplicateAmongManyKeys() {
        StringBuilder sb = new StringBuilder("{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}]");
        for (int i = 0; i < 5000; i++) {
            sb.append(",\"k").append(i).append("\":").append(i);
        }
        RequestPeek ok = peek(Endpoint.CHAT_COMPLETIONS, sb + "}");
        assertThat(ok.ok()).as("%s", ok.error()).isTrue();
        RequestPeek dup = peek(Endpoint.CHAT_COMPLETIONS, sb + ",\"k17\":0}");
        assertThat(dup.error().param()).isEqualTo("k17");
        RequestPeek early = peek(Endpoint.CHAT_COMPLETIONS, sb + ",\"k4999\":0,\"model\":\"x\"}");
        assertThat(early.error().param()).isEqualTo("k4999");
    }

    /** Contract 12.1: what routing and limits read of a Responses request. */
    @Test
    void peek_responses_modelStreamMaxOutputTokensPreviousResponseAndTemperature() {
        String body = "{\"model\":\"gpt-x\",\"input\":[{\"role\":\"user\",\"content\":\"hi\"},{\"type\":"
                + "\"function_call_output\",\"call_id\":\"c\",\"output\":\"x\"}],\"stream\":true,"
                + "\"max_output_tokens\":300,\"temperature\":0.5,\"previous_response_id\":\"resp_1\","
                + "\"reasoning\":{\"effort\":\"low\"},\"text\":{\"format\":{\"type\":\"text\"}}}";
        RequestPeek p = peek(Endpoint.RESPONSES, body);
        assertThat(p.error()).isNull();
        assertThat(p.model()).isEqualTo("gpt-x");
        assertThat(body.substring(p.modelStart(), p.modelEnd())).isEqualTo("\"gpt-x\"");
        assertThat(p.stream()).isTrue();
        assertThat(p.maxTokens()).isEqualTo(300);
        assertThat(p.previousResponseId()).isEqualTo("resp_1");
        assertThat(p.hasTemperature()).isTrue();
        assertThat(body.substring(p.temperatureMemberStart(), p.temperatureMemberEnd())).isEqualTo("\"temperature\":0.5");
        RequestPeek plain = peek(Endpoint.RESPONSES, "{\"model\":\"gpt-x\",\"input\":\"hi\"}");
        assertThat(plain.error()).isNull();
        assertThat(plain.stream()).isFalse();
        assertThat(plain.previousResponseId()).isNull();
    }

    @Test
    void peek_responses_badTypesAndDuplicates_are400NamingTheField() {
        String[][] cases = {
            {"{\"model\":\"m\",\"input\":3}", "input"},
            {"{\"model\":\"m\",\"input\":[\"x\"]}", "input[0]"},
            {"{\"model\":\"m\",\"input\":\"x\",\"max_output_tokens\":0}", "max_output_tokens"},
            {"{\"model\":\"m\",\"input\":\"x\",\"stream\":\"yes\"}", "stream"},
            {"{\"model\":\"m\",\"input\":\"x\",\"previous_response_id\":7}", "previous_response_id"},
            {"{\"model\":\"m\",\"input\":\"x\",\"tools\":{}}", "tools"},
            {"{\"model\":\"m\",\"input\":[{\"role\":\"user\",\"role\":\"system\",\"content\":\"x\"}]}", "input[0].role"},
            {"{\"model\":\"m\",\"input\":\"x\",\"reasoning\":{\"effort\":\"low\",\"effort\":\"high\"}}",
                "reasoning.effort"},
            {"{\"model\":\"m\",\"model\":\"n\",\"input\":\"x\"}", "model"},
        };
        for (String[] c : cases) {
            RequestPeek p = peek(Endpoint.RESPONSES, c[0]);
            assertThat(p.error()).as(c[0]).isNotNull();
            assertThat(p.error().param()).as(c[0]).isEqualTo(c[1]);
        }
    }

    private static RequestPeek peek(Endpoint e, String body) {
        return RequestPeek.peek(e, wrap(body), false);
    }

    private static ByteBuf wrap(String body) {
        return Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8));
    }
}
