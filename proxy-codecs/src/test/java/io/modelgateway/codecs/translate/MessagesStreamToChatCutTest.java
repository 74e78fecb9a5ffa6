package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.bytes;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.stream;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.streamTranslator;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Property: however the network cuts the upstream bytes — at every single offset, including inside a UTF-8
 * character, inside a {@code data:} line and between a CR and its LF — the caller sees exactly the stream the
 * uncut bytes give. The translator sits behind the real SseEventScanner, as in the gateway.
 */
class MessagesStreamToChatCutTest {

    static Stream<String> transcripts() {
        return Stream.of("thinking-text-tool", "parallel-tools-cache", "json-response", "redacted-thinking",
                "error-overloaded", "error-rate-limit", "error-api", "ended-early", "framing", "malformed",
                "server-tools-refusal");
    }

    @ParameterizedTest
    @MethodSource("transcripts")
    void onEvent_cutAtEveryOffset_givesTheUncutOutput(String name) {
        byte[] in = bytes("stream/" + name + ".anthropic.sse");
        String whole = stream(streamTranslator(true, false, true), in);
        for (int cut = 0; cut <= in.length; cut++) {
            String actual = stream(false, streamTranslator(true, false, true), in, cut);
            if (!actual.equals(whole)) {
                assertThat(actual).as("cut at byte %d of %s", cut, name).isEqualTo(whole);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("transcripts")
    void onEvent_oneByteAtATime_givesTheUncutOutput(String name) {
        byte[] in = bytes("stream/" + name + ".anthropic.sse");
        int[] everyByte = new int[in.length];
        Arrays.setAll(everyByte, i -> i);
        assertThat(stream(false, streamTranslator(false, true, false), in, everyByte))
                .isEqualTo(stream(streamTranslator(false, true, false), in));
    }

    @ParameterizedTest
    @MethodSource("transcripts")
    void onEvent_manyRandomCuts_giveTheUncutOutput(String name) {
        byte[] in = bytes("stream/" + name + ".anthropic.sse");
        String whole = stream(streamTranslator(true, true, false), in);
        SplittableRandom random = new SplittableRandom(name.hashCode());
        for (int round = 0; round < 50; round++) {
            int[] cuts = random.ints(1 + random.nextInt(12), 0, in.length + 1).sorted().toArray();
            String actual = stream(false, streamTranslator(true, true, false), in, cuts);
            if (!actual.equals(whole)) {
                assertThat(actual).as("cuts %s of %s", Arrays.toString(cuts), name).isEqualTo(whole);
            }
        }
    }

    /** The same events with CR LF or lone CR line ends give the same caller stream, cut anywhere. */
    @ParameterizedTest
    @ValueSource(strings = {"\r\n", "\r"})
    void onEvent_otherLineEndsCutAnywhere_giveTheSameOutput(String lineEnd) {
        String expected = text("stream/thinking-text-tool.usage.chat.sse");
        byte[] in = text("stream/thinking-text-tool.anthropic.sse").replace("\n", lineEnd)
                .getBytes(StandardCharsets.UTF_8);
        for (int cut = 0; cut <= in.length; cut++) {
            String actual = stream(false, streamTranslator(true, false, false), in, cut);
            if (!actual.equals(expected)) {
                assertThat(actual).as("cut at byte %d", cut).isEqualTo(expected);
            }
        }
    }
}
