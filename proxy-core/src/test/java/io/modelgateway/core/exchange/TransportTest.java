package io.modelgateway.core.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.modelgateway.core.exchange.Transport.Kind;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The event loops' count, and which transport {@code -Dgateway.transport} (and {@code -Dgateway.noEpoll}) picks. */
class TransportTest {

    @Test
    void zeroLoops_meansOnePerCpuTheJdkCounts_notNettysTwo() throws Exception {
        // The JDK's own count (affinity mask, container limit) is the reference, not Netty's helper.
        int cpus = Runtime.getRuntime().availableProcessors();
        MultiThreadIoEventLoopGroup group = Transport.newGroup(0, "transport-test");
        try {
            assertEquals(cpus, group.executorCount());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void anAskedNumber_isKept() throws Exception {
        MultiThreadIoEventLoopGroup group = Transport.newGroup(3, "transport-test");
        try {
            assertEquals(3, group.executorCount());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void byDefault_ioUringWhereOffered_elseEpoll_elseNio() {
        assertEquals(Kind.IO_URING, Transport.pick("io_uring", false, true, true));
        assertEquals(Kind.EPOLL, Transport.pick("io_uring", false, false, true));
        assertEquals(Kind.NIO, Transport.pick("io_uring", false, false, false));
    }

    @Test
    void epollAsked_isEpoll_evenWhereIoUringIsOffered() {
        assertEquals(Kind.EPOLL, Transport.pick("epoll", false, true, true));
        assertEquals(Kind.NIO, Transport.pick("epoll", false, true, false));
    }

    @Test
    void nioAsked_isNio_eitherWay() {
        assertEquals(Kind.NIO, Transport.pick("nio", false, true, true));
        assertEquals(Kind.NIO, Transport.pick("io_uring", true, true, true));
        assertEquals(Kind.NIO, Transport.pick("epoll", true, true, true));
    }

    /** The suite's second pass (proxy-core's pom, execution "epoll") asks for epoll: this shows it got it. */
    @Test
    void thisProcess_runsWhatItAskedFor() {
        String asked = System.getProperty("gateway.transport", "io_uring");
        String expected = asked.equals("epoll") || !IoUring.isAvailable() ? (Epoll.isAvailable() ? "epoll" : "nio")
                : "io_uring";
        assertEquals(expected, Transport.name());
    }
}
