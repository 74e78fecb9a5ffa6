package io.modelgateway.bench;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** A bench server's bound channel and its event loops: the port it got, and its end. */
public record BoundServer(EventLoopGroup group, Channel channel) {
    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
