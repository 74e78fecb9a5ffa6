package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SimEventTest {

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void anEventOfPartsIsThosePartsInOrder_asBytesAndWritten() {
        byte[] head = ascii("data: {\"id\":\"x\",\"choices\":[");
        byte[] word = "\" café\"".getBytes(StandardCharsets.UTF_8);
        SimEvent e = new SimEvent(7, new byte[][] {head, ascii("{\"delta\":{\"content\":"), word, ascii("}}]"),
            ascii("}\n\n")});
        String expected = "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\" café\"}}]}\n\n";

        assertThat(new String(e.bytes(), StandardCharsets.UTF_8)).isEqualTo(expected);
        assertThat(e.length()).isEqualTo(expected.getBytes(StandardCharsets.UTF_8).length);
        assertThat(e.delayNanos()).isEqualTo(7);
        ByteBuf out = Unpooled.buffer();
        try {
            out.writeByte('!');
            e.writeTo(out);
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("!" + expected);
        } finally {
            out.release();
        }
        // The shared parts are never written to.
        assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("data: {\"id\":\"x\",\"choices\":[");
    }

    @Test
    void anEventOfOneArrayIsThatArray() {
        byte[] bytes = ascii("data: [DONE]\n\n");
        SimEvent e = new SimEvent(0, bytes);

        assertThat(e.bytes()).isSameAs(bytes);
        assertThat(e.length()).isEqualTo(bytes.length);
    }
}
