package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ResponsesHarness.answerTranslator;
import static io.modelgateway.codecs.translate.ResponsesHarness.assertWellFormed;
import static io.modelgateway.codecs.translate.ResponsesHarness.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.modelgateway.codecs.translate.ResponsesHarness.Upstream;
import io.netty.buffer.ByteBufAllocator;
import java.util.Arrays;
import java.util.List;

/**
 * Any upstream bytes, cut anywhere, through the SSE scanner into either Responses stream translator (chat or
 * Anthropic upstream, picked by the first byte's bit 0; with or without text.format by its bit 1; the second byte
 * picks the cut; the rest is the stream): nothing is thrown, the
 * caller's events are well-formed typed events numbered from 0 that end with {@code response.completed},
 * {@code response.incomplete} or {@code response.failed} (contract 12.5, GD-28), and no buffer leaks (the test kit
 * fails the class). Regression mode (the default, used in CI) replays the seeds in src/test/resources;
 * {@code JAZZER_FUZZ=1} fuzzes.
 */
class ResponsesStreamFuzzTest {
    @FuzzTest(maxDuration = "60s")
    void onEvent_anyBytesAnyCut_wellFormedResponsesEvents(byte[] data) {
        int flags = data.length == 0 ? 0 : data[0];
        byte[] bytes = data.length < 2 ? new byte[0] : Arrays.copyOfRange(data, 2, data.length);
        int cut = bytes.length == 0 ? 0 : (data[1] & 0xff) % bytes.length;
        boolean clean = bytes.length == 0 || (bytes[bytes.length - 1] & 1) == 0;
        Upstream upstream = (flags & 1) == 0 ? Upstream.CHAT : Upstream.ANTHROPIC;
        StreamTranslator t = answerTranslator(upstream, (flags & 2) != 0 ? "json-response" : "text")
                .newStream(ByteBufAllocator.DEFAULT);
        List<String> events = run(t, List.of(Arrays.copyOfRange(bytes, 0, cut),
                Arrays.copyOfRange(bytes, cut, bytes.length)), clean, ByteBufAllocator.DEFAULT);
        if (!events.isEmpty()) {
            assertWellFormed(events);
        }
        assertThat(t.finished()).isTrue();
    }
}
