package io.modelgateway.core.google;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.genai.types.GenerateContentResponse;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Gemini stream samples the translators are tested with (proxy-codecs' {@code gemini/stream/*.gemini.sse}) read
 * by Google's own SDK types: every event that is a response parses as {@link GenerateContentResponse} and comes back
 * with the same members, so no sample holds a field name or shape Gemini does not send.
 */
class GeminiSamplesAgainstGoogleSdkTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @ValueSource(strings = {"answer-blocked", "ended-early", "error-bare-json", "error-mid-stream", "malformed",
        "max-tokens", "parallel-calls", "partial-safety", "prompt-blocked", "signature-on-text", "text",
        "thinking-tool", "usage-after-finish"})
    void everyResponseEventIsAGenerateContentResponse(String name) throws Exception {
        String text;
        try (InputStream in = getClass().getResourceAsStream(
                "/io/modelgateway/codecs/translate/gemini/stream/" + name + ".gemini.sse")) {
            assertThat(in).as(name).isNotNull();
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        int checked = 0;
        for (String line : text.split("\n")) {
            if (!line.startsWith("data: ")) {
                continue;
            }
            JsonNode sent;
            try {
                sent = JSON.readTree(line.substring(6));
            } catch (Exception malformedOnPurpose) {
                continue; // malformed.gemini.sse: a cut event the translators must refuse
            }
            if (sent.has("error")) {
                continue; // Google's error object, not a response
            }
            GenerateContentResponse r = GenerateContentResponse.fromJson(sent.toString());
            assertThat(JSON.readTree(r.toJson())).as("%s: %s", name, line).isEqualTo(sent);
            checked++;
        }
        assertThat(checked).as(name).isPositive();
    }
}
