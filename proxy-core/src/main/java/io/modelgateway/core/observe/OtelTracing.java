package io.modelgateway.core.observe;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.config.TelemetryConfig;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.ExchangeTrace;
import io.modelgateway.core.exchange.ExchangeTracer;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.netty.handler.codec.http.HttpHeaders;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.net.URI;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * OpenTelemetry traces of the exchanges ({@code telemetry} in the config), made with the OpenTelemetry SDK and
 * exported over OTLP/HTTP (protobuf) by its batch processor, whose own thread sends them: an event loop only records
 * spans and hands ended ones to the processor's bounded queue (a full queue drops spans, never blocks).
 *
 * <p>Per request, one span of kind SERVER for the exchange — named {@code {operation} {model}}, a child of the
 * caller's W3C {@code traceparent} when it sent a valid one, whose sampling decision is followed (else
 * {@code sampling_ratio} decides) — and one span of kind CLIENT per upstream attempt, its child, named after the
 * upstream model. Attributes follow the OpenTelemetry GenAI semantic conventions: {@code gen_ai.operation.name}
 * ({@code chat}, {@code embeddings}), {@code gen_ai.provider.name} ({@code openai}, {@code anthropic}, or
 * {@code simulator} for the in-process one), {@code gen_ai.request.model}, {@code gen_ai.response.model},
 * {@code gen_ai.usage.input_tokens} and {@code gen_ai.usage.output_tokens}, {@code server.address} and
 * {@code server.port} of the upstream, {@code error.type} on a failure; and the HTTP ones of the exchange
 * ({@code http.request.method}, {@code url.path}, {@code http.response.status_code}). The gateway's own are under
 * {@code model_gateway.*}: the key name, the outcome, the attempts and the cost. The upstream request carries the
 * attempt's {@code traceparent}, so a provider that traces joins the same trace.
 *
 * <p>{@code gen_ai.response.model} is the deployment's upstream model name: the gateway relays the answer's bytes
 * without reading its {@code model} field (GD-17).
 *
 * <p>Off (no {@code telemetry} block) none of this exists: the server has no tracer, requests carry no trace.
 */
public final class OtelTracing implements ExchangeTracer, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(OtelTracing.class.getName());

    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
    static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("gen_ai.provider.name");
    static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
    static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
    static final AttributeKey<Long> INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");
    static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<String> KEY_NAME = AttributeKey.stringKey("model_gateway.key");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("model_gateway.outcome");
    static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("model_gateway.attempts");
    static final AttributeKey<Double> COST = AttributeKey.doubleKey("model_gateway.cost_usd");
    static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("model_gateway.request_id");

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    /** Reads a caller's {@code traceparent} / {@code tracestate} from the request's headers (names are lower case). */
    private static final TextMapGetter<HttpHeaders> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(HttpHeaders carrier) {
            return carrier.names();
        }

        @Override
        public String get(HttpHeaders carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };
    private static final TextMapSetter<HttpHeaders> SETTER = (carrier, key, value) -> carrier.set(key, value);

    private final SdkTracerProvider provider;
    private final Tracer tracer;

    private OtelTracing(SdkTracerProvider provider) {
        this.provider = provider;
        this.tracer = provider.get("io.modelgateway.core");
    }

    /** A tracer exporting to {@code config}'s endpoint; its batch processor's thread starts now. */
    public static OtelTracing open(TelemetryConfig config) {
        OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder().setEndpoint(config.otlpEndpoint()).build();
        Resource resource = Resource.getDefault().merge(Resource.create(
                Attributes.of(AttributeKey.stringKey("service.name"), config.serviceName())));
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(resource)
                .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(config.samplingRatio())))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())
                .build();
        LOG.info("tracing: spans go to " + config.otlpEndpoint() + " (OTLP/HTTP), sampling ratio "
                + config.samplingRatio());
        return new OtelTracing(provider);
    }

    @Override
    public ExchangeTrace start(GatewayRequest request) {
        Context parent = W3C.extract(Context.root(), request.headers(), GETTER);
        String operation = operation(request.endpoint());
        Span span = tracer.spanBuilder(operation)
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(OPERATION, operation)
                .setAttribute(HTTP_METHOD, request.http().method().name())
                .setAttribute(URL_PATH, io.modelgateway.core.exchange.ApiPaths.path(request.http().uri()))
                .setAttribute(REQUEST_ID, request.requestId())
                .startSpan();
        return new Trace(span, parent.with(span), operation);
    }

    /** Exports what is still queued and stops the processor's thread (waits up to 5 s). */
    @Override
    public void close() {
        provider.shutdown().join(5, TimeUnit.SECONDS);
    }

    static String operation(Endpoint endpoint) {
        return endpoint == Endpoint.EMBEDDINGS ? "embeddings" : "chat";
    }

    static String providerName(ProviderType type) {
        return switch (type) {
            case OPENAI -> "openai";
            case ANTHROPIC -> "anthropic";
            case SIMULATOR -> "simulator";
            case AZURE_OPENAI -> "azure.ai.openai"; // the GenAI semantic conventions' well-known value
            case BEDROCK -> "aws.bedrock";
            case VERTEX -> "gcp.vertex_ai";
            case GEMINI -> "gcp.gemini";
        };
    }

    /** One request's spans; confined to its event loop. */
    private final class Trace implements ExchangeTrace {
        private final Span exchange;
        private final Context context;
        private final String operation;
        private Span attempt;
        /** {@code gen_ai.provider.name} of the last attempt's provider; null before any attempt. */
        private String providerName;

        Trace(Span exchange, Context context, String operation) {
            this.exchange = exchange;
            this.context = context;
            this.operation = operation;
        }

        @Override
        public void attemptStarted(DeploymentConfig deployment) {
            if (attempt != null) {
                attempt.end(); // not expected: every attempt ends before the next begins
            }
            ProviderConfig p = deployment.provider();
            providerName = providerName(p.type());
            var b = tracer.spanBuilder(operation + " " + deployment.upstreamModel())
                    .setParent(context)
                    .setSpanKind(SpanKind.CLIENT)
                    .setAttribute(OPERATION, operation)
                    .setAttribute(PROVIDER, providerName)
                    .setAttribute(REQUEST_MODEL, deployment.upstreamModel());
            URI base = p.baseUrl();
            if (p.type() != ProviderType.SIMULATOR && base != null && base.getHost() != null) {
                b.setAttribute(SERVER_ADDRESS, base.getHost());
                int port = base.getPort() > 0 ? base.getPort() : "https".equalsIgnoreCase(base.getScheme()) ? 443 : 80;
                b.setAttribute(SERVER_PORT, (long) port);
            }
            attempt = b.startSpan();
        }

        @Override
        public void attemptFailed(String errorType) {
            if (attempt != null) {
                attempt.setAttribute(ERROR_TYPE, errorType);
                attempt.setStatus(StatusCode.ERROR);
                attempt.end();
                attempt = null;
            }
        }

        @Override
        public void inject(HttpHeaders upstreamHeaders) {
            W3C.inject(context.with(attempt != null ? attempt : exchange), upstreamHeaders, SETTER);
        }

        @Override
        public void ended(ExchangeRecord record) {
            String error = errorType(record);
            if (attempt != null) {
                if (record.deployment() != null) {
                    attempt.setAttribute(RESPONSE_MODEL, record.deployment());
                }
                usage(attempt, record);
                if (record.status() > 0) {
                    attempt.setAttribute(HTTP_STATUS, (long) record.status());
                }
                if (error != null) {
                    attempt.setAttribute(ERROR_TYPE, error);
                    attempt.setStatus(StatusCode.ERROR);
                }
                attempt.end();
                attempt = null;
            }
            String model = record.model();
            if (model != null) {
                exchange.updateName(operation + " " + model);
                exchange.setAttribute(REQUEST_MODEL, model);
            }
            if (record.deployment() != null) {
                exchange.setAttribute(RESPONSE_MODEL, record.deployment());
            }
            if (providerName != null) {
                exchange.setAttribute(PROVIDER, providerName);
            }
            usage(exchange, record);
            exchange.setAttribute(HTTP_STATUS, (long) record.status());
            if (record.keyName() != null) {
                exchange.setAttribute(KEY_NAME, record.keyName());
            }
            Outcome outcome = record.outcome();
            if (outcome != null) {
                exchange.setAttribute(OUTCOME, outcome.label());
            }
            exchange.setAttribute(ATTEMPTS, (long) record.attempts());
            if (record.priced()) {
                exchange.setAttribute(COST, record.costUsd());
            }
            if (error != null) {
                exchange.setAttribute(ERROR_TYPE, error);
                exchange.setStatus(StatusCode.ERROR);
            }
            exchange.end();
        }

        private void usage(Span span, ExchangeRecord record) {
            if (record.usageSource() != ExchangeRecord.UsageSource.NONE) {
                span.setAttribute(INPUT_TOKENS, record.inputTokens());
                span.setAttribute(OUTPUT_TOKENS, record.outputTokens());
            }
        }
    }

    /**
     * {@code error.type} of an exchange that did not end well: the status when one went out as an error (a 5xx, or a
     * 4xx the gateway or the upstream answered), else the outcome ({@code cancelled}, {@code upstream_error}); null
     * for a success.
     */
    static String errorType(ExchangeRecord record) {
        int status = record.status();
        if (status >= 400) {
            return Integer.toString(status);
        }
        Outcome outcome = record.outcome();
        if (outcome == null || outcome == Outcome.DONE) {
            return null;
        }
        return outcome.label();
    }

    /** For tests: the attribute names, so they are written once. */
    static List<String> attributeNames() {
        return List.of(OPERATION.getKey(), PROVIDER.getKey(), REQUEST_MODEL.getKey(), RESPONSE_MODEL.getKey(),
                INPUT_TOKENS.getKey(), OUTPUT_TOKENS.getKey(), SERVER_ADDRESS.getKey(), SERVER_PORT.getKey(),
                ERROR_TYPE.getKey());
    }
}
