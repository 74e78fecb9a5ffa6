package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatCallerTranscripts.stream;
import static io.modelgateway.codecs.translate.ChatCallerTranscripts.streamTranslator;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Any upstream bytes, cut anywhere, through the SseEventScanner into the chat stream translator: it never
 * throws, every event it hands out is one well-formed {@code data:} line of compact JSON (or {@code [DONE]},
 * or the keep-alive comment), exactly one terminal event ends the stream and nothing follows it, and every
 * buffer is released (the class fails on a leak). The first byte picks include_usage / reasoning.exclude /
 * json_response, the second the cut. Regression mode (the default, used in CI) replays the seeds in
 * src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class MessagesStreamToChatFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void translate_anyBytesAnyCut_wellFormedChatEvents(byte[] data) {
        int flags = data.length == 0 ? 0 : data[0];
        int cut = data.length < 2 ? 0 : (data[1] & 0xff) % data.length;
        stream(streamTranslator((flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0), data, cut);
    }
}
