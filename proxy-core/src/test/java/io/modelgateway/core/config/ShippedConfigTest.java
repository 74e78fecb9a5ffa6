package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The files under conf/ load, and mean what their comments say. */
class ShippedConfigTest {

    private static final Path CONF = Path.of("..", "conf");
    private static final Path DEFAULT = CONF.resolve("gateway.yaml");
    private static final String DEV_KEY = "sk-gateway-dev";

    @Test
    void defaultConfig_withGatewayKey_usesItAndNotTheDevelopmentKey() throws Exception {
        GatewayConfig config = ConfigLoader.load(DEFAULT, Map.of("GATEWAY_KEY", "sk-from-env-123"), null);

        assertThat(config.listen()).hasToString("127.0.0.1:8080");
        assertThat(config.keys()).singleElement().satisfies(k -> {
            assertThat(k.name()).isEqualTo("default");
            assertThat(k.development()).isFalse();
            assertThat(k.allowsModel("sim-chat")).isTrue();
        });
        assertThat(config.findKey(KeyConfig.sha256("sk-from-env-123"))).isNotNull();
        assertThat(config.findKey(KeyConfig.sha256(DEV_KEY))).isNull();
    }

    @Test
    void defaultConfig_withoutGatewayKey_onlyTheDevelopmentKeyWorks() throws Exception {
        GatewayConfig config = ConfigLoader.load(DEFAULT, Map.of(), null);

        assertThat(config.keys()).singleElement().satisfies(k -> assertThat(k.development()).isTrue());
        assertThat(config.findKey(KeyConfig.sha256(DEV_KEY))).isNotNull();
    }

    @Test
    void defaultConfig_routesToTheSimulator() throws Exception {
        GatewayConfig config = ConfigLoader.load(DEFAULT, Map.of(), null);

        assertThat(config.providers()).containsOnlyKeys("sim");
        assertThat(config.providers().get("sim").type()).isEqualTo(ProviderType.SIMULATOR);
        assertThat(config.model("sim-chat").type()).isEqualTo(ModelType.CHAT);
        assertThat(config.model("sim-chat").deployments()).singleElement().satisfies(d -> {
            assertThat(d.provider().name()).isEqualTo("sim");
            assertThat(d.upstreamModel()).isEqualTo("sim-chat-1");
        });
        assertThat(config.model("sim-embed").type()).isEqualTo(ModelType.EMBEDDING);
        assertThat(config.model("sim-embed").deployments().get(0).upstreamModel()).isEqualTo("sim-embed-1");
    }

    @Test
    void defaultConfig_hasNoLimitsAndTheDefaultExtras() throws Exception {
        GatewayConfig config = ConfigLoader.load(DEFAULT, Map.of("GATEWAY_KEY", "sk-from-env-123"), null);

        assertThat(config.keys()).allSatisfy(k -> {
            assertThat(k.limits()).isEqualTo(LimitsConfig.NONE);
            assertThat(k.modelLimits()).isEmpty();
            assertThat(k.rateLimitHeaders()).isTrue();
        });
        assertThat(config.models().values()).allSatisfy(m -> assertThat(m.limits()).isEqualTo(LimitsConfig.NONE));
        assertThat(config.accessLog()).isEqualTo(GatewayConfig.ACCESS_LOG_STDOUT);
        assertThat(config.adminListen()).isNull();
        assertThat(config.reload()).isEqualTo(ReloadConfig.DEFAULT);
    }

    @Test
    void defaultConfig_redisBlockUncommented_loadsTheDefaultsItShows() throws Exception {
        String text = java.nio.file.Files.readString(DEFAULT);
        StringBuilder uncommented = new StringBuilder();
        boolean inBlock = false;
        for (String line : text.split("\n", -1)) {
            if (line.equals("# redis:")) {
                inBlock = true;
            } else if (inBlock && !line.startsWith("#   ")) {
                inBlock = false;
            }
            uncommented.append(inBlock ? line.substring(2) : line).append('\n');
        }
        assertThat(config(text).redis()).isNull();

        RedisConfig redis = config(uncommented.toString()).redis();

        assertThat(redis).isEqualTo(new RedisConfig("127.0.0.1", 6379, 0, false, null, "pw-from-env", 50, "mgw:",
                RedisConfig.Fallback.LOCAL, 2, 10_000));
        assertThat(redis.timeoutMs()).isEqualTo(RedisConfig.DEFAULT_TIMEOUT_MS);
        assertThat(redis.keyPrefix()).isEqualTo(RedisConfig.DEFAULT_KEY_PREFIX);
        assertThat(redis.replicasHint()).isEqualTo(RedisConfig.DEFAULT_REPLICAS_HINT);
        assertThat(redis.leaseTtlMs()).isEqualTo(RedisConfig.DEFAULT_LEASE_TTL_MS);
    }

    private static GatewayConfig config(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "gateway.yaml", Map.of("REDIS_PASSWORD", "pw-from-env"), null);
    }

    @Test
    void limitsExample_withFakeEnv_bindsKeyKeyModelAndModelLimits() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("examples/limits.yaml"),
                Map.of("TEAM_KEY", "sk-fake-team", "LOADTEST_KEY", "sk-fake-loadtest"), null);

        KeyConfig team = config.findKey(KeyConfig.sha256("sk-fake-team"));
        assertThat(team.limits()).isEqualTo(new LimitsConfig(600, 200_000, 20, 5_000_000));
        assertThat(team.limitsFor("sim-embed")).isEqualTo(LimitsConfig.NONE);
        assertThat(team.limitsFor("sim-chat")).isEqualTo(new LimitsConfig(120, 50_000, 0, 0));
        assertThat(team.rateLimitHeaders()).isTrue();
        KeyConfig loadtest = config.findKey(KeyConfig.sha256("sk-fake-loadtest"));
        assertThat(loadtest.limits()).isEqualTo(new LimitsConfig(0, 0, 500, 0));
        assertThat(loadtest.rateLimitHeaders()).isFalse();
        assertThat(config.keys()).extracting(KeyConfig::name).containsExactly("team", "loadtest", "nightly-batch");
        assertThat(config.model("sim-chat").limits()).isEqualTo(new LimitsConfig(3000, 0, 64, 0));
        assertThat(config.model("sim-embed").limits()).isEqualTo(LimitsConfig.NONE);
    }

    @Test
    void limitsExample_withoutOptionalKey_skipsIt() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("examples/limits.yaml"),
                Map.of("TEAM_KEY", "sk-fake-team"), null);
        assertThat(config.keys()).extracting(KeyConfig::name).containsExactly("team", "nightly-batch");
    }

    @Test
    void defaultConfig_nonLoopbackOverrideWithoutGatewayKey_refused() {
        assertThatThrownBy(() -> ConfigLoader.load(DEFAULT, Map.of(), "0.0.0.0:8080"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("keys: no gateway key is configured (set GATEWAY_KEY or add a key)")
                .hasMessageContaining("gateway.yaml:");
    }

    @Test
    void defaultConfig_nonLoopbackOverrideWithGatewayKey_loads() throws Exception {
        GatewayConfig config = ConfigLoader.load(DEFAULT, Map.of("GATEWAY_KEY", "sk-from-env-123"), "0.0.0.0:9000");
        assertThat(config.listen()).isEqualTo(new HostAndPort("0.0.0.0", 9000));
        assertThat(config.findKey(KeyConfig.sha256(DEV_KEY))).isNull();
    }

    @Test
    void openaiExample_withFakeEnv_loads() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("examples/openai.yaml"),
                Map.of("GATEWAY_KEY", "sk-fake-gateway", "OPENAI_API_KEY", "sk-fake-openai"), null);

        ProviderConfig openai = config.providers().get("openai");
        assertThat(openai.type()).isEqualTo(ProviderType.OPENAI);
        assertThat(openai.baseUrl()).isEqualTo(URI.create("https://api.openai.com/v1"));
        assertThat(openai.apiKey()).isEqualTo("sk-fake-openai");
        assertThat(config.model("gpt-4o-mini").deployments().get(0).upstreamModel()).isEqualTo("gpt-4o-mini");
        assertThat(config.model("text-embedding-3-small").type()).isEqualTo(ModelType.EMBEDDING);
    }

    @Test
    void openaiExample_withoutProviderKey_refusedNamingTheVariable() {
        assertThatThrownBy(() -> ConfigLoader.load(CONF.resolve("examples/openai.yaml"),
                Map.of("GATEWAY_KEY", "sk-fake-gateway"), null))
                .hasMessageStartingWith("providers.openai.api_key: environment variable OPENAI_API_KEY is not set");
    }

    @Test
    void anthropicExample_withFakeEnv_loads() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("examples/anthropic.yaml"),
                Map.of("GATEWAY_KEY", "sk-fake-gateway", "ANTHROPIC_API_KEY", "sk-ant-fake"), null);

        ProviderConfig anthropic = config.providers().get("anthropic");
        assertThat(anthropic.type()).isEqualTo(ProviderType.ANTHROPIC);
        assertThat(anthropic.baseUrl()).isEqualTo(URI.create("https://api.anthropic.com"));
        assertThat(config.model("claude-sonnet-4-5").deployments().get(0).provider()).isSameAs(anthropic);
        assertThat(config.keys().get(0).allowsModel("claude-sonnet-4-5")).isTrue();
    }

    @Test
    void standaloneSimulatorExample_loadsWithBothStyles() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("examples/standalone-simulator.yaml"), Map.of(), null);

        ProviderConfig openai = config.providers().get("sim-openai");
        ProviderConfig anthropic = config.providers().get("sim-anthropic");
        assertThat(openai.baseUrl()).isEqualTo(URI.create("http://127.0.0.1:9090/v1"));
        assertThat(anthropic.baseUrl()).isEqualTo(URI.create("http://127.0.0.1:9090"));
        assertThat(openai.forwardsHeader("x-sim-fault")).isTrue();
        assertThat(anthropic.forwardsHeader("x-sim-ttft-ms")).isTrue();
        assertThat(config.model("sim-chat").deployments().get(0).provider()).isSameAs(openai);
        assertThat(config.model("sim-claude").deployments().get(0).provider()).isSameAs(anthropic);
        assertThat(config.model("sim-embed").type()).isEqualTo(ModelType.EMBEDDING);
        assertThat(config.model("sim-embed").deployments().get(0).provider()).isSameAs(openai);
    }

    @Test
    void soakConfig_loads_withAFaultyDeploymentBesideAHealthyOne() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("soak/gateway.yaml"), Map.of("GATEWAY_KEY", "sk-fake-soak",
                "SOAK_WARMUP_KEY", "sk-fake-warmup", "SOAK_SIM_PORT", "9090", "SOAK_ACCESS_LOG", "/tmp/soak.log"), null);

        assertThat(config.listen().host()).isEqualTo("127.0.0.1");
        assertThat(config.keys()).extracting(KeyConfig::name).containsExactly("soak", "warmup");
        assertThat(config.providers().values()).allSatisfy(p ->
                assertThat(p.baseUrl().getHost()).isEqualTo("127.0.0.1"));
        assertThat(config.providers().get("sim-openai-503").headers()).containsEntry("x-sim-fault", "status=503");
        assertThat(config.providers().get("sim-openai-slow").timeouts().firstByteMs()).isEqualTo(300);
        assertThat(config.model("soak-failover").deployments()).extracting(d -> d.provider().name())
                .containsExactly("sim-openai-503", "sim-openai-429", "sim-openai");
        // scripts/soak calls every one of these.
        for (String m : new String[] {"soak-chat", "soak-stream", "soak-claude", "soak-translated", "soak-embed",
                "soak-failover", "soak-fallback", "soak-cut-chat", "soak-cut-messages", "soak-slow", "soak-giveup"}) {
            assertThat(config.model(m)).as(m).isNotNull();
        }
    }

    @Test
    void benchConfig_loadsWithTheBenchEnvironment_keyLimitedFarAboveTheLoad() throws Exception {
        GatewayConfig config = ConfigLoader.load(CONF.resolve("bench/gateway-bench.yaml"),
                Map.of("GATEWAY_KEY", "sk-bench-0123456789", "BENCH_SIM_PORT", "9999"), "127.0.0.1:0");
        assertThat(config.keys()).singleElement().satisfies(k -> {
            assertThat(k.limits().requestsPerMinute()).isEqualTo(100_000_000L);
            assertThat(k.limits().tokensPerMinute()).isEqualTo(100_000_000L);
        });
        assertThat(config.accessLog()).isEqualTo(GatewayConfig.ACCESS_LOG_OFF);
        assertThat(config.model("sim-chat").deployments().get(0).provider().baseUrl().getPort()).isEqualTo(9999);
    }
}
