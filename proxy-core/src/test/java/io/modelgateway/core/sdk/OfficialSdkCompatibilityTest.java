package io.modelgateway.core.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.modelgateway.codecs.usage.InputTokenCounter;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimulatorServer;
import io.modelgateway.core.testing.Eventually;
import io.modelgateway.core.testing.TestCertificates;
import io.modelgateway.core.testing.FakeBedrock;
import io.modelgateway.core.testing.TestGateway;
import io.netty.handler.codec.http.FullHttpRequest;
import java.io.File;
import java.time.Duration;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Runs the official Node SDKs — openai 6.x, @anthropic-ai/sdk 0.x and 1.x, pinned in
 * {@code src/test/node/package-lock.json} and used unmodified — against a real gateway on loopback.
 *
 * <p>The gateway serves every model twice over: through the in-process simulator provider ({@code sim-chat},
 * {@code sim-embed}) and through a standalone {@link SimulatorServer} reached like a real provider, with
 * provider types {@code openai} ({@code oa-chat}, {@code oa-embed}) and {@code anthropic} ({@code an-chat}).
 * The node tests ({@code node --test}) do the SDK calls and assertions; this class installs the packages,
 * starts the servers, runs each node file with a bounded time and fails with node's full output. The
 * standalone providers forward {@code x-sim-*} so the node tests can inject upstream faults per request.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OfficialSdkCompatibilityTest {
    private static final Path NODE_DIR = nodeDir();
    private static final long NPM_CI_TIMEOUT_MINUTES = 5;
    private static final long NODE_TEST_TIMEOUT_MINUTES = 3;
    private static final String UPSTREAM_KEY = "sk-upstream";
    private static final Pattern TAP_COUNT = Pattern.compile("^# (tests|pass|fail|cancelled|skipped|todo) (\\d+)$",
            Pattern.MULTILINE);

    /** Requests the standalone simulator received, copied on its event loop (the request itself is not kept). */
    private static final Queue<UpstreamRequest> UPSTREAM = new ConcurrentLinkedQueue<>();

    private static SimulatorServer simulator;
    private static TestGateway gateway;
    /** The same gateway config on a TLS listener whose certificate a test CA issued (NODE_EXTRA_CA_CERTS). */
    private static TestGateway tlsGateway;
    private static Path tlsDir;
    private static TestCertificates tlsCerts;
    /** Amazon Bedrock in front of the standalone simulator: SigV4 checked by the AWS SDK, streams AWS-encoded. */
    private static FakeBedrock bedrock;
    private static final String AWS_KEY_ID = "AKIDSDKTEST000000001";
    private static final String AWS_SECRET = "sdk/Test+Secret/Key0123456789abcdefGHIJKL";
    private static final Map<String, String> AWS_ENV =
            Map.of("AWS_ACCESS_KEY_ID", AWS_KEY_ID, "AWS_SECRET_ACCESS_KEY", AWS_SECRET);

    record UpstreamRequest(String uri, String authorization, String apiKey, String anthropicVersion) {
    }

    @BeforeAll
    static void installSdksAndStartServers() throws Exception {
        installNodePackagesIfStale();
        simulator = SimulatorServer.start("127.0.0.1", 0, SimulatorSettings.DEFAULT, UPSTREAM_KEY,
                OfficialSdkCompatibilityTest::observeUpstream);
        String upstream = "http://127.0.0.1:" + simulator.port();
        bedrock = FakeBedrock.signed("us-east-1", AWS_KEY_ID, AWS_SECRET, null, upstream, UPSTREAM_KEY);
        String providers = """
                  sim-openai: {type: openai, base_url: "%s/v1", api_key: %s, forward_headers: ["x-sim-*"]}
                  sim-anthropic: {type: anthropic, base_url: "%s", api_key: %s, forward_headers: ["x-sim-*"]}
                  sim-bedrock: {type: bedrock, region: us-east-1, base_url: "%s", aws_access_key_id: "${AWS_ACCESS_KEY_ID}",
                    aws_secret_access_key: "${AWS_SECRET_ACCESS_KEY}", forward_headers: ["x-sim-*"]}
                  sim-chat-only: {type: openai, base_url: "%s/v1", api_key: %s, forward_headers: ["x-sim-*"],
                                  responses_api: false}
                """.formatted(upstream, UPSTREAM_KEY, upstream, UPSTREAM_KEY, bedrock.baseUrl(), upstream,
                UPSTREAM_KEY);
        String models = """
                  oa-chat: {deployments: [{provider: sim-openai, model: sim-chat-1}]}
                  oa-embed: {type: embedding, deployments: [{provider: sim-openai, model: sim-embed-1}]}
                  an-chat: {deployments: [{provider: sim-anthropic, model: sim-claude-1}]}
                  cross-claude: {deployments: [{provider: sim-anthropic, model: sim-claude-x}]}
                  cross-gpt: {deployments: [{provider: sim-openai, model: sim-gpt-x}]}
                  br-chat: {deployments: [{provider: sim-bedrock, model: "anthropic.claude-sim-1-v1:0"}]}
                  br-llama: {deployments: [{provider: sim-bedrock, model: "meta.llama-sim-1-v1:0"}]}
                  br-nova: {deployments: [{provider: sim-bedrock, model: "us.amazon.nova-2-sim-v1:0"}]}
                  oa-chat-only: {deployments: [{provider: sim-chat-only, model: sim-chat-2}]}
                """;
        gateway = TestGateway.startWithEnv(TestGateway.simulatorConfig(providers, models), AWS_ENV);
        // The gateway loads its tokenizer on a thread of its own at start (an openai provider is configured);
        // count_tokens on cross-gpt expects the tokenizer's count, not the stand-in used while it loads.
        Eventually.until(Duration.ofSeconds(120), InputTokenCounter::ready);
        tlsDir = Files.createTempDirectory("sdk-tls");
        tlsCerts = TestCertificates.newAuthority(tlsDir, "SDK");
        tlsGateway = TestGateway.startWithEnv(TestCertificates.tlsBlock(tlsCerts.writeServer("gateway.test"), "")
                + TestGateway.simulatorConfig(providers, models), AWS_ENV);
    }

    @AfterAll
    static void stopServers() {
        if (gateway != null) {
            gateway.close();
        }
        if (tlsGateway != null) {
            tlsGateway.close();
        }
        if (simulator != null) {
            simulator.close();
        }
        if (bedrock != null) {
            bedrock.close();
        }
    }

    @Test
    @Order(1)
    void openaiNode_chatEmbeddingsModelsAndErrors_allPass() throws Exception {
        // (13 chat + 5 fault) tests x 2 chat models, 3 embedding tests x 2 models, 2 model-list tests.
        runNodeTests("openai.test.mjs", 44);
    }

    @Test
    @Order(2)
    void anthropicNode0x_messagesWithApiKey_allPass() throws Exception {
        // (20 shared + 3 x-api-key/Bearer/version) tests x 2 models.
        runNodeTests("anthropic.test.mjs", 46);
    }

    @Test
    @Order(3)
    void anthropicNode1x_messagesWithBearerAndNewVersionDate_allPass() throws Exception {
        // (20 shared + 1 system-role) tests x 2 models.
        runNodeTests("anthropic-v1.test.mjs", 42);
    }

    @Test
    @Order(5)
    void crossStyle_openaiSdkOnAnthropicProvider_anthropicSdkOnOpenAiProvider_allPass() throws Exception {
        // 7 openai SDK tests on cross-claude + 11 Anthropic SDK tests on cross-gpt.
        runNodeTests("cross-style.test.mjs", 18);
    }

    /**
     * The same OpenAI and Anthropic (1.x) suites over HTTPS: the SDKs' own fetch trusts the test CA through
     * {@code NODE_EXTRA_CA_CERTS} only, and every call, stream and error behaves as over plain HTTP.
     */
    @Test
    @Order(6)
    void overHttps_openaiAndAnthropicSdksWithATestCa_allPass() throws Exception {
        Map<String, String> tls = Map.of("GATEWAY_URL", "https://127.0.0.1:" + tlsGateway.port(),
                "NODE_EXTRA_CA_CERTS", tlsCerts.caFile().toString());
        runNodeTests("openai.test.mjs", 44, tls);
        runNodeTests("anthropic-v1.test.mjs", 40, tls);
    }

    /**
     * The Responses API (contract 12) through the openai SDK: natively on the in-process simulator, passed through to
     * an openai provider with the Responses API, translated for a chat-completions-only provider and for an anthropic
     * one (the standalone simulator behind all three).
     */
    @Test
    @Order(5)
    void openaiNodeResponses_nativePassThroughAndTranslated_allPass() throws Exception {
        runNodeTests("responses.test.mjs", 37);
    }

    /**
     * Claude on Amazon Bedrock (type bedrock, behind {@link FakeBedrock}, which checks every signature with the AWS
     * SDK's signer and encodes its streams with AWS's event-stream codec): the Anthropic SDK (0.x) suite — streams,
     * thinking, tools, stop sequences, mid-stream faults, 429 / 529 — and the OpenAI SDK across styles, unchanged; and
     * the OpenAI SDK across styles on a model served through Converse.
     */
    @Test
    @Order(7)
    void bedrock_anthropicAndOpenAiSdks_onClaudeOnBedrock_allPass() throws Exception {
        runNodeTests("anthropic.test.mjs", 23, Map.of("GATEWAY_MESSAGES_MODELS", "br-chat"));
        runNodeTests("cross-style.test.mjs", 18, Map.of("GATEWAY_CROSS_CHAT_MODEL", "br-chat"));
        // Converse (a model other than Claude): the OpenAI SDK across styles, streams and tools included.
        runNodeTests("cross-style.test.mjs", 18, Map.of("GATEWAY_CROSS_CHAT_MODEL", "br-llama"));
        // Converse with a model that has a reasoning switch (Amazon Nova 2, GD-32): the whole Anthropic SDK suite —
        // thinking whole, streamed and sent back with its signature, stop sequences named — as on Claude.
        runNodeTests("anthropic.test.mjs", 23, Map.of("GATEWAY_MESSAGES_MODELS", "br-nova"));
        assertThat(bedrock.received).as("requests that reached the fake Bedrock").isNotEmpty()
                .anyMatch(FakeBedrock.Received::converse);
        assertThat(bedrock.refused).as("requests whose signature the AWS SDK's signer refused").isEmpty();
    }

    /**
     * The fake Bedrock's Converse shapes checked by AWS's own code: the AWS SDK for JavaScript's Bedrock Runtime client
     * calls {@link FakeBedrock} directly (Converse and ConverseStream, reasoning both ways, the stop-sequence field
     * path, tool use, a ValidationException), signing with the same credentials.
     */
    @Test
    @Order(8)
    void fakeBedrock_converseShapes_checkedByTheAwsSdk() throws Exception {
        runNodeTests("bedrock-converse.test.mjs", 6, Map.of("BEDROCK_URL", bedrock.baseUrl(), "BEDROCK_REGION",
                "us-east-1", "BEDROCK_ACCESS_KEY_ID", AWS_KEY_ID, "BEDROCK_SECRET_ACCESS_KEY", AWS_SECRET));
        assertThat(bedrock.refused).as("requests whose signature the AWS SDK's signer refused").isEmpty();
    }

    /** What reached the provider: its own key in place of the caller's, and the caller's version date (GD-2). */
    @Test
    @Order(4)
    void anthropicUpstream_getsProviderKeyAndCallersVersionDate() {
        List<UpstreamRequest> messages = UPSTREAM.stream().filter(r -> r.uri().startsWith("/v1/messages")).toList();
        assertThat(messages).as("requests the standalone simulator got on /v1/messages").isNotEmpty();
        assertThat(messages).extracting(UpstreamRequest::anthropicVersion).contains("2023-06-01")
                .anyMatch(v -> v != null && v.startsWith("2026-"));
        for (UpstreamRequest r : UPSTREAM) {
            assertThat(String.valueOf(r.authorization()) + " " + r.apiKey()).as(r.uri())
                    .doesNotContain(TestGateway.KEY).contains(UPSTREAM_KEY);
        }
    }

    private static void observeUpstream(FullHttpRequest request) {
        UPSTREAM.add(new UpstreamRequest(request.uri(), request.headers().get("authorization"),
                request.headers().get("x-api-key"), request.headers().get("anthropic-version")));
    }

    /** Runs one node test file and checks both the exit code and that the TAP summary counted real passes. */
    private static void runNodeTests(String file, int minimumPassing) throws Exception {
        runNodeTests(file, minimumPassing, Map.of());
    }

    /** As {@link #runNodeTests(String, int)}, {@code override} replacing or adding variables (e.g. the TLS URL). */
    private static void runNodeTests(String file, int minimumPassing, Map<String, String> override) throws Exception {
        Map<String, String> vars = new HashMap<>(Map.of(
                "GATEWAY_CHAT_MODELS", "sim-chat,oa-chat",
                "GATEWAY_EMBED_MODELS", "sim-embed,oa-embed",
                "GATEWAY_MESSAGES_MODELS", "sim-chat,an-chat",
                "GATEWAY_CROSS_CHAT_MODEL", "cross-claude",
                "GATEWAY_CROSS_MESSAGES_MODEL", "cross-gpt",
                "GATEWAY_RESPONSES_PASS_MODELS", "oa-chat",
                "GATEWAY_RESPONSES_STATELESS_MODELS", "sim-chat,oa-chat-only,an-chat",
                "GATEWAY_RESPONSES_NO_COUNT_MODELS", "oa-chat-only,an-chat"));
        vars.putAll(override);
        runNodeTests(file, gateway.port(), vars, minimumPassing);
    }

    /**
     * Runs one node test file against the gateway on {@code gatewayPort}, with {@code vars} besides the gateway's URL
     * and key (and replacing them if named), and checks both the exit code and that the TAP summary counted real
     * passes. For the other SDK test classes of this package (a provider kind with its own fake upstream).
     */
    static void runNodeTests(String file, int gatewayPort, Map<String, String> vars, int minimumPassing)
            throws Exception {
        ProcessBuilder pb = new ProcessBuilder("node", "--test", "--test-reporter=tap", file);
        Map<String, String> env = pb.environment();
        // The SDKs read their own variables (base URL, keys, custom headers); none may leak in from the shell.
        env.keySet().removeIf(k -> k.startsWith("OPENAI_") || k.startsWith("ANTHROPIC_") || k.startsWith("AZURE_"));
        env.put("GATEWAY_URL", "http://127.0.0.1:" + gatewayPort);
        env.put("GATEWAY_KEY", TestGateway.KEY);
        env.put("NO_COLOR", "1");
        env.remove("NODE_EXTRA_CA_CERTS");
        env.putAll(vars);
        Result result = run(pb, NODE_TEST_TIMEOUT_MINUTES);
        if (result.exitCode() != 0) {
            fail("node --test " + file + " exited with " + result.exitCode() + ":\n" + result.output());
        }
        Map<String, Integer> counts = new HashMap<>();
        Matcher m = TAP_COUNT.matcher(result.output());
        while (m.find()) {
            counts.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        // Kept in the surefire output file, so a green run still shows which SDK calls were exercised.
        System.out.println("node --test " + file + ": " + counts + "\n" + result.output());
        assertThat(counts.getOrDefault("pass", 0)).as("passing node tests in %s:%n%s", file, result.output())
                .isGreaterThanOrEqualTo(minimumPassing);
        assertThat(counts.getOrDefault("fail", -1)).as("failing node tests in %s", file).isZero();
    }

    /** {@code npm ci} when node_modules is missing or older than the lockfile; a failure fails the class. */
    static void installNodePackagesIfStale() throws Exception {
        Path lock = NODE_DIR.resolve("package-lock.json");
        Path installed = NODE_DIR.resolve("node_modules").resolve(".package-lock.json");
        assertThat(lock).as("lockfile of the SDK tests").exists();
        if (Files.exists(installed)
                && Files.getLastModifiedTime(installed).compareTo(Files.getLastModifiedTime(lock)) >= 0) {
            return;
        }
        ProcessBuilder pb = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund");
        Result result = run(pb, NPM_CI_TIMEOUT_MINUTES);
        if (result.exitCode() != 0) {
            fail("npm ci in " + NODE_DIR + " exited with " + result.exitCode() + ":\n" + result.output());
        }
    }

    /** Surefire sets {@code basedir} to the module; an IDE may run from the repository root instead. */
    private static Path nodeDir() {
        Path module = Path.of(System.getProperty("basedir", "."));
        Path dir = module.resolve("src/test/node");
        return Files.isDirectory(dir) ? dir : module.resolve("proxy-core/src/test/node");
    }

    record Result(int exitCode, String output) {
    }

    /**
     * Runs a command in the node directory with stdout and stderr merged into a file (no pipe to drain, so
     * no deadlock), and kills the whole process tree if it outlives its time.
     */
    private static Result run(ProcessBuilder pb, long timeoutMinutes) throws IOException, InterruptedException {
        File log = Files.createTempFile("sdk-compat-", ".log").toFile();
        try {
            pb.directory(NODE_DIR.toFile()).redirectErrorStream(true).redirectOutput(log);
            Process p = pb.start();
            if (!p.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
                List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
                tree.forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                fail(String.join(" ", pb.command()) + " did not finish within " + timeoutMinutes + " minutes:\n"
                        + Files.readString(log.toPath(), StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(log.toPath(), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log.toPath());
        }
    }
}
