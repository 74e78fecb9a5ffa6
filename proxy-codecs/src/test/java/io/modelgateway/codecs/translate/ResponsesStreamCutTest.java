package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ResponsesHarness.answerTranslator;
import static io.modelgateway.codecs.translate.ResponsesHarness.run;
import static io.modelgateway.codecs.translate.ResponsesHarness.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.codecs.translate.ResponsesHarness.Upstream;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property: how the upstream bytes are cut into reads does not change what a Responses caller sees. Every stream
 * golden of {@link ResponsesTranslationGoldenTest}, chat and Anthropic upstreams alike, is cut at every byte
 * boundary (inside {@code data:} lines, inside multi-byte UTF-8 characters, between CR and LF), fed one byte at a
 * time, and cut at random places; the caller's events (ids normalised) equal those of the uncut bytes.
 *
 * <p>The exhaustive cut uses an unpooled allocator without the sampling leak detector and checks after every run
 * that all of its memory was given back (an exact leak check); the other cases run on the PARANOID-tracked default.
 */
class ResponsesStreamCutTest {
    static Stream<Arguments> streams() {
        return ResponsesTranslationGoldenTest.streams();
    }

    private static String whole(Upstream upstream, String name, byte[] all) {
        return text(run(answerTranslator(upstream, name).newStream(ByteBufAllocator.DEFAULT), List.of(all), true,
                ByteBufAllocator.DEFAULT));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("streams")
    void onEvent_cutAtEveryBoundary_sameCallerEvents(String name, Upstream upstream) {
        byte[] all = ResponsesTranslationGoldenTest.upstreamStream(upstream, name);
        String whole = whole(upstream, name, all);
        ResponseTranslator translator = answerTranslator(upstream, name);
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(true, true);
        for (int cut = 0; cut <= all.length; cut++) {
            List<byte[]> pieces = List.of(Arrays.copyOfRange(all, 0, cut), Arrays.copyOfRange(all, cut, all.length));
            assertThat(text(run(translator.newStream(alloc), pieces, true, alloc))).as("%s cut at %d", name, cut)
                    .isEqualTo(whole);
            assertThat(alloc.metric().usedDirectMemory() + alloc.metric().usedHeapMemory())
                    .as("bytes still held after the stream cut at %d", cut).isZero();
        }
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("streams")
    void onEvent_oneByteAtATime_sameCallerEvents(String name, Upstream upstream) {
        byte[] all = ResponsesTranslationGoldenTest.upstreamStream(upstream, name);
        List<byte[]> pieces = new ArrayList<>(all.length);
        for (byte b : all) {
            pieces.add(new byte[] {b});
        }
        assertThat(text(run(answerTranslator(upstream, name).newStream(ByteBufAllocator.DEFAULT), pieces, true,
                ByteBufAllocator.DEFAULT))).isEqualTo(whole(upstream, name, all));
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("streams")
    void onEvent_randomCuts_sameCallerEvents(String name, Upstream upstream) {
        byte[] all = ResponsesTranslationGoldenTest.upstreamStream(upstream, name);
        String whole = whole(upstream, name, all);
        Random rnd = new Random(name.hashCode());
        for (int round = 0; round < 50; round++) {
            List<byte[]> pieces = new ArrayList<>();
            int at = 0;
            while (at < all.length) {
                int n = 1 + rnd.nextInt(Math.min(64, all.length - at));
                pieces.add(Arrays.copyOfRange(all, at, at + n));
                at += n;
            }
            assertThat(text(run(answerTranslator(upstream, name).newStream(ByteBufAllocator.DEFAULT), pieces, true,
                    ByteBufAllocator.DEFAULT))).as("%s round %d", name, round).isEqualTo(whole);
        }
    }

    /** An upstream that stops anywhere: the caller's stream still ends well-formed (response.failed at worst). */
    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("streams")
    void onEnd_streamStoppedAtEveryEvent_wellFormed(String name, Upstream upstream) {
        byte[] all = ResponsesTranslationGoldenTest.upstreamStream(upstream, name);
        for (int end = 0; end <= all.length; end += Math.max(1, all.length / 40)) {
            StreamTranslator t = answerTranslator(upstream, name).newStream(ByteBufAllocator.DEFAULT);
            List<String> events = run(t, List.of(Arrays.copyOfRange(all, 0, end)), false, ByteBufAllocator.DEFAULT);
            if (!events.isEmpty()) {
                ResponsesHarness.assertWellFormed(events);
            }
            assertThat(t.finished()).as("%s stopped at %d", name, end).isTrue();
        }
    }
}
