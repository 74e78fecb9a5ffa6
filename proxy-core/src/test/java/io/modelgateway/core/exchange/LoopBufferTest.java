package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoopBufferTest {
    /** Unpooled: a released buffer is not handed out again as another, so its count can be read after. */
    private static final ByteBufAllocator ALLOC = new UnpooledByteBufAllocator(true);
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

    @AfterEach
    void stop() throws InterruptedException {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return group.next().submit(task).get(5, TimeUnit.SECONDS);
    }

    @Test
    void aBufferReleasedByItsUser_isLentAgain_empty() throws Exception {
        LoopBuffer loop = new LoopBuffer(256);
        ByteBuf[] seen = onLoop(() -> {
            ByteBuf first = loop.take(ALLOC, 10);
            first.writeBytes("first use".getBytes(StandardCharsets.US_ASCII));
            first.release(); // e.g. the socket took it whole
            ByteBuf second = loop.take(ALLOC, 100);
            ByteBuf[] both = {first, second};
            assertThat(second.readableBytes()).isZero();
            assertThat(second.capacity()).as("made at the kept size, which covers the second use").isEqualTo(256);
            second.release();
            return both;
        });
        assertThat(seen[1]).isSameAs(seen[0]);
        assertThat(seen[0].refCnt()).as("the loop still holds it").isEqualTo(1);
    }

    @Test
    void aBufferStillHeldElsewhere_isNeverOverwritten_andTheLoopKeepsIt() throws Exception {
        LoopBuffer loop = new LoopBuffer(256);
        onLoop(() -> {
            ByteBuf first = loop.take(ALLOC, 10);
            first.writeBytes("a write not done yet".getBytes(StandardCharsets.US_ASCII));
            // not released: a write still waits with it (on io_uring, until a later turn of the loop)
            ByteBuf second = loop.take(ALLOC, 10);
            assertThat(second).isNotSameAs(first);
            assertThat(second.capacity()).as("a buffer of the size asked for, not of the kept size").isEqualTo(10);
            second.writeBytes("another".getBytes(StandardCharsets.US_ASCII));
            assertThat(first.toString(StandardCharsets.US_ASCII)).isEqualTo("a write not done yet");
            assertThat(first.refCnt()).as("the caller's and the loop's").isEqualTo(2);
            first.release(); // the write is done
            second.release();
            assertThat(second.refCnt()).as("never the loop's").isZero();
            ByteBuf third = loop.take(ALLOC, 10);
            assertThat(third).as("the first is still the loop's buffer").isSameAs(first);
            assertThat(third.readableBytes()).isZero();
            third.release();
            return null;
        });
    }

    @Test
    void aBufferThatGrewPastTheKeptSize_orIsTooSmall_isLetGo() throws Exception {
        LoopBuffer loop = new LoopBuffer(64);
        onLoop(() -> {
            ByteBuf first = loop.take(ALLOC, 10);
            first.writeBytes(new byte[200]); // grows
            first.release();
            assertThat(first.refCnt()).isEqualTo(1);
            ByteBuf second = loop.take(ALLOC, 10);
            assertThat(second).isNotSameAs(first);
            assertThat(first.refCnt()).as("released by the loop").isZero();
            second.release();

            ByteBuf big = loop.take(ALLOC, 1000);
            assertThat(big).as("more than the loop's buffer holds: a new one").isNotSameAs(second);
            big.release();
            assertThat(big.refCnt()).as("over the kept size: never held").isZero();
            assertThat(second.refCnt()).as("the loop keeps its own").isEqualTo(1);
            assertThat(loop.take(ALLOC, 10)).isSameAs(second).satisfies(ByteBuf::release);
            return null;
        });
    }

    @Test
    void aChannelWithAnAllocatorOfItsOwn_getsItsBuffersFromIt() throws Exception {
        LoopBuffer loop = new LoopBuffer(128);
        ByteBufAllocator own = new UnpooledByteBufAllocator(true);
        onLoop(() -> {
            ByteBuf shared = loop.take(ALLOC, 10);
            shared.release();
            ByteBuf fromOwn = loop.take(own, 10);
            assertThat(fromOwn).isNotSameAs(shared);
            assertThat(fromOwn.alloc()).isSameAs(own);
            fromOwn.release();
            assertThat(loop.take(own, 10)).as("its buffer is the loop's now, lent to the same allocator")
                    .isSameAs(fromOwn).satisfies(ByteBuf::release);
            return null;
        });
    }

    @Test
    void theLoopsBuffer_isReleasedWhenItsThreadEnds() throws Exception {
        LoopBuffer loop = new LoopBuffer(128);
        ByteBuf held = onLoop(() -> {
            ByteBuf b = loop.take(ALLOC, 10);
            b.release();
            return b;
        });
        assertThat(held.refCnt()).isEqualTo(1);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        assertThat(group.isTerminated()).isTrue();
        assertThat(held.refCnt()).isZero();
    }

    @Test
    void offAnEventLoop_everyTakeIsAPlainBuffer() {
        LoopBuffer loop = new LoopBuffer(128);
        ByteBuf first = loop.take(ALLOC, 10);
        first.release();
        assertThat(first.refCnt()).as("nothing kept on a thread that would not clean it up").isZero();
        ByteBuf second = loop.take(ALLOC, 10);
        assertThat(second.refCnt()).isEqualTo(1);
        second.release();
    }
}
