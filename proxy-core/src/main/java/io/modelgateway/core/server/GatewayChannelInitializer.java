package io.modelgateway.core.server;

import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.core.auth.KeyAuthenticator;
import io.modelgateway.core.observe.MetricsResponder;
import io.modelgateway.core.observe.ResponseObserver;
import io.modelgateway.core.limit.LimitCheck;
import io.modelgateway.core.route.ExchangeStarter;
import io.modelgateway.core.route.ModelResolver;
import io.modelgateway.core.route.ModelListResponder;
import io.modelgateway.core.config.ServerConfig;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInitializer;
import java.nio.charset.StandardCharsets;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;

/**
 * Builds the server pipeline; reading it top to bottom is the request path:
 * <pre>
 *   request-timeouts  raw bytes: 408 for a request trickled in too slowly, close when idle too long
 *   http-codec        HTTP/1.1 bytes ⇄ HttpObjects (header and line limits → decoder failures)
 *   answer-boundary   tells the whole pipeline when a request was read whole and its answer written whole
 *   head-validator    HTTP version (505), Host (400), absolute-form target → its path
 *   stream-guard      keep-alive pings on idle streams (GD-11); ends answers cleanly when draining
 *   response-observer status, bytes and timings of each answer written, onto its exchange record
 *   body-aggregator   whole request body, up to max_body_bytes (413 otherwise)
 *   pipelining-gate   one request at a time: pipelined ones wait until the answer ahead is complete
 *   metrics           GET /metrics (only when no admin listener serves it)
 *   request-router    health/ready, 404/405, FullHttpRequest → GatewayRequest
 *   key-authenticator gateway key → 401, or the key attached
 *   model-list        GET /api/v1/models
 *   request-validator messages' version header (GD-2), the body peeked: JSON, fields, duplicate keys → 400
 *   model-resolver    the model (404), the key may use it (403), endpoint and settings fit it (400)
 *   limit-check       the key's and model's limits → 429, or the reservation attached
 *   exchange          route to a deployment, forward (retries, fallbacks), stream the answer back
 * </pre>
 * Each request step either lets the request go on, adding what it learned to it, or answers it in the caller's
 * style and releases it; the exchange step is the terminal one.
 * Keep-alive is decided per request: whoever writes a response to a request that asked for
 * {@code Connection: close} (or HTTP/1.0 without keep-alive) closes the connection after it.
 */
public final class GatewayChannelInitializer extends ChannelInitializer<Channel> {
    static final int MAX_INITIAL_LINE = 8192;
    static final int MAX_HEADER_SIZE = 16384;

    private final GatewayContext gateway;
    private final int maxBodyBytes;
    /** Shared, or null when /metrics is served by the admin listener instead. */
    private final MetricsResponder metrics;

    public GatewayChannelInitializer(GatewayContext gateway) {
        this(gateway, null);
    }

    public GatewayChannelInitializer(GatewayContext gateway, MetricsResponder metrics) {
        this.gateway = gateway;
        this.metrics = metrics;
        this.maxBodyBytes = (int) Math.min(Integer.MAX_VALUE, gateway.config().maxBodyBytes());
    }

    @Override
    protected void initChannel(Channel ch) {
        init(ch);
    }

    /** Builds the pipeline of one client connection (public so tests can build it on an EmbeddedChannel). */
    public void init(Channel ch) {
        ServerConfig server = gateway.config().server();
        int cap = gateway.connectionCaps().maxConnections(server);
        if (cap > 0 && gateway.connections().size() >= cap) {
            refuse(ch, "The gateway is at its connection limit; retry shortly.");
            return;
        }
        if (!gateway.connectionCaps().admitFromClient(ch, server.maxConnectionsPerClient())) {
            refuse(ch, "Too many connections from your address; reuse or close some, then retry.");
            return;
        }
        gateway.connections().add(ch); // removed by the group when the channel closes
        ChannelPipeline p = ch.pipeline();
        addHttpHandlers(p, server);
        addRequestHandlers(p);
    }

    /**
     * Past a connection cap (the total, or the client address's): a 503 before the request is even read (a client
     * reads it as the answer to what it sends), then a lingering close so the kernel does not reset it away.
     */
    private static void refuse(Channel ch, String message) {
        byte[] body = ("{\"error\":{\"message\":\"" + message + "\","
                + "\"type\":\"server_error\",\"param\":null,\"code\":\"overloaded\"}}").getBytes(StandardCharsets.US_ASCII);
        String head = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
                + body.length + "\r\nretry-after: 1\r\nretry-after-ms: 1000\r\nconnection: close\r\n\r\n";
        ch.writeAndFlush(Unpooled.wrappedBuffer(head.getBytes(StandardCharsets.US_ASCII), body))
                .addListener(f -> HttpResponses.lingeringClose(ch));
    }

    private void addHttpHandlers(ChannelPipeline p, ServerConfig server) {
        RequestTimeouts timeouts = new RequestTimeouts(server.requestTimeoutMs(), server.idleTimeoutMs());
        p.addLast(PipelineNames.REQUEST_TIMEOUTS, timeouts);
        p.addLast(PipelineNames.HTTP_CODEC, new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(MAX_INITIAL_LINE)
                .setMaxHeaderSize(MAX_HEADER_SIZE)
                .setMaxChunkSize(65536)));
        p.addLast(PipelineNames.ANSWER_BOUNDARY, new AnswerBoundary());
        p.addLast(PipelineNames.HEAD_VALIDATOR, new RequestHeadValidator());
        p.addLast(PipelineNames.STREAM_GUARD, new StreamGuard());
        p.addLast(PipelineNames.RESPONSE_OBSERVER, new ResponseObserver());
        p.addLast(PipelineNames.BODY_AGGREGATOR, new RequestBodyAggregator(maxBodyBytes));
        p.addLast(PipelineNames.PIPELINING_GATE, new PipeliningGate());
    }

    private void addRequestHandlers(ChannelPipeline p) {
        if (metrics != null) {
            p.addLast(PipelineNames.METRICS, metrics);
        }
        p.addLast(PipelineNames.ROUTER, new RequestRouter(gateway::config, gateway::ready, gateway.exchanges()));
        p.addLast(PipelineNames.AUTHENTICATOR, new KeyAuthenticator(gateway.exchanges()));
        p.addLast(PipelineNames.MODEL_LIST, new ModelListResponder(gateway.exchanges()));
        p.addLast(PipelineNames.REQUEST_VALIDATOR, new RequestValidator(gateway.exchanges()));
        p.addLast(PipelineNames.MODEL_RESOLVER, new ModelResolver(gateway.exchanges()));
        p.addLast(PipelineNames.LIMIT_CHECK, new LimitCheck(gateway.limiters(), gateway.spend(), gateway.exchanges()));
        p.addLast(PipelineNames.EXCHANGE, new ExchangeStarter(gateway.routing(), gateway.planner(), gateway.exchanges()));
    }
}
