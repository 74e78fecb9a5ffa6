package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HostAndPortTest {

    @Test
    void parse_ipv4_keepsHostAndPort() {
        HostAndPort hp = HostAndPort.parse("127.0.0.1:8080");
        assertThat(hp.host()).isEqualTo("127.0.0.1");
        assertThat(hp.port()).isEqualTo(8080);
        assertThat(hp).hasToString("127.0.0.1:8080");
    }

    @Test
    void parse_bracketedIpv6_storesWithoutBracketsAndPrintsWithThem() {
        HostAndPort hp = HostAndPort.parse("[::1]:9000");
        assertThat(hp.host()).isEqualTo("::1");
        assertThat(hp).hasToString("[::1]:9000");
    }

    @Test
    void parse_hostName_isAccepted() {
        assertThat(HostAndPort.parse("gateway.internal:443").host()).isEqualTo("gateway.internal");
    }

    @Test
    void parse_badInput_throwsWithAReason() {
        assertThatThrownBy(() -> HostAndPort.parse("8080")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host:port");
        assertThatThrownBy(() -> HostAndPort.parse("::1:8080")).hasMessageContaining("brackets");
        assertThatThrownBy(() -> HostAndPort.parse("127.0.0.1:70000")).hasMessageContaining("port");
        assertThatThrownBy(() -> HostAndPort.parse("127.0.0.1:")).hasMessageContaining("port");
        assertThatThrownBy(() -> HostAndPort.parse("999.0.0.1:80")).hasMessageContaining("not an IP address");
        assertThatThrownBy(() -> HostAndPort.parse("[zz]:80")).hasMessageContaining("IPv6");
        assertThatThrownBy(() -> HostAndPort.parse(":80")).hasMessageContaining("host");
    }

    @Test
    void isLoopback_loopbackForms_true() {
        assertThat(HostAndPort.parse("127.0.0.1:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("127.3.2.1:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("[::1]:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("[0:0:0:0:0:0:0:1]:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("[::ffff:127.0.0.1]:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("localhost:1").isLoopback()).isTrue();
        assertThat(HostAndPort.parse("LocalHost:1").isLoopback()).isTrue();
    }

    @Test
    void isLoopback_otherAddresses_false() {
        assertThat(HostAndPort.parse("0.0.0.0:1").isLoopback()).isFalse();
        assertThat(HostAndPort.parse("[::]:1").isLoopback()).isFalse();
        assertThat(HostAndPort.parse("10.0.0.1:1").isLoopback()).isFalse();
        assertThat(HostAndPort.parse("128.0.0.1:1").isLoopback()).isFalse();
        assertThat(HostAndPort.parse("gateway.local:1").isLoopback()).isFalse();
        assertThat(HostAndPort.parse("localhost.example.com:1").isLoopback()).isFalse();
    }
}
