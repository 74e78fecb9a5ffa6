package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimEventsTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Event i as {@link SimEvents#writeTo} writes it, after a byte already in the buffer. */
    private static String written(SimEvents events, int i) {
        ByteBuf out = Unpooled.buffer();
        try {
            out.writeByte('!');
            events.writeTo(i, out);
            return out.toString(StandardCharsets.UTF_8).substring(1);
        } finally {
            out.release();
        }
    }

    @Test
    void aTokenIsWrittenInItsFrame_theSameWhetherReadAsAnEventOrWritten() {
        SimEvents.TokenFrame frame = new SimEvents.TokenFrame(
                new byte[][] {utf8("data: {\"choices\":["), utf8("{\"delta\":{\"content\":")},
                new byte[][] {utf8("}}]"), utf8("}\n\n")});
        Object[] sources = {new byte[][] {utf8("data: {\"role\":\"assistant\"}\n\n")}, utf8("\" café\""),
            utf8("\" naïve\""), new byte[][] {utf8("data: [DONE]\n\n")}};
        SimEvents.TokenFrame[] frames = {null, frame, frame, null};
        byte[] waits = {SimEvents.FIRST_TOKEN, SimEvents.TOKEN, SimEvents.TOKEN, SimEvents.NO_WAIT};
        SimEvents events = new SimEvents(sources, frames, waits, 4, 300, 50);

        List<String> expected = List.of("data: {\"role\":\"assistant\"}\n\n",
                "data: {\"choices\":[{\"delta\":{\"content\":\" café\"}}]}\n\n",
                "data: {\"choices\":[{\"delta\":{\"content\":\" naïve\"}}]}\n\n", "data: [DONE]\n\n");
        assertThat(events).hasSize(4);
        for (int i = 0; i < 4; i++) {
            assertThat(written(events, i)).as("written %d", i).isEqualTo(expected.get(i));
            assertThat(new String(events.get(i).bytes(), StandardCharsets.UTF_8)).as("event %d", i)
                    .isEqualTo(expected.get(i));
            assertThat(events.length(i)).as("length %d", i).isEqualTo(utf8(expected.get(i)).length);
        }
        assertThat(events.delayNanos(0)).isEqualTo(300);
        assertThat(events.delayNanos(1)).isEqualTo(50);
        assertThat(events.get(2).delayNanos()).isEqualTo(50);
        assertThat(events.delayNanos(3)).isZero();
    }

    @Test
    void onlyTheFirstSizeSlotsAreEvents_andTheListCannotBeChanged() {
        Object[] sources = {new byte[][] {utf8("a\n\n")}, new byte[][] {utf8("b\n\n")}, null, null};
        SimEvents events = new SimEvents(sources, new SimEvents.TokenFrame[4], new byte[4], 2, 1, 1);

        assertThat(events).hasSize(2);
        assertThatThrownBy(() -> events.get(2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> events.length(2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> events.delayNanos(-1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> events.add(new SimEvent(0, utf8("c\n\n"))))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void aListOfEventObjectsIsKeptAsItIs() {
        SimEvent first = new SimEvent(5, utf8("data: 1\n\n"));
        SimEvent second = new SimEvent(0, utf8("data: 2\n\n"));
        SimEvents events = SimEvents.of(List.of(first, second));

        assertThat(events.get(0)).isSameAs(first);
        assertThat(events.delayNanos(0)).isEqualTo(5);
        assertThat(events.length(1)).isEqualTo(9);
        assertThat(written(events, 1)).isEqualTo("data: 2\n\n");
        assertThat(SimEvents.of(events)).isSameAs(events);
    }

    @Test
    void aSimulatedChatStreamSendsItsTokensAsTheirOwnEvents_inOrder() {
        SimulatedResponse r = SimTestSupport.answer(io.modelgateway.codecs.Endpoint.CHAT_COMPLETIONS,
                "{\"model\":\"sim-chat\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                "x-sim-output-tokens", "5", "x-sim-ttft-ms", "300", "x-sim-tps", "20");
        SimEvents events = r.streamEvents();

        // The role delta, five tokens, the finish delta and [DONE]; each token waits one interval, the first the TTFT.
        assertThat(events).hasSize(8);
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 5; i++) {
            String e = written(events, i);
            assertThat(e).startsWith("data: {").endsWith("}\n\n").contains("\"delta\":{\"content\":");
            assertThat(events.delayNanos(i)).isEqualTo(50_000_000L); // 20 tokens a second
            text.append(e, e.indexOf("\"content\":") + 11, e.indexOf("\"},\"logprobs\""));
        }
        assertThat(events.delayNanos(0)).isEqualTo(300_000_000L);
        assertThat(events.delayNanos(6)).isZero();
        assertThat(text.toString().trim().split(" ")).hasSize(5);
        assertThat(written(events, 7)).isEqualTo("data: [DONE]\n\n");
    }
}
