package io.modelgateway.core.testing;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.auth.KeyAuthenticator;
import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.limit.LimitCheck;
import io.modelgateway.core.route.ExchangeStarter;
import io.modelgateway.core.route.ModelResolver;
import io.modelgateway.core.server.RequestValidator;
import io.netty.channel.ChannelHandler;
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

    /** The request steps after routing, as the initializer adds them: authenticate, validate, resolve, limit, exchange. */
    public static ChannelHandler[] steps(GatewayContext context) {
        return new ChannelHandler[] {
                new KeyAuthenticator(context.exchanges()),
                new RequestValidator(context.exchanges()),
                new ModelResolver(context.exchanges()),
                new LimitCheck(context.limiters(), context.exchanges()),
                new ExchangeStarter(context.routing(), context.planner(), context.exchanges())};
    }

    /**
     * An API request as the router hands it on (its record started, served under the context's config), with the
     * test key unless {@code headers} name other credentials.
     */
    public static GatewayRequest apiRequest(GatewayContext context, Endpoint e, String body, String... headers) {
        boolean credentials = false;
        for (int i = 0; i < headers.length; i += 2) {
            credentials |= headers[i].equalsIgnoreCase("authorization") || headers[i].equalsIgnoreCase("x-api-key");
        }
        String[] all = headers;
        if (!credentials) {
            all = new String[headers.length + 2];
            all[0] = "authorization";
            all[1] = "Bearer " + TestGateway.KEY;
            System.arraycopy(headers, 0, all, 2, headers.length);
        }
        GatewayRequest r = new GatewayRequest(request(HttpMethod.POST, e.gatewayPath(), body, all), e, e.style(),
                "req_x", true, 0);
        r.config(context.config());
        context.exchanges().tryStart(0);
        return r;
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
