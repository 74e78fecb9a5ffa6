package io.modelgateway.core.route;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.BodySplicer;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.codecs.translate.EmbeddingsBase64;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.TranslatedRequest;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ModelType;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.limit.Admission;
import io.modelgateway.core.observe.ExchangeRecord;
import io.modelgateway.core.observe.Outcome;
import io.modelgateway.core.server.GatewayContext;
import io.modelgateway.core.server.GatewayRequest;
import io.modelgateway.core.server.HttpResponses;
import io.modelgateway.core.simulator.SimulatorExchange;
import io.modelgateway.core.upstream.AttemptHook;
import io.modelgateway.core.upstream.Exchange;
import io.modelgateway.core.upstream.ProxyExchange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Terminal handler of the server pipeline. For each authenticated {@link GatewayRequest}: checks the
 * Anthropic version header (GD-2), peeks and validates the body, resolves the model (404), the key's
 * permission (403) and the endpoint/model kind (400), admits it against the limits, and starts its exchange: a
 * {@link RetryingExchange} that balances, retries and falls back over the model's deployments, or — for a model
 * with one deployment, no retries and no fallback — the single exchange with that provider directly. One exchange
 * runs at a time per connection: the {@code PipeliningGate} in front passes pipelined
 * requests one by one (and pauses reading); a request arriving while one is active anyway waits here. The request
 * is released when its exchange ends.
 */
public final class ExchangeHandler extends ChannelInboundHandlerAdapter {
    private static final Pattern VERSION_DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");
    private static final String FIRST_VERSION = "2023-06-01";
    /** The first version date whose messages may carry {@code role: "system"} (contract 5.11). */
    private static final String SYSTEM_ROLE_VERSION = "2026-10-21";
    /** The version header and its alias, in the order a first value is taken from. */
    private static final AsciiString[] VERSION_HEADERS = {
            AsciiString.cached("anthropic-version"), AsciiString.cached("vendor-version")};

    private final GatewayContext gateway;
    private final ArrayDeque<GatewayRequest> waiting = new ArrayDeque<>(2);
    /** Where every exchange of this connection reports its end (one object, not one per request). */
    private final Consumer<Outcome> onDone = this::exchangeDone;
    private Exchange active;
    private GatewayRequest activeRequest;
    private ChannelHandlerContext ctx;

    public ExchangeHandler(GatewayContext gateway) {
        this.gateway = gateway;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof GatewayRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (active != null) {
            waiting.add(request); // only without the pipelining gate in front (it passes one request at a time)
            return;
        }
        begin(request);
    }

    private void begin(GatewayRequest request) {
        request.touch("exchange");
        Exchange exchange;
        try {
            exchange = prepare(request);
        } catch (RuntimeException e) {
            java.util.logging.Logger.getLogger(ExchangeHandler.class.getName())
                    .log(java.util.logging.Level.WARNING, "request " + request.requestId() + " failed", e);
            exchange = null;
            if (request.refCnt() > 0 && !request.record().ended()) {
                respond(request, GatewayError.of(ErrorKind.INTERNAL, "The gateway failed to process the request."));
            }
        }
        if (exchange != null) {
            active = exchange;
            activeRequest = request;
            exchange.start();
        }
    }

    /** Validates and routes; answers and releases the request itself when it can go no further. */
    private Exchange prepare(GatewayRequest request) {
        Endpoint endpoint = request.endpoint();
        boolean systemRole = false;
        if (endpoint == Endpoint.MESSAGES) {
            GatewayError versionError = checkVersion(request);
            if (versionError != null) {
                return respond(request, versionError);
            }
            systemRole = request.anthropicVersion().trim().compareTo(SYSTEM_ROLE_VERSION) >= 0;
        }
        RequestPeek peek = RequestPeek.peek(endpoint, request.body(), systemRole);
        if (!peek.ok()) {
            return respond(request, peek.error());
        }
        GatewayConfig config = gateway.config();
        ModelConfig model = config.model(peek.model());
        if (model == null) {
            return respond(request, new GatewayError(ErrorKind.NOT_FOUND, request.style() == ApiStyle.ANTHROPIC
                    ? "model: " + abbreviate(peek.model())
                    : "The model `" + abbreviate(peek.model()) + "` does not exist or you do not have access to it.",
                    "model", "model_not_found"));
        }
        ExchangeRecord record = request.record();
        record.model(model.name());
        record.stream(peek.stream());
        if (!request.key().allowsModel(model.name())) {
            return respond(request, new GatewayError(ErrorKind.PERMISSION, "This key is not allowed to use the model `"
                    + model.name() + "`.", "model", "model_not_allowed"));
        }
        boolean wantsEmbedding = endpoint == Endpoint.EMBEDDINGS;
        if (wantsEmbedding != (model.type() == ModelType.EMBEDDING)) {
            return respond(request, GatewayError.invalid(wantsEmbedding
                    ? "The model `" + model.name() + "` is not an embedding model."
                    : "The model `" + model.name() + "` is an embedding model and cannot be used on this endpoint.",
                    "model", "unsupported_model"));
        }
        if (endpoint == Endpoint.MESSAGES && model.noTemperature() && peek.hasTemperature()) {
            return respond(request, GatewayError.invalid("temperature: the model `" + model.name()
                    + "` does not support temperature.", "temperature", "unsupported_parameter")); // GD-19
        }
        if (wantsEmbedding && peek.dimensions() > 0 && !model.supportsDimensions()) {
            return respond(request, GatewayError.invalid("The model `" + model.name() + "` does not support "
                    + "'dimensions'.", "dimensions", "unsupported_parameter"));
        }
        long inputEstimate = Math.max(1, request.body().readableBytes() / 4);
        Admission admission = gateway.limiter().admit(request.key(), model,
                inputEstimate + outputEstimate(endpoint, peek, model));
        request.admission(admission, inputEstimate);
        if (!admission.admitted()) {
            record.limit(admission.refusedLimit());
            return respond(request, admission.error(), Outcome.LIMITED);
        }
        ModelRoute route = gateway.routing().table(config).route(model.name());
        try {
            if (route.singleAttempt()) {
                // One deployment, no retries, no fallback: the exchange is the attempt, with nothing around it.
                DeploymentConfig deployment = model.deployments().get(0);
                record.deployment(deployment.provider().name(), deployment.upstreamModel());
                record.newAttempt();
                return attempt(request, peek, model, deployment, AttemptHook.NONE, onDone);
            }
            RetryingExchange exchange = new RetryingExchange(ctx, request, route, new Attempts(request, peek), onDone);
            exchange.prepare();
            return exchange;
        } catch (TranslationException e) {
            return respond(request, e.error());
        }
    }

    /**
     * GD-2: a messages request names its API version in {@code anthropic-version}, or in {@code vendor-version}
     * (the neutral name the API specification uses, accepted as an alias). Every value sent, under either name,
     * must be the same version — else 400, since the gateway would check one and could forward another — and it
     * must be {@value #FIRST_VERSION} or a later {@code YYYY-MM-DD}. On success the value as sent is kept on the
     * request (what an Anthropic-type upstream gets) and null is returned.
     */
    static GatewayError checkVersion(GatewayRequest request) {
        String version = null;
        AsciiString from = null;
        for (AsciiString name : VERSION_HEADERS) {
            Iterator<String> values = request.headers().valueStringIterator(name);
            while (values.hasNext()) {
                String v = values.next();
                if (version == null) {
                    version = v;
                    from = name;
                } else if (!v.trim().equals(version.trim())) {
                    return GatewayError.invalid((from == name ? "two " + name + " headers" : from + " and " + name)
                            + " carry different versions ('"
                            + abbreviate(version.trim()) + "', '" + abbreviate(v.trim()) + "'); send one version.",
                            null, "invalid_value");
                }
            }
        }
        if (version == null || version.isBlank()) {
            return GatewayError.invalid("anthropic-version: header is required (vendor-version is accepted as an "
                    + "alias)", null, "missing_required_header");
        }
        String trimmed = version.trim();
        if (!VERSION_DATE.matcher(trimmed).matches() || trimmed.compareTo(FIRST_VERSION) < 0) {
            return GatewayError.invalid(from + ": '" + abbreviate(trimmed)
                    + "' is not a supported version; use 2023-06-01 or a later date.", null, "invalid_value");
        }
        request.anthropicVersion(version);
        return null;
    }

    /** The attempts of one request, for its {@link RetryingExchange}. */
    private final class Attempts implements AttemptFactory {
        private final GatewayRequest request;
        private final RequestPeek peek;

        Attempts(GatewayRequest request, RequestPeek peek) {
            this.request = request;
            this.peek = peek;
        }

        @Override
        public Exchange create(ModelConfig model, DeploymentConfig deployment, AttemptHook hook,
                Consumer<Outcome> onDone) throws TranslationException {
            return attempt(request, peek, model, deployment, hook, onDone);
        }

        @Override
        public boolean accepts(ModelConfig model) {
            return servable(request.endpoint(), peek, model);
        }
    }

    /**
     * Whether {@code model} would have taken this request past the checks that depend on the model's settings
     * (done above for the requested model): the test a fallback model passes before a request falls back to it.
     */
    static boolean servable(Endpoint endpoint, RequestPeek peek, ModelConfig model) {
        if (endpoint == Endpoint.MESSAGES && model.noTemperature() && peek.hasTemperature()) {
            return false;
        }
        return !(endpoint == Endpoint.EMBEDDINGS && peek.dimensions() > 0 && !model.supportsDimensions());
    }

    /**
     * One exchange of the request with one deployment of {@code model}: in-process simulator, translated, or
     * pass-through (spliced where the deployment's settings differ from the caller's bytes). Not started.
     */
    private Exchange attempt(GatewayRequest request, RequestPeek peek, ModelConfig model, DeploymentConfig deployment,
            AttemptHook hook, Consumer<Outcome> onDone) throws TranslationException {
        Endpoint endpoint = request.endpoint();
        boolean wantsEmbedding = endpoint == Endpoint.EMBEDDINGS;
        ProviderConfig provider = deployment.provider();
        if (provider.type() == ProviderType.SIMULATOR) {
            return new SimulatorExchange(ctx, request, gateway.simulator(provider), peek, deployment.upstreamModel(),
                    provider.timeouts().streamIdleMs(), hook, onDone);
        }
        if (provider.type().style() != endpoint.style()) {
            TranslatedRequest translated = Translations.request(ctx.alloc(), request, model, deployment);
            return new ProxyExchange(ctx, request, provider, gateway.pools(), gateway.config().upstreamLimits(),
                    gateway.collectedBudget(), translated.body(), translated.response(), false, hook, onDone);
        }
        ResponseTranslator translator = null;
        List<BodySplicer.Edit> edits = new ArrayList<>(3);
        if (!deployment.upstreamModel().equals(peek.model())) {
            edits.add(BodySplicer.string(peek.modelStart(), peek.modelEnd(), deployment.upstreamModel()));
        }
        if (wantsEmbedding && model.encodeBase64() && "base64".equals(peek.encodingFormat())) {
            // The provider only returns floats: ask for floats, encode base64 on the way back.
            edits.add(BodySplicer.string(peek.encodingFormatStart(), peek.encodingFormatEnd(), "float"));
            translator = new EmbeddingsBase64();
        }
        if (endpoint == Endpoint.CHAT_COMPLETIONS && model.noTemperature() && peek.hasTemperature()) {
            edits.add(BodySplicer.removeMember(request.body(), peek.temperatureMemberStart(),
                    peek.temperatureMemberEnd())); // GD-19: dropped silently on chat
        }
        // Every chat stream is accounted from the upstream's own usage chunk: ask for it when the caller did not,
        // and withhold it from that caller (GD-21).
        BodySplicer.Edit includeUsage = endpoint == Endpoint.CHAT_COMPLETIONS ? peek.includeUsageEdit() : null;
        if (includeUsage != null) {
            edits.add(includeUsage);
        }
        ByteBuf body = edits.isEmpty()
                ? request.body().retainedDuplicate()
                : BodySplicer.splice(ctx.alloc(), request.body(), edits.toArray(BodySplicer.Edit[]::new));
        return new ProxyExchange(ctx, request, provider, gateway.pools(), gateway.config().upstreamLimits(),
                gateway.collectedBudget(), body, translator, includeUsage != null, hook, onDone);
    }

    /**
     * Output tokens to reserve against token limits before the answer is known: the caller's cap, else the
     * default cap used when translating (GD-12), for each of {@code n} choices; nothing for embeddings. The
     * reservation is settled against the upstream's real usage when the exchange ends.
     */
    private static long outputEstimate(Endpoint endpoint, RequestPeek peek, ModelConfig model) {
        if (endpoint == Endpoint.EMBEDDINGS) {
            return 0;
        }
        long cap = peek.maxTokens() > 0 ? peek.maxTokens()
                : model.maxOutputTokens() > 0 ? Math.min(4096, model.maxOutputTokens()) : 4096;
        return cap * Math.max(1, peek.n());
    }

    private Exchange respond(GatewayRequest request, GatewayError error) {
        return respond(request, error, Outcome.REJECTED);
    }

    private Exchange respond(GatewayRequest request, GatewayError error, Outcome outcome) {
        try {
            HttpResponses.sendError(ctx, request, error, null);
        } finally {
            gateway.end(request, outcome);
            request.release();
        }
        next();
        return null;
    }

    /** The active exchange is over (its record holds the tokens used): settle, observe, go on with the next. */
    private void exchangeDone(Outcome outcome) {
        GatewayRequest r = activeRequest;
        active = null;
        activeRequest = null;
        if (r != null) {
            gateway.end(r, outcome);
            boolean keepAlive = r.keepAlive();
            r.release();
            if (!keepAlive) {
                // Everything written before this empty write is on the wire when it completes.
                ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
                return;
            }
        }
        if (ctx.channel().isActive()) {
            next();
        }
    }

    private void next() {
        if (active != null) {
            return;
        }
        GatewayRequest queued = waiting.poll();
        if (queued != null) {
            begin(queued);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (active != null) {
            active.clientWritabilityChanged(ctx.channel().isWritable());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Exchange a = active;
        if (a != null) {
            a.cancel(); // runs exchangeDone, which releases the request
        }
        GatewayRequest r;
        while ((r = waiting.poll()) != null) {
            gateway.end(r, Outcome.CANCELLED);
            r.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // I/O errors on the client connection (reset by peer and the like), and writes of an answer that failed
        // (exchanges write with the void promise): the exchange hears of it first, then the connection is closed;
        // channelInactive cleans up.
        Exchange a = active;
        if (a != null) {
            a.clientFailed(cause);
        }
        ctx.close();
    }

    private static String abbreviate(String s) {
        return s.length() > 100 ? s.substring(0, 100) + "…" : s;
    }
}
