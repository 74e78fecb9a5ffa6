package io.modelgateway.core.simulator;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;

/**
 * Epoll when {@code Epoll.isAvailable()}, else NIO. The epoll classes are looked up by name because
 * the netty-bom puts the native epoll jar (and with it {@code netty-transport-classes-epoll}) in
 * runtime scope: present when the server runs, absent when this module compiles.
 */
record ServerTransport(String name, IoHandlerFactory ioHandlerFactory, Class<? extends ServerChannel> channelType) {

    static ServerTransport pick() {
        try {
            Class<?> epoll = Class.forName("io.netty.channel.epoll.Epoll");
            if ((Boolean) epoll.getMethod("isAvailable").invoke(null)) {
                IoHandlerFactory factory = (IoHandlerFactory) Class.forName("io.netty.channel.epoll.EpollIoHandler")
                        .getMethod("newFactory").invoke(null);
                Class<? extends ServerChannel> channel = Class.forName("io.netty.channel.epoll.EpollServerSocketChannel")
                        .asSubclass(ServerChannel.class);
                return new ServerTransport("epoll", factory, channel);
            }
        } catch (ReflectiveOperationException | LinkageError | ClassCastException unavailable) {
            // fall through to NIO
        }
        return nio();
    }

    static ServerTransport nio() {
        return new ServerTransport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
    }
}
