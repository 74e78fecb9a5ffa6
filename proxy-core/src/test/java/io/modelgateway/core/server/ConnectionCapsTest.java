package io.modelgateway.core.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.ServerConfig;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class ConnectionCapsTest {

    @Test
    void derive_halfOfTheLimitLessAReserve_noneWhenUnknown() {
        assertThat(ConnectionCaps.derive(1024)).isEqualTo((1024 - 256) / 2);
        assertThat(ConnectionCaps.derive(65_536)).isEqualTo((65_536 - 256) / 2);
        assertThat(ConnectionCaps.derive(100)).as("a small limit keeps three quarters for the pairs").isEqualTo((100 - 25) / 2);
        assertThat(ConnectionCaps.derive(1L << 40)).isEqualTo(ConnectionCaps.MAX);
        assertThat(ConnectionCaps.derive(-1)).isZero();
        assertThat(ConnectionCaps.derive(0)).isZero();
    }

    @Test
    void maxConnections_derivedOnlyWhenNotSet_explicitZeroIsNoCap() {
        ConnectionCaps caps = new ConnectionCaps();
        caps.deriveFrom(4096);
        assertThat(caps.maxConnections(ServerConfig.DEFAULT)).isEqualTo((4096 - 256) / 2);
        assertThat(caps.maxConnections(new ServerConfig(0, 0, 30_000, 75_000, 30_000))).isZero();
        assertThat(caps.maxConnections(new ServerConfig(7, 0, 30_000, 75_000, 30_000))).isEqualTo(7);
        assertThat(caps.describe(ServerConfig.DEFAULT))
                .startsWith("connection cap: 1920, derived from the file-descriptor limit 4096")
                .endsWith("per client address: none");
        assertThat(caps.describe(new ServerConfig(0, 0, 30_000, 75_000, 30_000, 8)))
                .isEqualTo("connection cap: none (server.max_connections: 0); per client address: 8");
    }

    @Test
    void thisProcess_hasAKnownLimitAndACap() {
        ConnectionCaps caps = new ConnectionCaps();
        caps.deriveFromProcess();
        long limit = ConnectionCaps.readFileDescriptorLimit();
        assertThat(limit).as("the soft RLIMIT_NOFILE, read on this Unix machine").isPositive();
        assertThat(caps.maxConnections(ServerConfig.DEFAULT)).isEqualTo(ConnectionCaps.derive(limit)).isPositive();
    }

    @Test
    void admitFromClient_withoutAnInetAddress_isNotCounted() {
        EmbeddedChannel ch = new EmbeddedChannel();
        assertThat(new ConnectionCaps().admitFromClient(ch, 1)).isTrue();
        ch.finishAndReleaseAll();
    }
}
