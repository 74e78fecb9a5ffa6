package io.modelgateway.core.server;

import io.modelgateway.core.exchange.AnswerStart;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.ChunkOut;
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
import io.modelgateway.core.config.Http2Config;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2RemoteFlowController;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.UniformStreamByteDistributor;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;

/**
 * Builds the server pipeline; reading it top to bottom is the request path. On HTTP/1.1:
 * <pre>
 *   request-timeouts  raw bytes: 408 for a request trickled in too slowly, close when idle too long
 *   http-codec        HTTP/1.1 bytes ⇄ HttpObjects, ClientHttpCodec (header and line limits → decoder failures)
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
 *
 * <p>Before the protocol is known: on a TLS listener {@code tls} (the {@link ServerTls}'s current context) and
 * {@code alpn}, which builds the HTTP/1.1 pipeline above or the HTTP/2 one below once the handshake agreed on one;
 * on a plain listener with h2c, {@code h2c-detector}, which picks by the connection's first bytes. HTTP/2 has a
 * connection pipeline and, per stream, a child channel whose pipeline is the request path above from
 * {@code answer-boundary} on, so every step, the answer writer and the stream relay are the same:
 * <pre>
 *   connection: [tls] h2-codec (frames, flow control, SETTINGS caps, reset / CONTINUATION / empty-frame limits)
 *               → h2-flush (the streams' flushes of one turn of the event loop as one)
 *               → h2-connection (idle timeout, SETTINGS / PING flood, drain → GOAWAY) → h2-multiplex (one channel per stream)
 *   stream:     h2-stream-codec (frames ⇄ HttpObjects) → stream-timeout (408 for a body trickled in)
 *               → answer-boundary → head-validator → … → body-aggregator → metrics → … → exchange
 *               (no pipelining gate: a stream carries one request)
 * </pre>
 * A stream's writability follows its flow-control window (and the connection's), so an exchange's backpressure
 * pauses only its own upstream; a stream the client resets closes its channel, which cancels its exchange.
 * Keep-alive is decided per request: whoever writes a response to a request that asked for
 * {@code Connection: close} (or HTTP/1.0 without keep-alive) closes the connection after it.
 */
public final class GatewayChannelInitializer extends ChannelInitializer<Channel> {
    static final int MAX_INITIAL_LINE = 8192;
    static final int MAX_HEADER_SIZE = 16384;

    /** Longest a TLS handshake may take (or {@code request_timeout_ms}, when shorter). */
    static final long MAX_HANDSHAKE_MS = 10_000;
    /** Stream resets a client may send (or make the gateway send) per window before its connection is closed. */
    static final int MAX_RESETS_PER_WINDOW = 200;
    static final int RESET_WINDOW_SECONDS = 30;
    /** Small CONTINUATION frames allowed in one header block (CONTINUATION flood). */
    static final int MAX_SMALL_CONTINUATIONS = 16;
    /** Control frames (SETTINGS and PING acknowledgements, resets) queued for a peer that does not read them. */
    static final int MAX_QUEUED_CONTROL_FRAMES = 1000;

    /** Stream flushes held back on an HTTP/2 connection before one is let through regardless. */
    static final int MAX_HELD_FLUSHES = 64;

    private final GatewayContext gateway;
    private final int maxBodyBytes;
    /** Shared, or null when /metrics is served by the admin listener instead. */
    private final MetricsResponder metrics;
    /** The listener's TLS, or null for plain HTTP. */
    private final ServerTls tls;
    private final Http2Config http2;
    /**
     * The stateless steps, one instance each for every connection and stream of this listener: an HTTP/2 stream
     * builds its pipeline when it opens, so each handler not made anew is an allocation less per request there.
     */
    private final AnswerBoundary answerBoundary = new AnswerBoundary();
    private final RequestRouter router;
    private final KeyAuthenticator authenticator;
    private final ModelListResponder modelList;
    private final RequestValidator validator;
    private final ModelResolver resolver;
    private final PriorKnowledgeDetector.Protocols protocols = new PriorKnowledgeDetector.Protocols() {
        @Override
        public void http2(ChannelHandlerContext ctx) {
            addHttp2Handlers(ctx.pipeline());
        }

        @Override
        public void http1(ChannelHandlerContext ctx) {
            ServerConfig server = gateway.config().server();
            addHttpHandlers(ctx.pipeline(), server);
            addRequestHandlers(ctx.pipeline());
        }
    };

    public GatewayChannelInitializer(GatewayContext gateway) {
        this(gateway, null);
    }

    public GatewayChannelInitializer(GatewayContext gateway, MetricsResponder metrics) {
        this(gateway, metrics, null);
    }

    /**
     * @param tls the listener's TLS, or null for plain HTTP (HTTP/2 settings come from the config's {@code http2})
     */
    public GatewayChannelInitializer(GatewayContext gateway, MetricsResponder metrics, ServerTls tls) {
        this.gateway = gateway;
        this.metrics = metrics;
        this.tls = tls;
        this.http2 = gateway.config().http2();
        this.maxBodyBytes = (int) Math.min(Integer.MAX_VALUE, gateway.config().maxBodyBytes());
        this.router = new RequestRouter(gateway::config, gateway::ready, gateway.exchanges());
        this.authenticator = new KeyAuthenticator(gateway.exchanges());
        this.modelList = new ModelListResponder(gateway.exchanges());
        this.validator = new RequestValidator(gateway.exchanges());
        this.resolver = new ModelResolver(gateway.exchanges());
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
        if (tls != null) {
            p.addLast(PipelineNames.TLS, tls.newHandler(ch, Math.min(MAX_HANDSHAKE_MS, server.requestTimeoutMs())));
            p.addLast(PipelineNames.ALPN, new ProtocolNegotiator(protocols));
        } else if (http2.enabled() && http2.cleartext()) {
            p.addLast(PipelineNames.H2C_DETECTOR, new PriorKnowledgeDetector(protocols, server.requestTimeoutMs()));
        } else {
            addHttpHandlers(p, server);
            addRequestHandlers(p);
        }
    }

    /**
     * Past a connection cap (the total, or the client address's): a 503 before the request is even read (a client
     * reads it as the answer to what it sends), then a lingering close so the kernel does not reset it away.
     */
    private void refuse(Channel ch, String message) {
        if (tls != null) {
            ch.close(); // no plain-text answer on a TLS port, and a handshake is what the cap is there to spare
            return;
        }
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
        p.addLast(PipelineNames.CHUNK_FRAMES, ChunkEntry.INSTANCE);
        p.channel().attr(ChunkOut.KEY).set(new ChunkOut(p.context(PipelineNames.CHUNK_FRAMES)));
        p.addLast(PipelineNames.HTTP_CODEC, new ClientHttpCodec(clientDecoderConfig()));
        addAnswerHandlers(p, false);
    }

    /** How a client's HTTP/1.1 requests are read: their limits, and headers checked as they are decoded. */
    public static HttpDecoderConfig clientDecoderConfig() {
        return new HttpDecoderConfig()
                .setHeadersFactory(ArrayHttpHeaders.VALIDATING)
                .setTrailersFactory(ArrayHttpHeaders.VALIDATING_TRAILERS)
                .setMaxInitialLineLength(MAX_INITIAL_LINE)
                .setMaxHeaderSize(MAX_HEADER_SIZE)
                .setMaxChunkSize(65536);
    }

    /**
     * From the answer boundary to the body aggregator, the same on an HTTP/1.1 connection and an HTTP/2 stream; then,
     * on HTTP/1.1 only, the pipelining gate (an HTTP/2 stream carries one request).
     */
    private void addAnswerHandlers(ChannelPipeline p, boolean http2Stream) {
        p.addLast(PipelineNames.ANSWER_BOUNDARY, answerBoundary);
        p.addLast(PipelineNames.HEAD_VALIDATOR, new RequestHeadValidator(http2Stream));
        p.addLast(PipelineNames.STREAM_GUARD, new StreamGuard());
        p.addLast(PipelineNames.RESPONSE_OBSERVER, new ResponseObserver());
        p.addLast(PipelineNames.BODY_AGGREGATOR, new RequestBodyAggregator(maxBodyBytes));
        // What follows is inbound only (the request steps): answers are written from here on.
        p.channel().attr(AnswerStart.KEY).set(p.context(PipelineNames.BODY_AGGREGATOR));
        if (!http2Stream) {
            p.addLast(PipelineNames.PIPELINING_GATE, new PipeliningGate());
        }
    }

    /** The connection pipeline of HTTP/2 (after {@code tls} or in place of the h2c detector). */
    private void addHttp2Handlers(ChannelPipeline p) {
        ServerConfig server = gateway.config().server();
        Http2Settings settings = Http2Settings.defaultSettings()
                .maxConcurrentStreams(http2.maxConcurrentStreams())
                .maxHeaderListSize(http2.maxHeaderListSize());
        Http2FrameCodec codec = new ServerCodecBuilder()
                .initialSettings(settings)
                .validateHeaders(true)
                // Values new with every answer are not added to the HPACK table (ChangingHeaders).
                .headerSensitivityDetector(ChangingHeaders.INSTANCE)
                // PING and SETTINGS are answered by the connection guard, which stops answering a flood.
                .autoAckPingFrame(false)
                .autoAckSettingsFrame(false)
                // Rapid reset (CVE-2023-44487): a client's resets, and the resets it makes the gateway send.
                .decoderEnforceMaxRstFramesPerWindow(MAX_RESETS_PER_WINDOW, RESET_WINDOW_SECONDS)
                .encoderEnforceMaxRstFramesPerWindow(MAX_RESETS_PER_WINDOW, RESET_WINDOW_SECONDS)
                // CONTINUATION flood: many small frames in one header block (large ones hit the header list size).
                .decoderEnforceMaxSmallContinuationFrames(MAX_SMALL_CONTINUATIONS)
                .decoderEnforceMaxConsecutiveEmptyDataFrames(2)
                // Floods of frames the gateway must answer, from a peer that does not read the answers.
                .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
                .gracefulShutdownTimeoutMillis(Math.max(1000, server.drainTimeoutMs()))
                .build();
        p.addLast(PipelineNames.H2_CODEC, codec);
        // A stream's answer is flushed when its upstream's read wrote it, on that upstream's channel: answers of
        // several streams of one connection that arrive in the same turn of the event loop leave in one TLS record
        // and one write instead of one each (flushed when the turn's I/O is done, or at the end of this
        // connection's own read); a cap on held flushes bounds what waits.
        p.addLast(PipelineNames.H2_FLUSH, new FlushConsolidationHandler(MAX_HELD_FLUSHES, true));
        p.addLast(PipelineNames.H2_CONNECTION, new Http2ConnectionGuard(server.idleTimeoutMs()));
        p.addLast(PipelineNames.H2_MULTIPLEX, new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel stream) {
                initStream(stream);
            }
        }));
    }

    /**
     * Netty's HTTP/2 codec builder for a server connection whose streams share the client's send window evenly
     * (Netty's {@code UniformStreamByteDistributor}) instead of by the priority tree that RFC 9113 deprecated: the
     * weighted distributor keeps a priority queue of the streams and re-sorts it on every flush (8.7 µs per stream64
     * request over h2 in `scripts/bench tls --profile`, commit 532ecc0). The connection is made here, a server's
     * (the builder then takes server and reserved streams from it).
     */
    private static final class ServerCodecBuilder extends Http2FrameCodecBuilder {
        ServerCodecBuilder() {
            Http2Connection connection = new DefaultHttp2Connection(true);
            connection.remote().flowController(new DefaultHttp2RemoteFlowController(connection,
                    new UniformStreamByteDistributor(connection)));
            connection(connection);
        }
    }

    /** The pipeline of one HTTP/2 stream: the request path from the answer boundary on (public for tests). */
    public void initStream(Channel stream) {
        Http2ConnectionGuard guard = stream.parent() == null ? null
                : (Http2ConnectionGuard) stream.parent().pipeline().get(PipelineNames.H2_CONNECTION);
        if (guard != null) {
            guard.streamOpened(stream);
        }
        // The same watermarks as a connection's: the exchange pauses its upstream past 64 KiB not yet sent.
        stream.config().setWriteBufferWaterMark(new WriteBufferWaterMark(32 * 1024, 64 * 1024));
        ChannelPipeline p = stream.pipeline();
        p.addLast(PipelineNames.H2_STREAM_CODEC, Http2StreamCodec.INSTANCE);
        p.addLast(PipelineNames.STREAM_TIMEOUT, new StreamRequestTimeout(gateway.config().server().requestTimeoutMs()));
        addAnswerHandlers(p, true);
        addRequestHandlers(p);
    }

    private void addRequestHandlers(ChannelPipeline p) {
        if (metrics != null) {
            p.addLast(PipelineNames.METRICS, metrics);
        }
        p.addLast(PipelineNames.ROUTER, router);
        p.addLast(PipelineNames.AUTHENTICATOR, authenticator);
        p.addLast(PipelineNames.MODEL_LIST, modelList);
        p.addLast(PipelineNames.REQUEST_VALIDATOR, validator);
        p.addLast(PipelineNames.MODEL_RESOLVER, resolver);
        p.addLast(PipelineNames.LIMIT_CHECK, new LimitCheck(gateway.limiters(), gateway.spend(), gateway.exchanges()));
        p.addLast(PipelineNames.EXCHANGE, new ExchangeStarter(gateway.routing(), gateway.planner(), gateway.exchanges()));
    }
}
