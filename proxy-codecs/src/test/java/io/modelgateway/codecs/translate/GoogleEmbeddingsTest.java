package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.codecs.error.ErrorKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * GD-31, written out by hand: the bodies Google's APIs take and give (their field names from Google's documentation
 * and SDK; the fake in proxy-core that Google's own SDK checks answers the same), and what the translator must make of
 * them, including answers it must refuse.
 */
class GoogleEmbeddingsTest {
    private static ByteBuf buf(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    private static String text(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }

    private static TranslatedRequest request(String body, GoogleEmbeddings.Api api) throws Exception {
        ByteBuf in = buf(body);
        try {
            return GoogleEmbeddings.translate(ByteBufAllocator.DEFAULT, in, api, "text-embedding-005");
        } finally {
            in.release();
        }
    }

    private static String answer(ResponseTranslator t, String upstream) throws Exception {
        ByteBuf in = buf(upstream);
        try {
            return text(t.translate(ByteBufAllocator.DEFAULT, in));
        } finally {
            in.release();
        }
    }

    @Test
    void vertex_requestAndAnswer_tokenCountsSummed() throws Exception {
        TranslatedRequest r = request("{\"model\":\"e\",\"input\":[\"a b\",\"c\"],\"dimensions\":2,\"user\":\"u\"}",
                GoogleEmbeddings.Api.VERTEX_PREDICT);
        assertThat(text(r.body())).isEqualTo("{\"instances\":[{\"content\":\"a b\"},{\"content\":\"c\"}],"
                + "\"parameters\":{\"outputDimensionality\":2}}");
        assertThat(r.stream()).isFalse();
        String out = answer(r.response(), "{\"predictions\":[{\"embeddings\":{\"statistics\":{\"truncated\":false,"
                + "\"token_count\":2},\"values\":[0.5,-0.25]}},{\"embeddings\":{\"values\":[1,0],\"statistics\":"
                + "{\"token_count\":1.0}}}],\"metadata\":{\"billableCharacterCount\":4}}");
        assertThat(out).isEqualTo("{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":"
                + "[0.5,-0.25]},{\"object\":\"embedding\",\"index\":1,\"embedding\":[1.0,0.0]}],\"model\":"
                + "\"text-embedding-005\",\"usage\":{\"prompt_tokens\":3,\"total_tokens\":3}}");
        assertThat(r.response().answeredUsage()).isEqualTo(new Usage(3, 0, 0, 0, 0));
        assertThat(r.response().answeredUsageEstimated()).isFalse();
    }

    @Test
    void gemini_requestAndAnswer_base64_usageIsTheGatewaysEstimate() throws Exception {
        TranslatedRequest r = request("{\"model\":\"e\",\"input\":\"hello\",\"encoding_format\":\"base64\"}",
                GoogleEmbeddings.Api.GEMINI_BATCH);
        assertThat(text(r.body())).isEqualTo("{\"requests\":[{\"model\":\"models/text-embedding-005\",\"content\":"
                + "{\"parts\":[{\"text\":\"hello\"}]}}]}");
        String out = answer(r.response(), "{\"embeddings\":[{\"values\":[0.1,-0.2,0.5]}]}");
        // contract 4.4's worked example
        assertThat(out).contains("\"embedding\":\"zczMPc3MTL4AAAA/\"");
        assertThat(r.response().answeredUsage().input()).isPositive();
        assertThat(r.response().answeredUsageEstimated()).isTrue();
    }

    @Test
    void tokenIds_areRefusedBeforeAnythingIsSent() {
        assertThatThrownBy(() -> request("{\"model\":\"e\",\"input\":[[1,2]]}", GoogleEmbeddings.Api.GEMINI_BATCH))
                .isInstanceOfSatisfying(TranslationException.class, e -> {
                    assertThat(e.error().kind()).isEqualTo(ErrorKind.INVALID_REQUEST);
                    assertThat(e.error().code()).isEqualTo("unsupported_value");
                    assertThat(e.error().param()).isEqualTo("input");
                });
    }

    @Test
    void answersThatDoNotFit_areUpstreamErrors() throws Exception {
        String[] bad = {
            "{\"predictions\":[{\"embeddings\":{\"values\":[1]}}]}", // one vector for two inputs
            "{\"predictions\":[{\"embeddings\":{\"values\":[1]}},{\"embeddings\":{\"values\":[1]}},"
                    + "{\"embeddings\":{\"values\":[1]}}]}", // three
            "{\"predictions\":[{\"embeddings\":{\"values\":[1]}},{\"embeddings\":{\"values\":[\"x\"]}}]}",
            "{\"predictions\":[{\"embeddings\":{\"values\":[1]}},{\"embeddings\":{}}]}",
            "{\"predictions\":[{\"embeddings\":{\"values\":[1]}},{\"embeddings\":{\"values\":[1,",
            "[]",
            "{\"predictions\":[]} trailing",
        };
        for (String b : bad) {
            TranslatedRequest r = request("{\"model\":\"e\",\"input\":[\"a\",\"b\"]}", GoogleEmbeddings.Api.VERTEX_PREDICT);
            r.body().release();
            assertThatThrownBy(() -> answer(r.response(), b)).as(b)
                    .isInstanceOfSatisfying(TranslationException.class,
                            e -> assertThat(e.error().kind()).isEqualTo(ErrorKind.UPSTREAM_ERROR));
        }
    }
}
