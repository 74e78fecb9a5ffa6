package io.modelgateway.core.exchange;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringDatagramChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The I/O transport, picked once at run time: native epoll where the platform has it, else NIO;
 * {@code -Dgateway.transport=io_uring} asks for io_uring (when the kernel offers it), {@code nio} for NIO, as does
 * {@code -Dgateway.noEpoll=true}. io_uring is not the default: on the bench it cost the Redis limit checks' small
 * round trips more CPU than epoll (7.4k against 12.0k requests/s with Redis limits, the same machine and load).
 */
public final class Transport {
    private enum Kind { IO_URING, EPOLL, NIO }

    private static final Kind KIND = pick();

    private Transport() {
    }

    private static Kind pick() {
        String asked = System.getProperty("gateway.transport", "epoll");
        if (Boolean.getBoolean("gateway.noEpoll") || asked.equals("nio")) {
            return Kind.NIO;
        }
        if (asked.equals("io_uring") && IoUring.isAvailable()) {
            return Kind.IO_URING;
        }
        return Epoll.isAvailable() ? Kind.EPOLL : Kind.NIO;
    }

    public static boolean isNative() {
        return KIND != Kind.NIO;
    }

    public static String name() {
        return switch (KIND) {
            case IO_URING -> "io_uring";
            case EPOLL -> "epoll";
            case NIO -> "nio";
        };
    }

    public static EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory factory = switch (KIND) {
            case IO_URING -> IoUringIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), factory);
    }

    public static Class<? extends ServerChannel> serverChannel() {
        return switch (KIND) {
            case IO_URING -> IoUringServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    public static Class<? extends SocketChannel> socketChannel() {
        return switch (KIND) {
            case IO_URING -> IoUringSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case NIO -> NioSocketChannel.class;
        };
    }

    public static Class<? extends DatagramChannel> datagramChannel() {
        return switch (KIND) {
            case IO_URING -> IoUringDatagramChannel.class;
            case EPOLL -> EpollDatagramChannel.class;
            case NIO -> NioDatagramChannel.class;
        };
    }
}
