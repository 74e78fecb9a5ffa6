package io.modelgateway.core.exchange;

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
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.NettyRuntime;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.SystemPropertyUtil;

/**
 * The I/O transport, picked once at run time: Netty's io_uring transport where the kernel offers it (Linux 5.9 or
 * later, not forbidden by {@code kernel.io_uring_disabled} or a seccomp profile), else native epoll, else NIO.
 * {@code -Dgateway.transport=epoll} asks for epoll, {@code nio} (or {@code -Dgateway.noEpoll=true}) for NIO.
 *
 * <p>Why io_uring first (2026-12-01, the same gateway jar on both transports, side by side on one pinned core in
 * front of the bench's upstream, alternating 10 s windows): CPU per request 25-30 % lower on non-stream chat and on
 * a 50-event stream arriving in one write, 13 % lower per paced stream (one event per write), and no difference with
 * every request's limits checked in Redis. A loop turn's reads, writes and waits go to the kernel in one call. An
 * earlier measurement (2026-11-28, before one loop per CPU and the batched Redis checks) had the Redis round trips
 * dearer on io_uring, which is why epoll was the default until then. One case measured better on epoll: one request
 * at a time on one connection (about 10 microseconds less added latency). 10,000 paced streams on one core got about
 * 5 % more events a second on epoll until the stream writer stopped taking a new 8 KiB buffer for each write that
 * io_uring had not yet completed ({@code LoopBuffer}); after that the two read alike. A ring of provided read buffers
 * with one multishot receive per connection was tried and measured no better.
 */
public final class Transport {
    enum Kind { IO_URING, EPOLL, NIO }

    private static final Kind KIND = pick();

    /**
     * Completion-queue entries of an io_uring loop. Netty's default queue (4,096 entries) overflowed with 10,000 open
     * streams on one loop: the kernel keeps what overflows, but Netty logged a warning each time, 1,700 in a minute of
     * {@code scripts/bench streams10k}'s load. 32,768 entries hold a read's and a write's completion for each of
     * sixteen thousand connections in one turn, for 512 KiB per loop; with it that run logged none.
     */
    static final int URING_CQ_SIZE = 32_768;

    private Transport() {
    }

    private static Kind pick() {
        return pick(System.getProperty("gateway.transport", "io_uring"), Boolean.getBoolean("gateway.noEpoll"),
                IoUring.isAvailable(), Epoll.isAvailable());
    }

    /** The transport asked for ({@code io_uring}, {@code epoll} or {@code nio}), falling back to what is there. */
    static Kind pick(String asked, boolean noEpoll, boolean uring, boolean epoll) {
        if (noEpoll || asked.equals("nio")) {
            return Kind.NIO;
        }
        if (!asked.equals("epoll") && uring) {
            return Kind.IO_URING;
        }
        return epoll ? Kind.EPOLL : Kind.NIO;
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

    /**
     * The number of event loops {@link #newGroup} makes when asked for 0: one per CPU this process may run on
     * (the JDK's count, which follows the CPU affinity mask and a container's CPU limit, and
     * {@code -XX:ActiveProcessorCount}), or {@code -Dio.netty.eventLoopThreads} when set. Not Netty's own default
     * of two per CPU: every loop of the gateway does the same kind of work, so a second loop on a CPU only takes
     * turns with the first, and each loop keeps its own upstream connections (and Redis connection). Measured on
     * the bench (the gateway pinned to one CPU), one loop against two: no CPU difference beyond the spread of runs.
     */
    public static int defaultLoops() {
        return Math.max(1, SystemPropertyUtil.getInt("io.netty.eventLoopThreads", NettyRuntime.availableProcessors()));
    }

    /** @param threads event loops; 0 means {@link #defaultLoops()} */
    public static MultiThreadIoEventLoopGroup newGroup(int threads, String name) {
        return newGroup(threads, name, false);
    }

    /**
     * The gateway's own loops: as {@link #newGroup(int, String)}, and on io_uring their timers are posted to the
     * {@link LoopAlarm} (unless {@code -Dgateway.loopAlarm=false}) rather than handed to the kernel with every wait.
     * The simulator, the admin listener and the bench's tools keep Netty's loops as they are.
     */
    public static MultiThreadIoEventLoopGroup newGatewayGroup(int threads, String name) {
        return newGroup(threads, name, LoopAlarm.enabled());
    }

    private static MultiThreadIoEventLoopGroup newGroup(int threads, String name, boolean alarm) {
        int loops = threads > 0 ? threads : defaultLoops();
        IoHandlerFactory factory = switch (KIND) {
            case IO_URING -> alarm ? LoopAlarm.wrap(uringFactory()) : uringFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
        return new MultiThreadIoEventLoopGroup(loops, new DefaultThreadFactory(name, true), factory);
    }

    /** The io_uring loops' handler, with a completion queue of {@link #URING_CQ_SIZE} entries. */
    static IoHandlerFactory uringFactory() {
        return IoUringIoHandler.newFactory(new IoUringIoHandlerConfig().setCqSize(URING_CQ_SIZE));
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
