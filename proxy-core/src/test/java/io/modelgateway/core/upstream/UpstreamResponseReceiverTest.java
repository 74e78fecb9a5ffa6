package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UpstreamResponseReceiverTest {
    private static final class Recorder implements UpstreamListener {
        final List<String> calls = new ArrayList<>();

        @Override
        public void onUpstreamMessage(HttpObject msg) {
            calls.add("msg");
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void onUpstreamReadComplete() {
            calls.add("complete");
        }

        @Override
        public void onUpstreamClosed(Throwable cause) {
            calls.add(cause == null ? "closed" : "failed");
        }
    }

    @Test
    void withListener_messagesAndCloseAreDelivered() {
        UpstreamResponseReceiver receiver = new UpstreamResponseReceiver();
        Recorder rec = new Recorder();
        receiver.listener(rec);
        EmbeddedChannel ch = new EmbeddedChannel(receiver);
        ch.writeInbound(new DefaultHttpContent(Unpooled.copiedBuffer(new byte[] {1})));
        ch.close();
        assertThat(rec.calls).containsExactly("msg", "complete", "closed");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void withoutListener_unexpectedDataIsReleasedAndChannelClosed() {
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamResponseReceiver());
        HttpContent c = new DefaultHttpContent(Unpooled.copiedBuffer(new byte[] {1}));
        ch.writeInbound(c);
        assertThat(c.refCnt()).isZero();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void exception_isReportedAsFailure() {
        UpstreamResponseReceiver receiver = new UpstreamResponseReceiver();
        Recorder rec = new Recorder();
        receiver.listener(rec);
        EmbeddedChannel ch = new EmbeddedChannel(receiver);
        ch.pipeline().fireExceptionCaught(new java.io.IOException("reset"));
        assertThat(rec.calls).containsExactly("failed");
        assertThat(ch.isOpen()).isFalse();
    }
}
