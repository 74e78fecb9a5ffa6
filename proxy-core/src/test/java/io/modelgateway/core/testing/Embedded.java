package io.modelgateway.core.testing;

import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.upstream.UpstreamPools;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Helpers for EmbeddedChannel tests of single handlers. */
public final class Embedded {
    private Embedded() {
    }

    /** A context on the simulator test config; close its pools when done. */
    public static GatewayContext context() throws Exception {
        return new GatewayContext(ConfigLoader.parse(TestGateway.simulatorConfig(), "test.yaml",
                Map.of("GATEWAY_KEY", TestGateway.KEY), "127.0.0.1:0"), new UpstreamPools());
    }

    public static FullHttpRequest request(HttpMethod method, String uri, String body, String... headers) {
        FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, uri,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        r.headers().set("content-type", "application/json");
        r.headers().setInt("content-length", r.content().readableBytes());
        for (int i = 0; i + 1 < headers.length; i += 2) {
            r.headers().set(headers[i], headers[i + 1]);
        }
        return r;
    }

    /** The body of a response as text; releases the response. */
    public static String body(FullHttpResponse r) {
        try {
            return r.content().toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
        }
    }
}
