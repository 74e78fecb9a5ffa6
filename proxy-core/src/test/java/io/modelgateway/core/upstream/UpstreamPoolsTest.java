package io.modelgateway.core.upstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.resolver.NoopAddressResolverGroup;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** How an upstream's host is reached: an IP address without any resolver, a name through the loop's DNS resolver. */
class UpstreamPoolsTest {

    @Test
    void anIpAddress_needsNoResolver_aNameGetsTheDnsOne() {
        try (UpstreamPools pools = new UpstreamPools()) {
            assertSame(NoopAddressResolverGroup.INSTANCE, resolverOf(pools, "127.0.0.1"));
            assertSame(NoopAddressResolverGroup.INSTANCE, resolverOf(pools, "[::1]")); // URI.getHost()'s IPv6 form
            assertNotSame(NoopAddressResolverGroup.INSTANCE, resolverOf(pools, "api.openai.com"));
            assertNotSame(NoopAddressResolverGroup.INSTANCE, resolverOf(pools, "localhost"));
        }
    }

    private static Object resolverOf(UpstreamPools pools, String host) {
        return pools.resolverFor(UpstreamPools.address(host, 443));
    }

    @Test
    void anIpAddress_isAlreadyResolved_aNameIsLeftForTheResolver() {
        InetSocketAddress v4 = UpstreamPools.address("10.1.2.3", 8443);
        assertFalse(v4.isUnresolved());
        assertArrayEquals(new byte[] {10, 1, 2, 3}, v4.getAddress().getAddress());
        assertEquals(8443, v4.getPort());

        InetSocketAddress v6 = UpstreamPools.address("[::1]", 443);
        assertFalse(v6.isUnresolved());
        assertTrue(v6.getAddress().isLoopbackAddress());

        InetSocketAddress name = UpstreamPools.address("api.anthropic.com", 443);
        assertTrue(name.isUnresolved());
        assertEquals("api.anthropic.com", name.getHostString());
    }
}
