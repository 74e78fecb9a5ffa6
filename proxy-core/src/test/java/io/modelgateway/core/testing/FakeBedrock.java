package io.modelgateway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.AwsSessionCredentialsIdentity;
import software.amazon.eventstream.HeaderValue;
import software.amazon.eventstream.Message;

/**
 * An in-process Amazon Bedrock Runtime for tests, of the wire format only: {@code POST /model/<id>/invoke} and
 * {@code /invoke-with-response-stream} with an Anthropic Messages body ({@code anthropic_version} required, no
 * {@code model} and no {@code stream} members — Bedrock refuses them as extraneous keys), and {@code /converse} and
 * {@code /converse-stream} (a {@code messages} list of content lists; relayed to the upstream as a Messages request
 * and its answer or events written back in Converse's shapes, or a short canned answer).
 *
 * <p>Checked by AWS's own code, never the gateway's: every request's {@code Authorization} is recomputed with the AWS
 * SDK for Java v2's SigV4 signer ({@code AwsV4HttpSigner}) from what arrived, and a mismatch is refused with
 * Bedrock's 403 {@code InvalidSignatureException}; stream answers are encoded with AWS's event-stream codec
 * ({@code software.amazon.eventstream}), each Anthropic stream event base64-encoded in a {@code chunk} event's
 * {@code {"bytes":…}} as Bedrock sends them.
 *
 * <p>The answers come from an Anthropic-style upstream behind it (the standalone simulator in the SDK tests): the
 * request is sent there as a Messages request, its JSON answer returned as it is, its SSE events re-framed one by
 * one as they arrive, an {@code error} event sent as the matching exception event, an error answer as Bedrock's
 * ({@code x-amzn-ErrorType}, {@code {"message":…}}). A test can also script an answer itself ({@link Script}).
 */
public final class FakeBedrock implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PATH = Pattern.compile("/model/([^/]+)/(invoke|invoke-with-response-stream|converse|converse-stream)");
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    /** A request as it arrived. */
    public record Received(String path, String modelId, boolean stream, Map<String, String> headers, String body) {
        /** Converse or ConverseStream (else InvokeModel or InvokeModelWithResponseStream). */
        public boolean converse() {
            return path.endsWith("/converse") || path.endsWith("/converse-stream");
        }

        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * A scripted answer: status, headers, and body pieces written and flushed one by one; {@code cutAfter}: close the
     * connection after that many pieces (-1: end normally).
     */
    public record Script(int status, Map<String, String> headers, List<byte[]> pieces, int cutAfter) {
        public static Script eventStream(List<byte[]> pieces) {
            return new Script(200, Map.of("content-type", "application/vnd.amazon.eventstream"), pieces, -1);
        }

        public static Script error(int status, String errorType, String message) {
            return new Script(status, Map.of("content-type", "application/json", "x-amzn-ErrorType", errorType),
                    List.of(("{\"message\":" + quote(message) + "}").getBytes(StandardCharsets.UTF_8)), -1);
        }

        public Script cutAfter(int n) {
            return new Script(status, headers, pieces, n);
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final ExecutorService relays = Executors.newCachedThreadPool();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Channel server;
    private final String region;
    private final String accessKeyId;
    private final String secretAccessKey;
    private final String sessionToken;
    private final String bearerKey;
    private final String anthropicUpstream;
    private final String anthropicKey;
    private volatile Function<Received, Script> scripts = r -> null;
    /** Converse requests get a short canned answer instead of the upstream's. */
    private volatile boolean cannedConverse;
    public final List<Received> received = new CopyOnWriteArrayList<>();
    /** Requests refused for their signature. */
    public final List<String> refused = new CopyOnWriteArrayList<>();

    private FakeBedrock(String region, String accessKeyId, String secretAccessKey, String sessionToken,
            String bearerKey, String anthropicUpstream, String anthropicKey) throws InterruptedException {
        this.region = region;
        this.accessKeyId = accessKeyId;
        this.secretAccessKey = secretAccessKey;
        this.sessionToken = sessionToken;
        this.bearerKey = bearerKey;
        this.anthropicUpstream = anthropicUpstream;
        this.anthropicKey = anthropicKey;
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 22),
                                new Handler());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    /** Accepts requests signed with these credentials (sessionToken may be null). */
    public static FakeBedrock signed(String region, String accessKeyId, String secretAccessKey, String sessionToken,
            String anthropicUpstream, String anthropicKey) throws InterruptedException {
        return new FakeBedrock(region, accessKeyId, secretAccessKey, sessionToken, null, anthropicUpstream,
                anthropicKey);
    }

    /** Accepts requests with this Bedrock API key ({@code Authorization: Bearer}). */
    public static FakeBedrock bearer(String region, String apiKey, String anthropicUpstream, String anthropicKey)
            throws InterruptedException {
        return new FakeBedrock(region, null, null, null, apiKey, anthropicUpstream, anthropicKey);
    }

    /** Answers for which {@code scripts} returns non-null are scripted; the others go to the upstream. */
    public FakeBedrock script(Function<Received, Script> scripts) {
        this.scripts = scripts;
        return this;
    }

    /** Converse requests are answered {@code Hello from <model>} (12 input, 4 output tokens), not relayed. */
    public FakeBedrock cannedConverse() {
        this.cannedConverse = true;
        return this;
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    // ------------------------------------------------------------------ event-stream encoding (AWS's codec)

    /** A {@code chunk} event carrying one Anthropic stream event's JSON, as Bedrock frames it. */
    public static byte[] chunk(String anthropicEventJson) {
        String b64 = Base64.getEncoder().encodeToString(anthropicEventJson.getBytes(StandardCharsets.UTF_8));
        Map<String, HeaderValue> h = new LinkedHashMap<>();
        h.put(":event-type", HeaderValue.fromString("chunk"));
        h.put(":content-type", HeaderValue.fromString("application/json"));
        h.put(":message-type", HeaderValue.fromString("event"));
        return encode(h, "{\"bytes\":\"" + b64 + "\",\"p\":\"abcdefghijklmnopqrstuvwxyzABCDEFGH\"}");
    }

    /** An event of ConverseStream ({@code messageStart}, {@code contentBlockDelta}, …) with its JSON payload. */
    public static byte[] event(String type, String json) {
        Map<String, HeaderValue> h = new LinkedHashMap<>();
        h.put(":event-type", HeaderValue.fromString(type));
        h.put(":content-type", HeaderValue.fromString("application/json"));
        h.put(":message-type", HeaderValue.fromString("event"));
        return encode(h, json);
    }

    /** An exception message ({@code throttlingException}, {@code modelStreamErrorException}, …). */
    public static byte[] exception(String type, String message) {
        Map<String, HeaderValue> h = new LinkedHashMap<>();
        h.put(":exception-type", HeaderValue.fromString(type));
        h.put(":content-type", HeaderValue.fromString("application/json"));
        h.put(":message-type", HeaderValue.fromString("exception"));
        return encode(h, "{\"message\":" + quote(message) + "}");
    }

    private static byte[] encode(Map<String, HeaderValue> headers, String payload) {
        ByteBuffer b = new Message(headers, payload.getBytes(StandardCharsets.UTF_8)).toByteBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ the server

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            req.headers().forEach(e -> headers.put(e.getKey(), e.getValue()));
            byte[] body = new byte[req.content().readableBytes()];
            req.content().getBytes(req.content().readerIndex(), body);
            Matcher m = PATH.matcher(req.uri());
            if (!m.matches()) {
                respond(ctx, Script.error(404, "UnknownOperationException", "Unknown operation " + req.uri()));
                return;
            }
            String modelId = URLDecoder.decode(m.group(1), StandardCharsets.UTF_8);
            Received r = new Received(req.uri(), modelId, m.group(2).endsWith("stream"), Map.copyOf(headers),
                    new String(body, StandardCharsets.UTF_8));
            received.add(r);
            String refusal = authenticate(req.uri(), headers, body);
            if (refusal != null) {
                refused.add(refusal);
                respond(ctx, Script.error(403, refusal.startsWith("signature") ? "InvalidSignatureException"
                        : "UnrecognizedClientException", refusal.startsWith("signature")
                        ? "The request signature we calculated does not match the signature you provided. Check"
                        + " your AWS Secret Access Key and signing method. Consult the service documentation for"
                        + " details." : "The security token included in the request is invalid."));
                return;
            }
            String invalid = validate(r);
            if (invalid != null) {
                respond(ctx, Script.error(400, "ValidationException", invalid));
                return;
            }
            Script s = scripts.apply(r);
            if (s == null && r.converse() && (cannedConverse || anthropicUpstream == null)) {
                s = r.stream() ? Script.eventStream(List.of(
                        event("messageStart", "{\"role\":\"assistant\"}"),
                        event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hello \"}}"),
                        event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"from "
                                + r.modelId() + "\"}}"),
                        event("contentBlockStop", "{\"contentBlockIndex\":0}"),
                        event("messageStop", "{\"stopReason\":\"end_turn\"}"),
                        event("metadata", "{\"usage\":{\"inputTokens\":12,\"outputTokens\":4,\"totalTokens\":16},"
                                + "\"metrics\":{\"latencyMs\":80}}")))
                        : new Script(200, Map.of("content-type", "application/json"), List.of(("{\"output\":"
                        + "{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"Hello from " + r.modelId()
                        + "\"}]}},\"stopReason\":\"end_turn\",\"usage\":{\"inputTokens\":12,\"outputTokens\":4,"
                        + "\"totalTokens\":16},\"metrics\":{\"latencyMs\":80}}").getBytes(StandardCharsets.UTF_8)), -1);
            }
            if (s != null) {
                respond(ctx, s);
                return;
            }
            relays.execute(() -> relay(ctx, r));
        }
    }

    /** Null when the request is authenticated; else why not. */
    private String authenticate(String path, Map<String, String> headers, byte[] body) {
        String authorization = headers.get("authorization");
        if (bearerKey != null) {
            return ("Bearer " + bearerKey).equals(authorization) ? null : "bearer token refused";
        }
        String amzDate = headers.get("x-amz-date");
        if (authorization == null || amzDate == null) {
            return "missing authentication token";
        }
        Instant at = LocalDateTime.parse(amzDate, AMZ_DATE).toInstant(ZoneOffset.UTC);
        if (Math.abs(at.getEpochSecond() - Instant.now().getEpochSecond()) > 300) {
            return "signature expired";
        }
        SdkHttpRequest.Builder request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).protocol("http")
                .host("127.0.0.1").port(port()).encodedPath(path);
        // The headers the gateway's signature says it signed, as they arrived (the SDK adds host, date, hash and
        // token itself).
        String signed = authorization.replaceFirst(".*SignedHeaders=([^,]+),.*", "$1");
        for (String name : signed.split(";")) {
            if (!List.of("host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token").contains(name)) {
                String v = headers.get(name);
                if (v != null) {
                    request.putHeader(name, v);
                }
            }
        }
        AwsCredentialsIdentity identity = sessionToken == null
                ? AwsCredentialsIdentity.create(accessKeyId, secretAccessKey)
                : AwsSessionCredentialsIdentity.create(accessKeyId, secretAccessKey, sessionToken);
        String expected = AwsV4HttpSigner.create().sign(s -> s.identity(identity).request(request.build())
                        .payload(ContentStreamProvider.fromByteArray(body))
                        .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "bedrock")
                        .putProperty(AwsV4HttpSigner.REGION_NAME, region)
                        .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(at, ZoneOffset.UTC)))
                .request().firstMatchingHeader("Authorization").orElseThrow();
        if (sessionToken != null && !sessionToken.equals(headers.get("x-amz-security-token"))) {
            return "security token missing or wrong";
        }
        return expected.equals(authorization) ? null : "signature mismatch: expected " + expected + " got "
                + authorization;
    }

    /** Bedrock's own checks of an Anthropic InvokeModel body; null when it passes. */
    private static String validate(Received r) {
        JsonNode body;
        try {
            body = JSON.readTree(r.body());
        } catch (Exception e) {
            return "Malformed input request, please reformat your input and try again.";
        }
        if (!body.isObject()) {
            return "Malformed input request: expected type: JSONObject";
        }
        if (r.converse()) {
            if (!body.path("messages").isArray() || body.path("messages").isEmpty()) {
                return "The messages field is required.";
            }
            for (String unknown : List.of("anthropic_version", "model", "stream", "max_tokens")) {
                if (body.has(unknown)) {
                    return "1 validation error detected: unknown field '" + unknown + "'";
                }
            }
            for (JsonNode m : body.path("messages")) {
                if (!m.path("content").isArray()) {
                    return "Value at 'messages.content' failed to satisfy constraint: must be a list";
                }
            }
            JsonNode extra = body.path("additionalModelRequestFields");
            if (extra.has("reasoningConfig") && !r.modelId().matches("([a-z]+\\.)?amazon\\.nova-2.*")) {
                // Each model validates its own request fields: only Nova 2 has this one.
                return "The model returned the following errors: extraneous key [reasoningConfig] is not permitted";
            }
            JsonNode reasoning = extra.path("reasoningConfig");
            if (!reasoning.isMissingNode() && !List.of("low", "medium", "high")
                    .contains(reasoning.path("maxReasoningEffort").asText())) {
                return "reasoningConfig.maxReasoningEffort must be one of low, medium, high";
            }
            return null;
        }
        if (!"bedrock-2023-05-31".equals(body.path("anthropic_version").asText(null))) {
            return "Malformed input request: #: required key [anthropic_version] not found";
        }
        for (String extraneous : List.of("model", "stream")) {
            if (body.has(extraneous)) {
                return "Malformed input request: #: extraneous key [" + extraneous + "] is not permitted";
            }
        }
        return null;
    }

    private void respond(ChannelHandlerContext ctx, Script s) {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(s.status()));
        s.headers().forEach((k, v) -> head.headers().set(k, v));
        head.headers().set("x-amzn-RequestId", "11111111-2222-3333-4444-555555555555");
        if (s.pieces().size() == 1 && s.cutAfter() < 0) {
            head.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, s.pieces().get(0).length);
        } else {
            HttpUtil.setTransferEncodingChunked(head, true);
        }
        ctx.writeAndFlush(head);
        for (int i = 0; i < s.pieces().size(); i++) {
            if (i == s.cutAfter()) {
                ctx.flush();
                ctx.close();
                return;
            }
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(s.pieces().get(i))));
        }
        if (s.cutAfter() >= 0) {
            ctx.close();
            return;
        }
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
    }

    // ------------------------------------------------------------------ the Anthropic upstream behind it

    private void relay(ChannelHandlerContext ctx, Received r) {
        try {
            ObjectNode body = (ObjectNode) JSON.readTree(r.body());
            JsonNode betas = null;
            ObjectNode messages;
            if (r.converse()) {
                messages = converseToMessages(body, r.modelId());
            } else {
                body.remove("anthropic_version");
                betas = body.remove("anthropic_beta");
                messages = JSON.createObjectNode();
                messages.put("model", r.modelId());
                messages.setAll(body);
            }
            if (r.stream()) {
                messages.put("stream", true);
            }
            HttpRequest.Builder up = HttpRequest.newBuilder(URI.create(anthropicUpstream + "/v1/messages"))
                    .header("content-type", "application/json").header("anthropic-version", "2023-06-01")
                    .header("x-api-key", anthropicKey)
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(messages)));
            if (betas != null) {
                List<String> list = new ArrayList<>();
                betas.forEach(b -> list.add(b.asText()));
                up.header("anthropic-beta", String.join(",", list));
            }
            r.headers().forEach((k, v) -> {
                if (k.toLowerCase().startsWith("x-sim-")) {
                    up.header(k, v);
                }
            });
            java.net.http.HttpResponse<InputStream> answer =
                    client.send(up.build(), java.net.http.HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = answer.body()) {
                int status = answer.statusCode();
                if (status >= 300) {
                    JsonNode error = JSON.readTree(in.readAllBytes());
                    String type = error.path("error").path("type").asText("api_error");
                    String message = error.path("error").path("message").asText("error");
                    Script s = switch (type) {
                        case "rate_limit_error" -> Script.error(429, "ThrottlingException", message);
                        case "overloaded_error" -> Script.error(503, "ServiceUnavailableException", message);
                        case "invalid_request_error" -> Script.error(400, "ValidationException", message);
                        case "not_found_error" -> Script.error(404, "ResourceNotFoundException", message);
                        default -> Script.error(500, "InternalServerException", message);
                    };
                    String retryAfter = answer.headers().firstValue("retry-after").orElse(null);
                    if (retryAfter != null) {
                        Map<String, String> h = new LinkedHashMap<>(s.headers());
                        h.put("retry-after", retryAfter);
                        s = new Script(s.status(), h, s.pieces(), -1);
                    }
                    Script script = s;
                    ctx.executor().execute(() -> respond(ctx, script));
                    return;
                }
                boolean stopPath = false;
                for (JsonNode p : body.path("additionalModelResponseFieldPaths")) {
                    stopPath |= "/stop_sequence".equals(p.asText());
                }
                if (!r.stream()) {
                    byte[] json = r.converse() ? messagesToConverse(JSON.readTree(in.readAllBytes()), stopPath)
                            : in.readAllBytes();
                    ctx.executor().execute(() -> respond(ctx, new Script(200,
                            Map.of("content-type", "application/json"), List.of(json), -1)));
                    return;
                }
                HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                head.headers().set("content-type", "application/vnd.amazon.eventstream");
                head.headers().set("x-amzn-RequestId", "11111111-2222-3333-4444-555555555555");
                HttpUtil.setTransferEncodingChunked(head, true);
                ctx.writeAndFlush(head);
                ConverseEvents converse = new ConverseEvents(stopPath);
                BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                String line;
                String event = null;
                StringBuilder data = new StringBuilder();
                while ((line = lines.readLine()) != null) {
                    if (line.startsWith("event:")) {
                        event = line.substring(6).strip();
                    } else if (line.startsWith("data:")) {
                        data.append(line.substring(5).strip());
                    } else if (line.isEmpty() && !data.isEmpty()) {
                        if ("error".equals(event)) {
                            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(exceptionOf(data.toString()))));
                        } else if (r.converse()) {
                            for (byte[] frame : converse.events(JSON.readTree(data.toString()))) {
                                ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(frame)));
                            }
                        } else {
                            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk(data.toString()))));
                        }
                        event = null;
                        data.setLength(0);
                    }
                }
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            }
        } catch (Exception e) {
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ Converse in front of the Anthropic upstream

    /** A Converse request as the Messages request the upstream behind the fake answers. */
    private static ObjectNode converseToMessages(ObjectNode c, String model) {
        ObjectNode m = JSON.createObjectNode();
        m.put("model", model);
        JsonNode inference = c.path("inferenceConfig");
        m.put("max_tokens", inference.path("maxTokens").asInt(4096));
        if (inference.has("temperature")) {
            m.set("temperature", inference.get("temperature"));
        }
        if (inference.has("topP")) {
            m.set("top_p", inference.get("topP"));
        }
        if (inference.has("stopSequences")) {
            m.set("stop_sequences", inference.get("stopSequences"));
        }
        // Nova 2's reasoning switch, as a thinking budget the Anthropic-style upstream behind the fake understands.
        JsonNode reasoning = c.path("additionalModelRequestFields").path("reasoningConfig");
        if ("enabled".equals(reasoning.path("type").asText())) {
            int budget = switch (reasoning.path("maxReasoningEffort").asText()) {
                case "high" -> 4096;
                case "medium" -> 2048;
                default -> 1024;
            };
            m.putObject("thinking").put("type", "enabled").put("budget_tokens", budget);
            m.put("max_tokens", Math.max(m.path("max_tokens").asInt(), budget + 1024));
        }
        StringBuilder system = new StringBuilder();
        for (JsonNode s : c.path("system")) {
            system.append(system.isEmpty() ? "" : "\n").append(s.path("text").asText());
        }
        if (!system.isEmpty()) {
            m.put("system", system.toString());
        }
        var messages = m.putArray("messages");
        for (JsonNode msg : c.path("messages")) {
            ObjectNode out = messages.addObject();
            out.put("role", msg.path("role").asText());
            var content = out.putArray("content");
            for (JsonNode b : msg.path("content")) {
                if (b.has("text")) {
                    content.addObject().put("type", "text").put("text", b.path("text").asText());
                } else if (b.has("toolUse")) {
                    ObjectNode u = content.addObject().put("type", "tool_use");
                    u.put("id", b.path("toolUse").path("toolUseId").asText());
                    u.put("name", b.path("toolUse").path("name").asText());
                    u.set("input", b.path("toolUse").path("input"));
                } else if (b.has("toolResult")) {
                    JsonNode tr = b.get("toolResult");
                    ObjectNode r = content.addObject().put("type", "tool_result");
                    r.put("tool_use_id", tr.path("toolUseId").asText());
                    var rc = r.putArray("content");
                    for (JsonNode part : tr.path("content")) {
                        if (part.has("text")) {
                            rc.addObject().put("type", "text").put("text", part.path("text").asText());
                        } else if (part.has("json")) {
                            rc.addObject().put("type", "text").put("text", part.path("json").toString());
                        }
                    }
                    if ("error".equals(tr.path("status").asText())) {
                        r.put("is_error", true);
                    }
                } else if (b.has("reasoningContent")) {
                    JsonNode rc = b.get("reasoningContent");
                    if (rc.has("redactedContent")) {
                        content.addObject().put("type", "redacted_thinking")
                                .put("data", rc.path("redactedContent").asText());
                    } else {
                        content.addObject().put("type", "thinking")
                                .put("thinking", rc.path("reasoningText").path("text").asText())
                                .put("signature", rc.path("reasoningText").path("signature").asText(""));
                    }
                } else if (b.has("image")) {
                    ObjectNode i = content.addObject().put("type", "image");
                    i.putObject("source").put("type", "base64")
                            .put("media_type", "image/" + b.path("image").path("format").asText())
                            .put("data", b.path("image").path("source").path("bytes").asText());
                }
            }
        }
        JsonNode tools = c.path("toolConfig").path("tools");
        if (tools.isArray() && !tools.isEmpty()) {
            var list = m.putArray("tools");
            for (JsonNode t : tools) {
                JsonNode spec = t.path("toolSpec");
                ObjectNode tool = list.addObject().put("name", spec.path("name").asText());
                if (spec.has("description")) {
                    tool.put("description", spec.path("description").asText());
                }
                tool.set("input_schema", spec.path("inputSchema").path("json"));
            }
            JsonNode choice = c.path("toolConfig").path("toolChoice");
            if (choice.has("any")) {
                m.putObject("tool_choice").put("type", "any");
            } else if (choice.has("tool")) {
                m.putObject("tool_choice").put("type", "tool").put("name", choice.path("tool").path("name").asText());
            }
        }
        return m;
    }

    private static String stopReason(String anthropic) {
        return anthropic == null || anthropic.equals("null") ? "end_turn" : anthropic;
    }

    /**
     * An Anthropic message as Converse's answer; {@code stopPath}: the request asked for
     * {@code additionalModelResponseFieldPaths: ["/stop_sequence"]}, answered in {@code additionalModelResponseFields}.
     */
    private static byte[] messagesToConverse(JsonNode a, boolean stopPath) throws Exception {
        ObjectNode out = JSON.createObjectNode();
        ObjectNode message = out.putObject("output").putObject("message");
        message.put("role", "assistant");
        var content = message.putArray("content");
        for (JsonNode b : a.path("content")) {
            switch (b.path("type").asText()) {
                case "text" -> content.addObject().put("text", b.path("text").asText());
                case "tool_use" -> content.addObject().putObject("toolUse").put("toolUseId", b.path("id").asText())
                        .put("name", b.path("name").asText()).set("input", b.path("input"));
                case "thinking" -> content.addObject().putObject("reasoningContent").putObject("reasoningText")
                        .put("text", b.path("thinking").asText()).put("signature", b.path("signature").asText());
                case "redacted_thinking" -> content.addObject().putObject("reasoningContent")
                        .put("redactedContent", b.path("data").asText());
                default -> {
                }
            }
        }
        out.put("stopReason", stopReason(a.path("stop_reason").asText(null)));
        if (stopPath && a.path("stop_sequence").isTextual()) {
            out.putObject("additionalModelResponseFields").put("stop_sequence", a.path("stop_sequence").asText());
        }
        ObjectNode usage = out.putObject("usage");
        long in = a.path("usage").path("input_tokens").asLong();
        long o = a.path("usage").path("output_tokens").asLong();
        usage.put("inputTokens", in).put("outputTokens", o).put("totalTokens", in + o);
        out.putObject("metrics").put("latencyMs", 10);
        return JSON.writeValueAsBytes(out);
    }

    /** Anthropic stream events as ConverseStream's events, one stream per instance. */
    private static final class ConverseEvents {
        private final boolean stopPath;
        private long input;
        private long output;
        private String stop;

        ConverseEvents(boolean stopPath) {
            this.stopPath = stopPath;
        }

        List<byte[]> events(JsonNode e) throws Exception {
            List<byte[]> out = new ArrayList<>();
            switch (e.path("type").asText()) {
                case "message_start" -> {
                    input = e.path("message").path("usage").path("input_tokens").asLong();
                    out.add(event("messageStart", "{\"role\":\"assistant\"}"));
                }
                case "content_block_start" -> {
                    JsonNode b = e.path("content_block");
                    if ("tool_use".equals(b.path("type").asText())) {
                        ObjectNode start = JSON.createObjectNode().put("contentBlockIndex", e.path("index").asInt());
                        start.putObject("start").putObject("toolUse").put("toolUseId", b.path("id").asText())
                                .put("name", b.path("name").asText());
                        out.add(event("contentBlockStart", JSON.writeValueAsString(start)));
                    } else if ("redacted_thinking".equals(b.path("type").asText())) {
                        ObjectNode delta = JSON.createObjectNode().put("contentBlockIndex", e.path("index").asInt());
                        delta.putObject("delta").putObject("reasoningContent")
                                .put("redactedContent", b.path("data").asText());
                        out.add(event("contentBlockDelta", JSON.writeValueAsString(delta)));
                    }
                }
                case "content_block_delta" -> {
                    JsonNode d = e.path("delta");
                    ObjectNode delta = JSON.createObjectNode().put("contentBlockIndex", e.path("index").asInt());
                    switch (d.path("type").asText()) {
                        case "text_delta" -> delta.putObject("delta").put("text", d.path("text").asText());
                        case "input_json_delta" -> delta.putObject("delta").putObject("toolUse")
                                .put("input", d.path("partial_json").asText());
                        case "thinking_delta" -> delta.putObject("delta").putObject("reasoningContent")
                                .put("text", d.path("thinking").asText());
                        case "signature_delta" -> delta.putObject("delta").putObject("reasoningContent")
                                .put("signature", d.path("signature").asText());
                        default -> {
                            return out;
                        }
                    }
                    out.add(event("contentBlockDelta", JSON.writeValueAsString(delta)));
                }
                case "content_block_stop" -> out.add(event("contentBlockStop",
                        "{\"contentBlockIndex\":" + e.path("index").asInt() + "}"));
                case "message_delta" -> {
                    output = e.path("usage").path("output_tokens").asLong();
                    stop = stopReason(e.path("delta").path("stop_reason").asText(null));
                    ObjectNode messageStop = JSON.createObjectNode().put("stopReason", stop);
                    if (stopPath && e.path("delta").path("stop_sequence").isTextual()) {
                        messageStop.putObject("additionalModelResponseFields")
                                .put("stop_sequence", e.path("delta").path("stop_sequence").asText());
                    }
                    out.add(event("messageStop", JSON.writeValueAsString(messageStop)));
                }
                case "message_stop" -> out.add(event("metadata", "{\"usage\":{\"inputTokens\":" + input
                        + ",\"outputTokens\":" + output + ",\"totalTokens\":" + (input + output)
                        + "},\"metrics\":{\"latencyMs\":10}}"));
                default -> {
                }
            }
            return out;
        }
    }

    /** An Anthropic {@code error} event as the exception event Bedrock sends in its place. */
    private static byte[] exceptionOf(String data) throws Exception {
        JsonNode e = JSON.readTree(data).path("error");
        String type = switch (e.path("type").asText("")) {
            case "rate_limit_error" -> "throttlingException";
            case "overloaded_error" -> "serviceUnavailableException";
            case "invalid_request_error" -> "validationException";
            default -> "modelStreamErrorException";
        };
        return exception(type, e.path("message").asText("error"));
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        relays.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
