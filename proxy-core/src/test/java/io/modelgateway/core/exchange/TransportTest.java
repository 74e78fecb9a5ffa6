package io.modelgateway.core.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

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
}
