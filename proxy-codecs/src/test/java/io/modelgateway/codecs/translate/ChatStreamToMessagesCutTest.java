package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.newTranslator;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.run;
import static io.modelgateway.codecs.translate.ChatStreamToMessagesHarness.text;
import static io.modelgateway.codecs.translate.MessagesRequestToChatTest.resource;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property: how the upstream bytes are cut into reads does not change what the caller sees. Every golden
 * transcript is cut at every byte boundary (inside {@code data:} lines, inside multi-byte UTF-8 characters,
 * between CR and LF), fed one byte at a time, and cut at random places; the caller's events (ids normalised)
 * equal those of the uncut bytes.
 *
 * <p>The exhaustive cut runs tens of thousands of streams, too many for PARANOID's stack capture on every
 * buffer; it uses an unpooled allocator without the sampling detector and instead checks after every run
 * that all of that allocator's memory was given back — an exact leak check. The other cases run on the
 * default (PARANOID-tracked) allocator.
 */
class ChatStreamToMessagesCutTest {
    static Stream<String> transcripts() {
        return ChatStreamToMessagesTest.TRANSCRIPTS.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transcripts")
    void onEvent_cutAtEveryBoundary_sameCallerEvents(String name) {
        byte[] all = resource(ChatStreamToMessagesTest.DIR + name + ".chat.sse");
        String whole = text(run(all));
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(true, true);
        for (int cut = 0; cut <= all.length; cut++) {
            List<byte[]> pieces = List.of(Arrays.copyOfRange(all, 0, cut), Arrays.copyOfRange(all, cut, all.length));
            assertThat(text(run(newTranslator(alloc), pieces, true, alloc))).as("%s cut at %d", name, cut)
                    .isEqualTo(whole);
            assertThat(alloc.metric().usedDirectMemory() + alloc.metric().usedHeapMemory())
                    .as("bytes still held after the stream cut at %d", cut).isZero();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transcripts")
    void onEvent_oneByteAtATime_sameCallerEvents(String name) {
        byte[] all = resource(ChatStreamToMessagesTest.DIR + name + ".chat.sse");
        List<byte[]> pieces = new ArrayList<>(all.length);
        for (byte b : all) {
            pieces.add(new byte[] {b});
        }
        assertThat(text(run(newTranslator(), pieces, true))).isEqualTo(text(run(all)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transcripts")
    void onEvent_randomCuts_sameCallerEvents(String name) {
        byte[] all = resource(ChatStreamToMessagesTest.DIR + name + ".chat.sse");
        String whole = text(run(all));
        Random rnd = new Random(name.hashCode());
        for (int round = 0; round < 50; round++) {
            List<byte[]> pieces = new ArrayList<>();
            int at = 0;
            while (at < all.length) {
                int n = 1 + rnd.nextInt(Math.min(64, all.length - at));
                pieces.add(Arrays.copyOfRange(all, at, at + n));
                at += n;
            }
            assertThat(text(run(newTranslator(), pieces, true))).as("%s round %d", name, round).isEqualTo(whole);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transcripts")
    void onEvent_crlfAndCrLineEnds_sameCallerEventsAsLf(String name) {
        String lf = new String(resource(ChatStreamToMessagesTest.DIR + name + ".chat.sse"), StandardCharsets.UTF_8);
        if (lf.indexOf('\r') >= 0) {
            return; // already mixed (framing): its own golden file covers it
        }
        String whole = text(run(lf.getBytes(StandardCharsets.UTF_8)));
        for (String eol : new String[] {"\r\n", "\r"}) {
            byte[] other = lf.replace("\n", eol).getBytes(StandardCharsets.UTF_8);
            assertThat(text(run(other))).as("%s with %s", name, eol.replace("\r", "CR").replace("\n", "LF"))
                    .isEqualTo(whole);
            for (int cut = 0; cut <= other.length; cut += 7) {
                List<byte[]> pieces = List.of(Arrays.copyOfRange(other, 0, cut),
                        Arrays.copyOfRange(other, cut, other.length));
                assertThat(text(run(newTranslator(), pieces, true))).as("%s cut at %d", name, cut).isEqualTo(whole);
            }
        }
    }
}
