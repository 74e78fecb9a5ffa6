package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.assertWellFormed;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.newTranslator;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;
import java.util.List;

/**
 * Any upstream bytes, cut anywhere, through the SSE scanner into the chat → Anthropic stream translator:
 * nothing is thrown, the caller always gets well-formed {@code event:} + {@code data:} events in the 5.10
 * grammar ending in {@code message_stop} or {@code error}, and no buffer leaks (the test kit fails the class).
 * Regression mode (the default, used in CI) replays the seeds in src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class ChatStreamToMessagesFuzzTest {
    @FuzzTest(maxDuration = "60s")
    void onEvent_anyBytesAnyCut_wellFormedCallerEvents(byte[] data) {
        int cut = data.length == 0 ? 0 : (data[0] & 0xff) % data.length;
        boolean clean = data.length == 0 || (data[data.length - 1] & 1) == 0;
        StreamTranslator t = newTranslator();
        List<String> events = run(t, List.of(Arrays.copyOfRange(data, 0, cut),
                Arrays.copyOfRange(data, cut, data.length)), clean);
        assertWellFormed(events);
        assertThat(t.finished()).isTrue();
    }
}
