package io.modelgateway.core.testing;

import io.modelgateway.core.config.ConfigLoader;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.server.GatewayServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/** A real gateway on 127.0.0.1 with an ephemeral port, built from YAML text, plus a small HTTP client. */
public final class TestGateway implements AutoCloseable {
    public static final String KEY = "sk-test-gateway-key";

    private final GatewayServer server;
    public final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private TestGateway(GatewayServer server) {
        this.server = server;
    }

    /** Starts a gateway whose config text may use {@code ${GATEWAY_KEY}} (set to {@link #KEY}). */
    public static TestGateway start(String yaml) throws Exception {
        return start(yaml, null);
    }

    /** As {@link #start(String)}, with an observer that sees every exchange's record (e.g. {@link RecordingObserver}). */
    public static TestGateway start(String yaml, io.modelgateway.core.exchange.ExchangeObserver observer)
            throws Exception {
        return start(yaml, observer, io.modelgateway.core.limit.Limiters.REDIS, Map.of());
    }

    /**
     * As {@link #start(String, io.modelgateway.core.exchange.ExchangeObserver)}, its {@code redis} block's shared
     * limiter made by {@code sharedLimits} (e.g. one on a stopped clock, or one that reaches Redis through a relay).
     */
    public static TestGateway start(String yaml, io.modelgateway.core.exchange.ExchangeObserver observer,
            io.modelgateway.core.limit.Limiters.SharedFactory sharedLimits) throws Exception {
        return start(yaml, observer, sharedLimits, Map.of());
    }

    /** As {@link #start(String, io.modelgateway.core.exchange.ExchangeObserver)}, with more environment variables. */
    public static TestGateway start(String yaml, io.modelgateway.core.exchange.ExchangeObserver observer,
            Map<String, String> env) throws Exception {
        return start(yaml, observer, io.modelgateway.core.limit.Limiters.REDIS, env);
    }

    private static TestGateway start(String yaml, io.modelgateway.core.exchange.ExchangeObserver observer,
            io.modelgateway.core.limit.Limiters.SharedFactory sharedLimits, Map<String, String> env) throws Exception {
        if (!yaml.contains("access_log:")) {
            yaml = "access_log: off\n" + yaml; // tests read records, not stdout; AccessLog has its own tests
        }
        Map<String, String> all = new java.util.HashMap<>(env);
        all.put("GATEWAY_KEY", KEY);
        GatewayConfig config = ConfigLoader.parse(yaml, "test.yaml", all, "127.0.0.1:0");
        return new TestGateway(GatewayServer.start(config, 1, observer, sharedLimits));
    }

    /** With more environment variables for the config's {@code ${...}} references (GATEWAY_KEY is always set). */
    public static TestGateway startWithEnv(String yaml, Map<String, String> env) throws Exception {
        return startWithEnv(yaml, env, null);
    }

    /** As {@link #startWithEnv(String, Map)}, with an observer of every exchange's record. */
    public static TestGateway startWithEnv(String yaml, Map<String, String> env,
            io.modelgateway.core.exchange.ExchangeObserver observer) throws Exception {
        if (!yaml.contains("access_log:")) {
            yaml = "access_log: off\n" + yaml;
        }
        Map<String, String> all = new java.util.HashMap<>(env);
        all.put("GATEWAY_KEY", KEY);
        GatewayConfig config = ConfigLoader.parse(yaml, "test.yaml", all, "127.0.0.1:0");
        return new TestGateway(GatewayServer.start(config, 1, observer, io.modelgateway.core.limit.Limiters.REDIS));
    }

    /** A config routing sim-chat / sim-embed to the in-process simulator, plus optional extra YAML. */
    public static String simulatorConfig() {
        return simulatorConfig("", "");
    }

    /** The simulator config with extra provider and model entries (YAML indented by two spaces). */
    public static String simulatorConfig(String extraProviders, String extraModels) {
        return """
                keys:
                  - name: test
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                  - name: limited
                    key: sha256:%s
                    models: ["sim-embed"]
                providers:
                  sim:
                    type: simulator
                %s
                models:
                  sim-chat:
                    deployments: [{provider: sim, model: sim-chat-1}]
                  sim-embed:
                    type: embedding
                    supports_dimensions: true
                    deployments: [{provider: sim, model: sim-embed-1}]
                  sim-embed-fixed:
                    type: embedding
                    deployments: [{provider: sim, model: sim-embed-1}]
                %s
                """.formatted(sha256Hex("sk-limited"), extraProviders, extraModels);
    }

    public static String sha256Hex(String s) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public GatewayServer server() {
        return server;
    }

    public int port() {
        return server.port();
    }

    public String url(String path) {
        return server.scheme() + "://127.0.0.1:" + port() + path;
    }

    public HttpRequest.Builder post(String path, String json) {
        return HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(20))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
    }

    /** POST with the test key in the header form of the endpoint's style. */
    public HttpResponse<String> call(String path, String json, String... headers) throws Exception {
        HttpRequest.Builder b = post(path, json);
        if (path.contains("/messages")) {
            b.header("x-api-key", KEY).header("anthropic-version", "2023-06-01");
        } else {
            b.header("authorization", "Bearer " + KEY);
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.setHeader(headers[i], headers[i + 1]);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    public HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(20));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        server.close();
    }
}
