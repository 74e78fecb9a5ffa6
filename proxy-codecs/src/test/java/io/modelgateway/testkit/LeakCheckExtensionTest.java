package io.modelgateway.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** Proves the kit works: a buffer dropped without release is reported. */
class LeakCheckExtensionTest {
    @Test
    void droppedBuffer_isReported() {
        LeakRecorder.collect(); // start clean
        leakOne();
        assertThat(LeakRecorder.collect()).anySatisfy(l -> assertThat(l).contains("LEAK"));
    }

    @Test
    void releasedBuffer_isNotReported() {
        LeakRecorder.collect();
        ByteBuf b = Unpooled.directBuffer(16);
        b.writeInt(1);
        b.release();
        assertThat(LeakRecorder.collect()).isEmpty();
    }

    private static void leakOne() {
        ByteBuf b = Unpooled.directBuffer(16);
        b.writeInt(42);
        b = null; // dropped on purpose
    }
}
