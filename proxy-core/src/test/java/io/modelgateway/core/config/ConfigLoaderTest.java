package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.codecs.ApiStyle;
import java.net.URI;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

class ConfigLoaderTest {

    private static final String GATEWAY_KEY = "sk-test-gateway-0123456789";
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", GATEWAY_KEY);

    /** Joins lines with '\n', so a line's number in the file is its position here, from 1. */
    private static String yaml(String... lines) {
        return String.join("\n", lines) + "\n";
    }

    private static final String[] KEYS = {
        "keys:",                               // 1
        "  - name: default",                   // 2
        "    key: ${GATEWAY_KEY}",             // 3
        "    models: [\"*\"]",                 // 4
    };

    private static String withKeys(String... lines) {
        String[] all = new String[KEYS.length + lines.length];
        System.arraycopy(KEYS, 0, all, 0, KEYS.length);
        System.arraycopy(lines, 0, all, KEYS.length, lines.length);
        return yaml(all); // so the first line given here is line 5
    }

    private static final String SIM_MODEL = """
            providers:
              sim:
                type: simulator
            models:
              sim-chat:
                deployments:
                  - provider: sim
            """;

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertError(String yaml, Map<String, String> env) {
        return assertThatThrownBy(() -> ConfigLoader.parse(yaml, "test.yaml", env, null))
                .isInstanceOf(ConfigException.class);
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertError(String yaml) {
        return assertError(yaml, ENV);
    }

    // ---- a valid config

    @Test
    void parse_minimalConfig_appliesDefaults() throws Exception {
        GatewayConfig config = parse(yaml(KEYS) + SIM_MODEL);

        assertThat(config.listen()).isEqualTo(new HostAndPort("127.0.0.1", 8080));
        assertThat(config.maxBodyBytes()).isEqualTo(32L * 1024 * 1024);
        ProviderConfig sim = config.providers().get("sim");
        assertThat(sim.type()).isEqualTo(ProviderType.SIMULATOR);
        assertThat(sim.baseUrl()).isNull();
        assertThat(sim.apiKey()).isNull();
        assertThat(sim.connectTimeoutMs()).isEqualTo(5000);
        assertThat(sim.simulator()).isEqualTo(SimulatorSettings.DEFAULT);
        assertThat(sim.headers()).isEmpty();
        assertThat(sim.forwardHeaders()).isEmpty();
        ModelConfig model = config.model("sim-chat");
        assertThat(model.type()).isEqualTo(ModelType.CHAT);
        assertThat(model.deployments()).singleElement().satisfies(d -> {
            assertThat(d.provider()).isSameAs(sim);
            assertThat(d.upstreamModel()).isEqualTo("sim-chat");
            assertThat(d.weight()).isEqualTo(1);
        });
        assertThat(config.model("unknown")).isNull();
    }

    @Test
    void parse_fullConfig_bindsEveryField() throws Exception {
        GatewayConfig config = parse(yaml(
                "listen: '[::1]:9443'",
                "max_body_bytes: 1_048_576",
                "keys:",
                "  - name: team-a",
                "    key: ${GATEWAY_KEY}",
                "    models: [\"gpt-*\", emb]",
                "providers:",
                "  openai:",
                "    type: openai",
                "    base_url: https://api.openai.com/v1/",
                "    api_key: ${OPENAI_API_KEY:-sk-fallback}",
                "    headers: {X-Extra: v1, OpenAI-Project: proj}",
                "    forward_headers: [X-Trace-*, x-request-id]",
                "    connect_timeout_ms: 2500",
                "  anthropic:",
                "    type: anthropic",
                "    base_url: https://api.anthropic.com",
                "  sim:",
                "    type: simulator",
                "    simulator: {ttft_ms: 20, tokens_per_second: 12.5, output_tokens: 7, fault: \"status=503\"}",
                "models:",
                "  gpt-4o:",
                "    type: chat",
                "    deployments:",
                "      - {provider: openai, model: gpt-4o-2024-11-20, weight: 3}",
                "      - {provider: sim, weight: 1}",
                "  emb:",
                "    type: embedding",
                "    deployments: [{provider: openai, model: text-embedding-3-small}]",
                "  claude:",
                "    deployments: [{provider: anthropic}]"));

        assertThat(config.listen()).hasToString("[::1]:9443");
        assertThat(config.maxBodyBytes()).isEqualTo(1_048_576);
        ProviderConfig openai = config.providers().get("openai");
        assertThat(openai.baseUrl()).isEqualTo(URI.create("https://api.openai.com/v1"));
        assertThat(openai.type().style()).isEqualTo(ApiStyle.OPENAI);
        assertThat(openai.apiKey()).isEqualTo("sk-fallback");
        assertThat(openai.headers()).containsExactly(Map.entry("X-Extra", "v1"), Map.entry("OpenAI-Project", "proj"));
        assertThat(openai.forwardHeaders()).containsExactly("x-trace-*", "x-request-id");
        assertThat(openai.connectTimeoutMs()).isEqualTo(2500);
        assertThat(config.providers().get("anthropic").type().style()).isEqualTo(ApiStyle.ANTHROPIC);
        assertThat(config.providers().get("sim").type().style()).isNull();
        assertThat(config.providers().get("sim").simulator())
                .isEqualTo(new SimulatorSettings(20, 12.5, 7, "status=503"));
        assertThat(config.providers()).containsOnlyKeys("openai", "anthropic", "sim");
        assertThat(config.providers().keySet()).containsExactly("openai", "anthropic", "sim");
        assertThat(config.models().keySet()).containsExactly("gpt-4o", "emb", "claude");
        assertThat(config.model("gpt-4o").deployments()).extracting(DeploymentConfig::upstreamModel,
                DeploymentConfig::weight).containsExactly(
                        org.assertj.core.groups.Tuple.tuple("gpt-4o-2024-11-20", 3),
                        org.assertj.core.groups.Tuple.tuple("gpt-4o", 1));
        assertThat(config.model("emb").type()).isEqualTo(ModelType.EMBEDDING);
        KeyConfig key = config.findKey(KeyConfig.sha256(GATEWAY_KEY));
        assertThat(key.name()).isEqualTo("team-a");
        assertThat(key.allowsModel("gpt-4o")).isTrue();
        assertThat(key.allowsModel("claude")).isFalse();
    }

    @Test
    void parse_result_collectionsAreImmutable() throws Exception {
        GatewayConfig config = parse(yaml(KEYS) + SIM_MODEL);
        assertThatThrownBy(() -> config.keys().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> config.models().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> config.providers().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> config.model("sim-chat").deployments().clear())
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> config.providers().get("sim").headers().put("a", "b"))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void parse_anchorsAndMergeKeys_areResolved() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers:",
                "  a: &common {type: openai, base_url: 'http://127.0.0.1:9090/v1', connect_timeout_ms: 100}",
                "  b:",
                "    <<: *common",
                "    connect_timeout_ms: 200",
                "models:",
                "  m: {deployments: [{provider: a}, {provider: b}]}"));
        assertThat(config.providers().get("b").baseUrl()).isEqualTo(URI.create("http://127.0.0.1:9090/v1"));
        assertThat(config.providers().get("b").connectTimeoutMs()).isEqualTo(200);
        assertThat(config.providers().get("a").connectTimeoutMs()).isEqualTo(100);
    }

    // ---- environment references

    @Test
    void parse_envReferences_expandedInAnyStringWithDefaults() throws Exception {
        Map<String, String> env = Map.of("GATEWAY_KEY", GATEWAY_KEY, "UP_HOST", "10.1.2.3", "TEAM", "blue",
                "TIMEOUT", "1234");
        GatewayConfig config = ConfigLoader.parse(withKeys(
                "listen: ${LISTEN_HOST:-localhost}:${LISTEN_PORT:-8181}",
                "providers:",
                "  up:",
                "    type: openai",
                "    base_url: http://${UP_HOST}:${UP_PORT:-9090}/v1",
                "    headers:",
                "      X-Team: team-${TEAM}-${REGION:-eu}",
                "    connect_timeout_ms: ${TIMEOUT}",
                "models:",
                "  m:",
                "    deployments: [{provider: up, model: '${UPSTREAM_MODEL:-m-1}'}]"), "test.yaml", env, null);

        assertThat(config.listen()).hasToString("localhost:8181");
        ProviderConfig up = config.providers().get("up");
        assertThat(up.baseUrl()).isEqualTo(URI.create("http://10.1.2.3:9090/v1"));
        assertThat(up.headers()).containsEntry("X-Team", "team-blue-eu");
        assertThat(up.connectTimeoutMs()).isEqualTo(1234);
        assertThat(config.model("m").deployments().get(0).upstreamModel()).isEqualTo("m-1");
    }

    @Test
    void parse_unsetVariable_errorNamesFieldVariableAndLine() {
        assertError(withKeys(
                "providers:",
                "  openai:",
                "    type: openai",
                "    base_url: https://api.openai.com/v1",
                "    api_key: ${OPENAI_API_KEY}",
                "models: {}"))
                .hasMessage("providers.openai.api_key: environment variable OPENAI_API_KEY is not set (test.yaml:9)");
    }

    @Test
    void parse_numberFromEnvNotANumber_errorNamesField() {
        assertError(withKeys("max_body_bytes: ${BODY:-lots}") + SIM_MODEL)
                .hasMessageStartingWith("max_body_bytes: must be a whole number")
                .hasMessageContaining("(test.yaml:5)");
    }

    // ---- error kinds: each names the field and the line

    @Test
    void parse_unknownTopLevelField_listsAllowedFieldsAndSuggests() {
        assertError(withKeys("modles: {}"))
                .hasMessage("modles: unknown field (did you mean models?); allowed: listen, max_body_bytes,"
                        + " development_key, keys, providers, models, access_log, admin, reload, server, upstream_limits,"
                        + " redis, telemetry, tls, http2 (test.yaml:5)");
    }

    @Test
    void parse_unknownNestedField_namesFullPath() {
        assertError(withKeys(
                "providers:",
                "  openai:",
                "    type: openai",
                "    base_ur: https://api.openai.com/v1"))
                .hasMessageStartingWith("providers.openai.base_ur: unknown field (did you mean base_url?);"
                        + " allowed: type,")
                .hasMessageEndingWith("(test.yaml:8)");
    }

    @Test
    void parse_unknownFieldInDeployment_namesIndexedPath() {
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments:",
                "      - provider: sim",
                "        wieght: 2"))
                .hasMessageStartingWith("models.sim-chat.deployments[0].wieght: unknown field (did you mean weight?)")
                .hasMessageEndingWith("(test.yaml:10)");
    }

    @Test
    void parse_unknownProvider_errorNamesDeploymentAndConfiguredProviders() {
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments:",
                "      - provider: sim",
                "      - provider: simm"))
                .hasMessage("models.sim-chat.deployments[1].provider: unknown provider 'simm'; configured: sim"
                        + " (test.yaml:10)");
    }

    @Test
    void parse_wrongTypes_errorNamesFieldAndLine() {
        assertError(withKeys("max_body_bytes: lots") + SIM_MODEL)
                .hasMessage("max_body_bytes: must be a whole number, not a string (test.yaml:5)");
        assertError(yaml("keys: {name: default}"))
                .hasMessage("keys: must be a list, not a mapping (test.yaml:1)");
        assertError(withKeys("providers: [sim]"))
                .hasMessage("providers: must be a mapping of fields, not a list (test.yaml:5)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: sim"))
                .hasMessage("models.sim-chat.deployments: must be a list, not a string (test.yaml:8)");
        assertError(withKeys(
                "providers:",
                "  sim:",
                "    type: simulator",
                "    connect_timeout_ms: 1.5"))
                .hasMessage("providers.sim.connect_timeout_ms: must be a whole number, not a number (test.yaml:8)");
        assertError(yaml(
                "keys:",
                "  - name: default",
                "    key: ${GATEWAY_KEY}",
                "    optional: maybe",
                "    models: [\"*\"]"))
                .hasMessage("keys[0].optional: must be true or false (test.yaml:4)");
    }

    @Test
    void parse_outOfRange_errorNamesFieldAndBounds() {
        assertError(withKeys("max_body_bytes: 100") + SIM_MODEL)
                .hasMessage("max_body_bytes: must be between 1024 and 2147483647 (test.yaml:5)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: [{provider: sim, weight: 0}]"))
                .hasMessageStartingWith("models.sim-chat.deployments[0].weight: must be between 1 and")
                .hasMessageEndingWith("(test.yaml:8)");
    }

    @Test
    void parse_missingRequiredField_pointsAtItsMapping() {
        assertError(withKeys(
                "providers:",
                "  sim:",
                "    connect_timeout_ms: 100"))
                .hasMessage("providers.sim.type: is required (test.yaml:7)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    type: chat"))
                .hasMessage("models.sim-chat.deployments: is required (test.yaml:8)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat: {deployments: []}"))
                .hasMessage("models.sim-chat.deployments: needs at least one deployment (test.yaml:7)");
        assertError(yaml(
                "keys:",
                "  - {name: a, key: '${GATEWAY_KEY}', models: ['*']}",
                "  - {name: b, key: '${GATEWAY_KEY:-x}'}") + SIM_MODEL)
                .hasMessage("keys[1].models: is required (test.yaml:3)");
    }

    @Test
    void parse_badEnumValues_errorListsChoices() {
        assertError(withKeys("providers: {x: {type: azure}}"))
                .hasMessage("providers.x.type: must be one of openai, anthropic, simulator, azure_openai, bedrock, vertex, gemini (got 'azure')"
                        + " (test.yaml:5)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  m: {type: rerank, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.type: must be chat or embedding (got 'rerank') (test.yaml:7)");
    }

    @Test
    void parse_duplicateField_errorNamesBothLines() {
        assertError(withKeys(
                "providers:",
                "  sim: {type: simulator}",
                "  sim: {type: simulator}"))
                .hasMessage("providers.sim: duplicate field (first at line 6) (test.yaml:7)");
    }

    @Test
    void parse_badNames_refused() {
        assertError(withKeys("providers: {'my sim': {type: simulator}}"))
                .hasMessageStartingWith("providers.my sim: a provider name may use only");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models: {'my model': {deployments: [{provider: sim}]}}"))
                .hasMessageStartingWith("models.my model: a model name must be non-empty and contain no whitespace");
    }

    @Test
    void parse_yamlSyntaxError_reportsLineWithoutQuotingTheFile() {
        assertError(yaml(
                "keys: [1, 2",
                "development_key: sk-very-secret-dev"))
                .hasMessageStartingWith("yaml: invalid YAML: ")
                .hasMessageContaining("(test.yaml:2)")
                .message().doesNotContain("sk-very-secret-dev");
    }

    @Test
    void parse_twoDocuments_refused() {
        assertError(yaml(KEYS) + SIM_MODEL + "---\nlisten: 0.0.0.0:1\n")
                .hasMessageStartingWith("yaml: only one YAML document is allowed");
    }

    @Test
    void parse_unknownAlias_refused() {
        assertError(withKeys("providers: {sim: *nothing}"))
                .hasMessageStartingWith("providers.sim: alias *nothing names no anchor");
    }

    @Test
    void load_missingFile_errorNamesFile() {
        assertThatThrownBy(() -> ConfigLoader.load(java.nio.file.Path.of("no-such-dir", "gw.yaml"), ENV, null))
                .isInstanceOf(ConfigException.class)
                .hasMessageEndingWith("gw.yaml: config file not found");
    }

    // ---- providers

    @Test
    void parse_simulatorWithBaseUrl_refused() {
        assertError(withKeys("providers: {sim: {type: simulator, base_url: 'http://x'}}"))
                .hasMessageStartingWith("providers.sim.base_url: not used by type simulator");
    }

    @Test
    void parse_simulatorBlockOnOtherType_refused() {
        assertError(withKeys(
                "providers:",
                "  o:",
                "    type: openai",
                "    base_url: http://127.0.0.1:1/v1",
                "    simulator: {ttft_ms: 1}"))
                .hasMessage("providers.o.simulator: only allowed for type simulator (test.yaml:9)");
    }

    @Test
    void parse_badFault_errorPointsAtFaultField() {
        assertError(withKeys(
                "providers:",
                "  sim:",
                "    type: simulator",
                "    simulator:",
                "      ttft_ms: 5",
                "      fault: status=200"))
                .hasMessage("providers.sim.simulator.fault: status must be 400..599 (test.yaml:10)");
    }

    @Test
    void parse_baseUrlProblems_refusedWithReason() {
        assertError(withKeys("providers: {o: {type: openai}}"))
                .hasMessage("providers.o.base_url: is required for type openai (test.yaml:5)");
        assertError(withKeys("providers: {o: {type: openai, base_url: 'ftp://host/v1'}}"))
                .hasMessageStartingWith("providers.o.base_url: must start with http:// or https://");
        assertError(withKeys("providers: {o: {type: openai, base_url: 'https://host/v1?x=1'}}"))
                .hasMessageStartingWith("providers.o.base_url: must not have a query");
        assertError(withKeys("providers: {a: {type: anthropic, base_url: 'https://api.anthropic.com/v1/'}}"))
                .hasMessageStartingWith("providers.a.base_url: for type anthropic give the URL without /v1");
        assertError(withKeys("providers: {o: {type: openai, base_url: 'https://user:pw-secret@host/v1'}}"))
                .hasMessageStartingWith("providers.o.base_url: must not hold credentials")
                .message().doesNotContain("pw-secret");
    }

    @Test
    void parse_managedOrDuplicateHeader_refused() {
        assertError(withKeys("providers: {sim: {type: simulator, headers: {Content-Length: '5'}}}"))
                .hasMessageStartingWith("providers.sim.headers.Content-Length: the gateway sets this header itself");
        assertError(withKeys("providers: {sim: {type: simulator, headers: {X-A: '1', x-a: '2'}}}"))
                .hasMessageStartingWith("providers.sim.headers.x-a: the same header as providers.sim.headers.X-A");
    }

    @Test
    void forwardsHeader_globsCaseInsensitive_neverCredentials() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers: {sim: {type: simulator, forward_headers: [X-Sim-*, x-trace-id, '*-beta']}}",
                "models: {m: {deployments: [{provider: sim}]}}"));
        ProviderConfig sim = config.providers().get("sim");
        assertThat(sim.forwardsHeader("x-sim-fault")).isTrue();
        assertThat(sim.forwardsHeader("x-trace-id")).isTrue();
        assertThat(sim.forwardsHeader("anthropic-beta")).isTrue();
        assertThat(sim.forwardsHeader("x-other")).isFalse();

        ProviderConfig all = parse(withKeys(
                "providers: {sim: {type: simulator, forward_headers: ['*']}}",
                "models: {m: {deployments: [{provider: sim}]}}")).providers().get("sim");
        assertThat(all.forwardsHeader("x-anything")).isTrue();
        assertThat(all.forwardsHeader("authorization")).isFalse();
        assertThat(all.forwardsHeader("x-api-key")).isFalse();
        assertThat(all.forwardsHeader("content-length")).isFalse();

        // Names as clients send them (the decoder keeps their case), as String or AsciiString.
        assertThat(sim.forwardsHeader("X-Sim-Fault")).isTrue();
        assertThat(sim.forwardsHeader(io.netty.util.AsciiString.of("X-TRACE-ID"))).isTrue();
        assertThat(sim.forwardsHeader("X-Other")).isFalse();
        assertThat(all.forwardsHeader("Authorization")).isFalse();
        assertThat(all.forwardsHeader(io.netty.util.AsciiString.of("X-Api-Key"))).isFalse();
        assertThat(all.forwardsHeader("Transfer-Encoding")).isFalse();
    }

    @Test
    void parse_forwardingACredentialHeader_refused() {
        assertError(withKeys("providers: {sim: {type: simulator, forward_headers: [Authorization]}}"))
                .hasMessageStartingWith("providers.sim.forward_headers[0]: 'authorization' is never forwarded");
    }

    // ---- keys

    @Test
    void parse_plainLiteralKey_refusedWithGuidance() {
        assertError(yaml(
                "keys:",
                "  - name: default",
                "    key: sk-literal-secret",
                "    models: [\"*\"]"))
                .hasMessage("keys[0].key: a plain key must come from an environment reference such as"
                        + " ${GATEWAY_KEY}, or be given as sha256:<hex> (test.yaml:3)");
    }

    @Test
    void parse_sha256Key_matchesTheKeyItHashes() throws Exception {
        String hex = HexFormat.of().formatHex(KeyConfig.sha256("sk-hashed-key"));
        GatewayConfig config = parse(yaml(
                "keys:",
                "  - name: hashed",
                "    key: sha256:" + hex.toUpperCase(),
                "    models: [sim-*]") + SIM_MODEL);
        KeyConfig key = config.findKey(KeyConfig.sha256("sk-hashed-key"));
        assertThat(key).isNotNull();
        assertThat(key.name()).isEqualTo("hashed");
        assertThat(key.development()).isFalse();
        assertThat(key.allowsModel("sim-chat")).isTrue();
        assertThat(key.allowsModel("gpt-4o")).isFalse();
        assertThat(config.findKey(KeyConfig.sha256("sk-other"))).isNull();
    }

    @Test
    void parse_badSha256_refused() {
        assertError(yaml(
                "keys:",
                "  - name: hashed",
                "    key: sha256:abcd",
                "    models: [\"*\"]") + SIM_MODEL)
                .hasMessage("keys[0].key: a sha256: key needs exactly 64 hex digits after 'sha256:' (test.yaml:3)");
    }

    @Test
    void parse_severalKeys_findKeyPicksTheRightOne() throws Exception {
        Map<String, String> env = Map.of("KEY_A", "sk-aaaaaaaa", "KEY_B", "sk-bbbbbbbb");
        GatewayConfig config = ConfigLoader.parse(yaml(
                "keys:",
                "  - {name: a, key: '${KEY_A}', models: [sim-chat]}",
                "  - {name: b, key: '${KEY_B}', models: ['*']}") + SIM_MODEL, "test.yaml", env, null);
        assertThat(config.keys()).extracting(KeyConfig::name).containsExactly("a", "b");
        assertThat(config.findKey(KeyConfig.sha256("sk-aaaaaaaa")).name()).isEqualTo("a");
        assertThat(config.findKey(KeyConfig.sha256("sk-bbbbbbbb")).name()).isEqualTo("b");
        assertThat(config.findKey(new byte[32])).isNull();
        assertThat(config.findKey(null)).isNull();
    }

    @Test
    void parse_optionalKeyUnset_skippedAndOthersKept() throws Exception {
        GatewayConfig config = ConfigLoader.parse(yaml(
                "keys:",
                "  - {name: a, key: '${MISSING_KEY}', optional: true, models: ['*']}",
                "  - {name: b, key: '${GATEWAY_KEY}', models: ['*']}") + SIM_MODEL, "test.yaml", ENV, null);
        assertThat(config.keys()).extracting(KeyConfig::name).containsExactly("b");
    }

    @Test
    void parse_requiredKeyUnset_errorNamesVariable() {
        assertError(yaml(
                "keys:",
                "  - name: a",
                "    key: ${MISSING_KEY}",
                "    models: ['*']") + SIM_MODEL)
                .hasMessage("keys[0].key: environment variable MISSING_KEY is not set (test.yaml:3)");
    }

    @Test
    void parse_duplicateKeyOrName_refused() {
        assertError(yaml(
                "keys:",
                "  - {name: a, key: '${GATEWAY_KEY}', models: ['*']}",
                "  - {name: c, key: '${GATEWAY_KEY}', models: ['*']}") + SIM_MODEL)
                .hasMessage("keys[1].key: the same key as keys[0].key; every entry needs its own key (test.yaml:3)");
        assertError(yaml(
                "keys:",
                "  - {name: a, key: '${GATEWAY_KEY}', models: ['*']}",
                "  - {name: a, key: 'sha256:" + "0".repeat(64) + "', models: ['*']}") + SIM_MODEL)
                .hasMessage("keys[1].name: duplicate key name 'a' (also keys[0]) (test.yaml:3)");
    }

    @Test
    void parse_noKeyAndNoDevelopmentKey_refused() {
        assertError(SIM_MODEL, Map.of())
                .hasMessage("keys: no gateway key is configured (set GATEWAY_KEY or add a key) (test.yaml:1)");
        assertError(yaml(
                "keys:",
                "  - {name: a, key: '${GATEWAY_KEY}', optional: true, models: ['*']}") + SIM_MODEL, Map.of())
                .hasMessage("keys: no gateway key is configured (set GATEWAY_KEY or add a key) (test.yaml:1)");
    }

    @Test
    void parse_developmentKeyOnLoopback_isTheOnlyKey() throws Exception {
        GatewayConfig config = ConfigLoader.parse(yaml("development_key: sk-dev-local") + SIM_MODEL,
                "test.yaml", Map.of(), "[::1]:0");
        assertThat(config.keys()).singleElement().satisfies(k -> {
            assertThat(k.development()).isTrue();
            assertThat(k.name()).isEqualTo(KeyConfig.DEVELOPMENT_NAME);
            assertThat(k.allowsModel("anything")).isTrue();
        });
        assertThat(config.findKey(KeyConfig.sha256("sk-dev-local"))).isNotNull();
    }

    @Test
    void parse_developmentKeyOnNonLoopbackListen_refused() {
        String yaml = yaml("listen: 0.0.0.0:8080", "development_key: sk-dev-local") + SIM_MODEL;
        assertError(yaml, Map.of())
                .hasMessageStartingWith("keys: no gateway key is configured (set GATEWAY_KEY or add a key);"
                        + " development_key is accepted only on a loopback listen address, not 0.0.0.0:8080")
                .message().doesNotContain("sk-dev-local");
    }

    @Test
    void parse_listenOverride_replacesListenAndDecidesDevelopmentKey() throws Exception {
        String yaml = yaml("listen: 0.0.0.0:8080", "development_key: sk-dev-local") + SIM_MODEL;
        GatewayConfig config = ConfigLoader.parse(yaml, "test.yaml", Map.of(), "127.0.0.1:18080");
        assertThat(config.listen()).hasToString("127.0.0.1:18080");
        assertThat(config.keys()).singleElement().extracting(KeyConfig::development).isEqualTo(true);

        assertThatThrownBy(() -> ConfigLoader.parse(yaml, "test.yaml", Map.of(), "nonsense"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("listen: expected host:port");
    }

    @Test
    void parse_badListen_errorNamesFieldAndLine() {
        assertError(withKeys("listen: '::1:80'") + SIM_MODEL)
                .hasMessage("listen: write an IPv6 address in brackets, e.g. [::1]:8080 (test.yaml:5)");
    }

    @Test
    void parse_emptyDocument_needsAKey() {
        assertError("", Map.of()).hasMessageStartingWith("keys: no gateway key is configured");
        assertError("# only a comment\n", Map.of()).hasMessageStartingWith("keys: no gateway key is configured");
    }

    @Test
    void parse_rootNotAMapping_refused() {
        assertError("- a\n- b\n").hasMessage("(root): must be a mapping of fields, not a list (test.yaml:1)");
    }

    // ---- limits

    private static final String LIMITED_MODELS = """
            providers: {sim: {type: simulator}}
            models:
              gpt-4o: {deployments: [{provider: sim}]}
              gpt-4o-mini: {deployments: [{provider: sim}]}
              claude: {deployments: [{provider: sim}]}
            """;

    @Test
    void parse_keyLimits_bindEveryFieldAndKeepModelLimitsInConfigOrder() throws Exception {
        GatewayConfig config = parse(yaml(
                "keys:",
                "  - name: team-a",
                "    key: ${GATEWAY_KEY}",
                "    models: [\"*\"]",
                "    limits:",
                "      requests_per_minute: 600",
                "      tokens_per_minute: 1_000_000",
                "      concurrent_requests: 20",
                "      daily_tokens: 50000000",
                "    model_limits:",
                "      gpt-4o-mini: {}",
                "      gpt-*: {requests_per_minute: 60, tokens_per_minute: 100000}",
                "      '*': {concurrent_requests: 2}",
                "    rate_limit_headers: false") + LIMITED_MODELS);

        KeyConfig key = config.keys().get(0);
        assertThat(key.limits()).isEqualTo(new LimitsConfig(600, 1_000_000, 20, 50_000_000));
        assertThat(key.modelLimits().keySet()).containsExactly("gpt-4o-mini", "gpt-*", "*");
        // First match wins: the empty entry exempts gpt-4o-mini from the gpt-* and * entries below it.
        assertThat(key.limitsFor("gpt-4o-mini")).isEqualTo(LimitsConfig.NONE);
        assertThat(key.limitsFor("gpt-4o")).isEqualTo(new LimitsConfig(60, 100_000, 0, 0));
        assertThat(key.limitsFor("claude")).isEqualTo(new LimitsConfig(0, 0, 2, 0));
        assertThat(key.rateLimitHeaders()).isFalse();
    }

    @Test
    void parse_keyWithoutLimits_hasNoneAndSendsRateLimitHeaders() throws Exception {
        KeyConfig key = parse(yaml(KEYS) + SIM_MODEL).keys().get(0);
        assertThat(key.limits()).isEqualTo(LimitsConfig.NONE);
        assertThat(key.modelLimits()).isEmpty();
        assertThat(key.limitsFor("sim-chat")).isEqualTo(LimitsConfig.NONE);
        assertThat(key.rateLimitHeaders()).isTrue();
    }

    @Test
    void parse_emptyLimitsBlocks_meanNoLimits() throws Exception {
        GatewayConfig config = parse(yaml(
                "keys:",
                "  - name: a",
                "    key: ${GATEWAY_KEY}",
                "    models: [\"*\"]",
                "    limits:",
                "    model_limits: {sim-chat: }",
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: [{provider: sim}]",
                "    limits: {}"));
        assertThat(config.keys().get(0).limits()).isEqualTo(LimitsConfig.NONE);
        assertThat(config.keys().get(0).limitsFor("sim-chat")).isEqualTo(LimitsConfig.NONE);
        assertThat(config.model("sim-chat").limits()).isEqualTo(LimitsConfig.NONE);
    }

    @Test
    void parse_limitsFromEnvironment_expanded() throws Exception {
        GatewayConfig config = ConfigLoader.parse(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: [{provider: sim}]",
                "    limits: {requests_per_minute: '${SIM_RPM}', daily_tokens: '${SIM_DAILY:-9000}'}"),
                "test.yaml", Map.of("GATEWAY_KEY", GATEWAY_KEY, "SIM_RPM", "120"), null);
        assertThat(config.model("sim-chat").limits()).isEqualTo(new LimitsConfig(120, 0, 0, 9000));
    }

    @Test
    void parse_modelLimits_bindToTheModel() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: [{provider: sim}]",
                "    limits:",
                "      requests_per_minute: 3000",
                "      tokens_per_minute: 2000000",
                "      concurrent_requests: 64",
                "      daily_tokens: 100000000",
                "  sim-free:",
                "    deployments: [{provider: sim}]"));
        assertThat(config.model("sim-chat").limits()).isEqualTo(new LimitsConfig(3000, 2_000_000, 64, 100_000_000));
        assertThat(config.model("sim-free").limits()).isEqualTo(LimitsConfig.NONE);
    }

    @Test
    void parse_developmentKey_hasNoLimits() throws Exception {
        GatewayConfig config = ConfigLoader.parse(yaml("development_key: sk-dev-local") + SIM_MODEL,
                "test.yaml", Map.of(), null);
        KeyConfig dev = config.keys().get(0);
        assertThat(dev.development()).isTrue();
        assertThat(dev.limits()).isEqualTo(LimitsConfig.NONE);
        assertThat(dev.modelLimits()).isEmpty();
    }

    @Test
    void parse_limitZeroOrNegative_refusedWithHint() {
        assertError(yaml(KEYS) + "    limits: {requests_per_minute: 0}\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.requests_per_minute: must be between 1 and 100000000;"
                        + " leave the field out for no limit (test.yaml:5)");
        assertError(yaml(KEYS) + "    limits: {daily_tokens: -5}\n" + SIM_MODEL)
                .hasMessageStartingWith("keys[0].limits.daily_tokens: must be between 1 and 1000000000000;"
                        + " leave the field out");
    }

    @Test
    void parse_limitWrongTypeOrTooLarge_refused() {
        assertError(yaml(KEYS) + "    limits: {tokens_per_minute: 1.5}\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.tokens_per_minute: must be a whole number, not a number (test.yaml:5)");
        assertError(yaml(KEYS) + "    limits: {concurrent_requests: lots}\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.concurrent_requests: must be a whole number, not a string"
                        + " (test.yaml:5)");
        assertError(yaml(KEYS) + "    limits: {concurrent_requests: 2000000}\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.concurrent_requests: must be between 1 and 1000000 (test.yaml:5)");
        assertError(yaml(KEYS) + "    limits: {daily_tokens: 99999999999999999999999}\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.daily_tokens: must be between 1 and 1000000000000 (test.yaml:5)");
        assertError(yaml(KEYS) + "    limits: 100\n" + SIM_MODEL)
                .hasMessage("keys[0].limits: must be a mapping of fields, not a number (test.yaml:5)");
    }

    @Test
    void parse_unknownLimitField_suggestsTheRightOne() {
        assertError(yaml(KEYS) + "    limits:\n      requests_per_min: 5\n" + SIM_MODEL)
                .hasMessage("keys[0].limits.requests_per_min: unknown field (did you mean requests_per_minute?);"
                        + " allowed: requests_per_minute, tokens_per_minute, concurrent_requests, daily_tokens"
                        + " (test.yaml:6)");
        assertError(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  sim-chat:",
                "    deployments: [{provider: sim}]",
                "    limits: {tokens_per_minit: 5}"))
                .hasMessageStartingWith("models.sim-chat.limits.tokens_per_minit: unknown field"
                        + " (did you mean tokens_per_minute?)")
                .hasMessageEndingWith("(test.yaml:9)");
    }

    @Test
    void parse_badModelLimits_errorNamesTheEntry() {
        assertError(yaml(KEYS) + "    model_limits:\n      gpt-*: {daily_token: 5}\n" + LIMITED_MODELS)
                .hasMessageStartingWith("keys[0].model_limits.gpt-*.daily_token: unknown field"
                        + " (did you mean daily_tokens?)")
                .hasMessageEndingWith("(test.yaml:6)");
        assertError(yaml(KEYS) + "    model_limits: [gpt-4o]\n" + LIMITED_MODELS)
                .hasMessage("keys[0].model_limits: must be a mapping of fields, not a list (test.yaml:5)");
        assertError(yaml(KEYS) + "    model_limits: {'gpt 4o': {requests_per_minute: 1}}\n" + LIMITED_MODELS)
                .hasMessage("keys[0].model_limits.gpt 4o: a model name or glob must be non-empty and contain"
                        + " no whitespace (test.yaml:5)");
        assertError(yaml(KEYS) + "    model_limits: {gpt-4o: 5}\n" + LIMITED_MODELS)
                .hasMessage("keys[0].model_limits.gpt-4o: must be a mapping of fields, not a number (test.yaml:5)");
        assertError(yaml(KEYS) + "    model_limits: {gpt-4o: {tokens_per_minute: 0}}\n" + LIMITED_MODELS)
                .hasMessageStartingWith("keys[0].model_limits.gpt-4o.tokens_per_minute: must be between 1 and");
    }

    @Test
    void parse_rateLimitHeadersNotABoolean_refused() {
        assertError(yaml(KEYS) + "    rate_limit_headers: sometimes\n" + SIM_MODEL)
                .hasMessage("keys[0].rate_limit_headers: must be true or false (test.yaml:5)");
    }

    @Test
    void parse_optionalKeySkipped_itsLimitsAreStillChecked() {
        assertError(yaml(
                "keys:",
                "  - {name: a, key: '${GATEWAY_KEY}', models: ['*']}",
                "  - name: b",
                "    key: ${UNSET_KEY}",
                "    optional: true",
                "    models: ['*']",
                "    limits: {requests_per_minute: 0}") + SIM_MODEL)
                .hasMessageStartingWith("keys[1].limits.requests_per_minute: must be between 1 and");
    }

    @Test
    void parse_modelLimitsThatCannotApply_warn() throws Exception {
        List<String> lines = captureWarnings(() -> parse(yaml(
                "keys:",
                "  - name: a",
                "    key: ${GATEWAY_KEY}",
                "    models: [gpt-*]",
                "    model_limits:",
                "      claude: {requests_per_minute: 1}",
                "      gemini-*: {requests_per_minute: 1}",
                "      '*': {requests_per_minute: 5}",
                "      gpt-4o: {requests_per_minute: 9}") + LIMITED_MODELS));
        assertThat(lines).containsExactly(
                "keys[0].model_limits.claude: never applies: this key may not call 'claude' (test.yaml:6)",
                "keys[0].model_limits.gemini-*: 'gemini-*' matches no configured model (test.yaml:7)",
                "keys[0].model_limits.gpt-4o: never applies: keys[0].model_limits.* above it matches every model"
                        + " first (test.yaml:9)");
    }

    // ---- Anthropic headers and provider warnings

    @Test
    void anthropicBeta_forwardByDefault_dropOrAnAllowList() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers:",
                "  plain: {type: anthropic, base_url: 'https://a.example'}",
                "  off: {type: anthropic, base_url: 'https://a.example', anthropic_beta: drop}",
                "  some: {type: anthropic, base_url: 'https://a.example', anthropic_beta: [prompt-caching-*, x-1]}",
                "models: {m: {deployments: [{provider: plain}]}}"));
        assertThat(config.providers().get("plain").anthropicBeta()).isEqualTo(AnthropicBeta.FORWARD);
        assertThat(config.providers().get("off").anthropicBeta()).isEqualTo(AnthropicBeta.DROP);
        AnthropicBeta some = config.providers().get("some").anthropicBeta();
        assertThat(some.filter("prompt-caching-2024-07-31,x-1")).isEqualTo("prompt-caching-2024-07-31,x-1");
        assertThat(some.filter("x-1, y-2 ,prompt-caching-a")).isEqualTo("x-1,prompt-caching-a");
        assertThat(some.filter("y-2")).isNull();
        assertThat(AnthropicBeta.FORWARD.filter("a , b")).isEqualTo("a , b");
        assertThat(AnthropicBeta.DROP.filter("a")).isNull();
    }

    @Test
    void anthropicBeta_badValueOrWrongType_namesTheField() {
        assertError(withKeys("providers: {p: {type: anthropic, base_url: 'https://a.example', anthropic_beta: keep}}",
                "models: {m: {deployments: [{provider: p}]}}"))
                .hasMessage("providers.p.anthropic_beta: must be forward, drop, or a list of allowed beta names "
                        + "(got 'keep') (test.yaml:5)");
        assertError(withKeys("providers: {p: {type: anthropic, base_url: 'https://a.example', anthropic_beta: ['a,b']}}",
                "models: {m: {deployments: [{provider: p}]}}"))
                .hasMessageStartingWith("providers.p.anthropic_beta[0]: not a beta name or glob");
        assertError(withKeys("providers: {p: {type: openai, base_url: 'https://o.example/v1', anthropic_beta: drop}}",
                "models: {m: {deployments: [{provider: p}]}}"))
                .hasMessageStartingWith("providers.p.anthropic_beta: only used by type anthropic");
    }

    /** Contract 12.2: an openai provider serves the Responses API unless it says it has chat completions only. */
    @Test
    void responsesApi_defaultsToTrueForOpenAi_falseElsewhere_onlyOpenAiMaySetIt() throws Exception {
        GatewayConfig config = ConfigLoader.parse(withKeys(
                "providers:",
                "  full: {type: openai, base_url: 'https://o.example/v1'}",
                "  chat: {type: openai, base_url: 'https://c.example/v1', responses_api: false}",
                "  claude: {type: anthropic, base_url: 'https://a.example'}",
                "  sim: {type: simulator}",
                "models: {m: {deployments: [{provider: full}, {provider: chat}, {provider: claude}, {provider: sim}]}}"),
                "test.yaml", Map.of("GATEWAY_KEY", GATEWAY_KEY), null);
        assertThat(config.providers().get("full").responsesApi()).isTrue();
        assertThat(config.providers().get("chat").responsesApi()).isFalse();
        assertThat(config.providers().get("claude").responsesApi()).isFalse();
        assertThat(config.providers().get("sim").responsesApi()).isFalse();
        assertError(withKeys("providers: {p: {type: anthropic, base_url: 'https://a.example', responses_api: true}}",
                "models: {m: {deployments: [{provider: p}]}}"))
                .hasMessageStartingWith("providers.p.responses_api: only used by type openai");
        assertError(withKeys("providers: {p: {type: openai, base_url: 'https://o.example/v1', responses_api: 3}}",
                "models: {m: {deployments: [{provider: p}]}}"))
                .hasMessageStartingWith("providers.p.responses_api:");
    }

    @Test
    void forwardHeaders_namingAnAnthropicHeader_warnsThatItFollowsItsOwnRule() throws Exception {
        List<String> lines = captureWarnings(() -> parse(withKeys(
                "providers: {p: {type: anthropic, base_url: 'https://a.example', forward_headers: [x-a, Anthropic-Beta]}}",
                "models: {m: {deployments: [{provider: p}]}}")));
        assertThat(lines).singleElement().asString()
                .startsWith("providers.p.forward_headers[1]: 'anthropic-beta' follows its own rule, not forward_headers")
                .endsWith("(test.yaml:5)");
    }

    @Test
    void literalApiKey_warningNamesTheVariableOfTheProvidersType() throws Exception {
        List<String> lines = captureWarnings(() -> parse(withKeys(
                "providers:",
                "  a: {type: anthropic, base_url: 'https://a.example', api_key: sk-ant-literal}",
                "  o: {type: openai, base_url: 'https://o.example/v1', api_key: sk-literal}",
                "models: {m: {deployments: [{provider: a}]}, n: {deployments: [{provider: o}]}}")));
        assertThat(lines).containsExactly(
                "providers.a.api_key: the API key is written in the config file; prefer an environment reference"
                        + " such as ${ANTHROPIC_API_KEY} (test.yaml:6)",
                "providers.o.api_key: the API key is written in the config file; prefer an environment reference"
                        + " such as ${OPENAI_API_KEY} (test.yaml:7)");
    }

    // ---- access log, admin listener, reload

    @Test
    void parse_topLevelExtras_defaults() throws Exception {
        GatewayConfig config = parse(yaml(KEYS) + SIM_MODEL);
        assertThat(config.accessLog()).isEqualTo(GatewayConfig.ACCESS_LOG_STDOUT);
        assertThat(config.adminListen()).isNull();
        assertThat(config.reload()).isEqualTo(new ReloadConfig(true, 1000));
    }

    @Test
    void parse_accessLogKeywords_bound() throws Exception {
        assertThat(parse(withKeys("access_log: stderr") + SIM_MODEL).accessLog()).isEqualTo("stderr");
        assertThat(parse(withKeys("access_log: stdout") + SIM_MODEL).accessLog()).isEqualTo("stdout");
        // A bare off is a YAML 1.1 boolean; it still means "off".
        assertThat(parse(withKeys("access_log: off") + SIM_MODEL).accessLog()).isEqualTo("off");
        assertThat(parse(withKeys("access_log: 'off'") + SIM_MODEL).accessLog()).isEqualTo("off");
        assertThat(parse(withKeys("access_log: ${ACCESS_LOG:-stderr}") + SIM_MODEL).accessLog()).isEqualTo("stderr");
    }

    @Test
    void parse_accessLogFile_bound(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String file = dir.resolve("access.log").toString();
        assertThat(parse(withKeys("access_log: '" + file + "'") + SIM_MODEL).accessLog()).isEqualTo(file);
    }

    @Test
    void parse_badAccessLog_refused(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        String missingDir = dir.resolve("no-such-dir").resolve("access.log").toString();
        assertError(withKeys("access_log: '" + missingDir + "'") + SIM_MODEL)
                .hasMessage("access_log: the directory of '" + missingDir + "' does not exist (test.yaml:5)");
        assertError(withKeys("access_log: '" + dir + "'") + SIM_MODEL)
                .hasMessage("access_log: '" + dir + "' is a directory; give the path of a file in it (test.yaml:5)");
        assertError(withKeys("access_log: STDOUT") + SIM_MODEL)
                .hasMessage("access_log: write stdout in lower case (or ./STDOUT for a file of that name)"
                        + " (test.yaml:5)");
        assertError(withKeys("access_log: 1") + SIM_MODEL)
                .hasMessage("access_log: must be stdout, stderr, off or a file path, not a number (test.yaml:5)");
        assertError(withKeys("access_log: ''") + SIM_MODEL)
                .hasMessage("access_log: must not be empty; use off for no access log (test.yaml:5)");
        assertError(withKeys("access_log: [stdout]") + SIM_MODEL)
                .hasMessage("access_log: must be a single value, not a list (test.yaml:5)");
    }

    @Test
    void parse_adminListen_bound() throws Exception {
        assertThat(parse(withKeys("admin:", "  listen: 127.0.0.1:9091") + SIM_MODEL).adminListen())
                .isEqualTo(new HostAndPort("127.0.0.1", 9091));
        assertThat(parse(withKeys("admin: {listen: '[::1]:0'}") + SIM_MODEL).adminListen())
                .isEqualTo(new HostAndPort("::1", 0));
        assertThat(parse(withKeys("admin: {}") + SIM_MODEL).adminListen()).isNull();
        assertThat(parse(withKeys("admin:") + SIM_MODEL).adminListen()).isNull();
    }

    @Test
    void parse_badAdmin_refused() {
        assertError(withKeys("admin:", "  listen: localhost") + SIM_MODEL)
                .hasMessage("admin.listen: expected host:port, e.g. 127.0.0.1:8080 (test.yaml:6)");
        assertError(withKeys("admin:", "  lisen: 127.0.0.1:9091") + SIM_MODEL)
                .hasMessage("admin.lisen: unknown field (did you mean listen?); allowed: listen, key, tls (test.yaml:6)");
        assertError(withKeys("admin: 127.0.0.1:9091") + SIM_MODEL)
                .hasMessage("admin: must be a mapping of fields, not a string (test.yaml:5)");
        assertError(withKeys("listen: 0.0.0.0:8080", "admin: {listen: '127.0.0.1:8080'}") + SIM_MODEL)
                .hasMessage("admin.listen: port 8080 is already taken by listen (0.0.0.0:8080); give the admin"
                        + " listener its own port (test.yaml:6)");
    }

    @Test
    void parse_adminKey_keptAsAHashOnly() throws Exception {
        Map<String, String> env = Map.of("GATEWAY_KEY", GATEWAY_KEY, "ADMIN_KEY", "adm-secret-42");
        GatewayConfig fromEnv = ConfigLoader.parse(withKeys("admin:", "  listen: 127.0.0.1:9091",
                "  key: ${ADMIN_KEY}") + SIM_MODEL, "test.yaml", env, null);
        assertThat(fromEnv.adminKey().matches("adm-secret-42")).isTrue();
        assertThat(fromEnv.adminKey().matches("adm-secret-4")).isFalse();
        assertThat(fromEnv.adminKey().matches(null)).isFalse();
        assertThat(fromEnv.adminKey().toString()).doesNotContain("adm-secret");
        assertThat(fromEnv.toString()).doesNotContain("adm-secret");
        String hex = HexFormat.of().formatHex(KeyConfig.sha256("adm-secret-42"));
        GatewayConfig fromHash = parse(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: sha256:" + hex)
                + SIM_MODEL);
        assertThat(fromHash.adminKey()).isEqualTo(fromEnv.adminKey());
        assertThat(fromHash.toString()).doesNotContain(hex);
        // Empty after ${VAR:-}: no key. Absent: no key, on loopback without a word.
        assertThat(parse(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: ${ADMIN_KEY:-}") + SIM_MODEL)
                .adminKey()).isNull();
        assertThat(parse(withKeys("admin:", "  listen: 0.0.0.0:9091") + SIM_MODEL).adminKey()).isNull();
        // Kept by a reload's listener swap.
        assertThat(fromEnv.withListeners(new HostAndPort("127.0.0.1", 1), null).adminKey())
                .isEqualTo(fromEnv.adminKey());
    }

    @Test
    void parse_badAdminKey_refused() {
        assertError(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: adm-plain") + SIM_MODEL)
                .hasMessage("admin.key: a plain key must come from an environment reference such as ${ADMIN_KEY},"
                        + " or be given as sha256:<hex> (test.yaml:7)");
        assertError(withKeys("admin:", "  key: ${GATEWAY_KEY}") + SIM_MODEL)
                .hasMessage("admin.key: needs admin.listen: the dashboard it protects is served there (test.yaml:6)");
        assertError(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: sha256:abc") + SIM_MODEL)
                .hasMessage("admin.key: a sha256: key needs exactly 64 hex digits after 'sha256:' (test.yaml:7)");
        assertError(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: ${NO_SUCH_ADMIN_KEY}") + SIM_MODEL)
                .hasMessageStartingWith("admin.key: ").hasMessageContaining("NO_SUCH_ADMIN_KEY");
        assertError(withKeys("admin:", "  listen: 127.0.0.1:9091", "  key: 12345") + SIM_MODEL)
                .hasMessage("admin.key: must be an environment reference such as ${ADMIN_KEY} or sha256:<hex>, not a"
                        + " number (test.yaml:7)");
        assertError(withKeys("admin:", "  listen: 127.0.0.1:9091", "  kee: x") + SIM_MODEL)
                .hasMessage("admin.kee: unknown field (did you mean key?); allowed: listen, key, tls (test.yaml:7)");
    }

    // ---- tls, admin.tls, http2, a provider's ca_file / insecure_skip_verify

    @Test
    void parse_tls_andAdminTls_andHttp2(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path crt = java.nio.file.Files.writeString(dir.resolve("a.crt"), "x");
        java.nio.file.Path key = java.nio.file.Files.writeString(dir.resolve("a.key"), "x");
        GatewayConfig c = parse(withKeys("tls:", "  cert_file: " + crt, "  key_file: " + key, "  key_password: pw",
                "admin:", "  listen: 127.0.0.1:9091", "  tls: {cert_file: " + crt + ", key_file: " + key + "}",
                "http2:", "  max_concurrent_streams: 50", "  max_header_list_size: 8192") + SIM_MODEL);
        assertThat(c.tls()).isEqualTo(new TlsConfig(crt, key, "pw", "tls"));
        assertThat(c.tls().toString()).doesNotContain("pw");
        assertThat(c.adminTls()).isEqualTo(new TlsConfig(crt, key, null, "admin.tls"));
        assertThat(c.http2()).isEqualTo(new Http2Config(true, false, 50, 8192));
        assertThat(parse(withKeys("http2: {cleartext: true}") + SIM_MODEL).http2().cleartext()).isTrue();
        assertThat(parse(withKeys() + SIM_MODEL).http2()).isEqualTo(Http2Config.DEFAULT);
        assertThat(parse(withKeys() + SIM_MODEL).tls()).isNull();
    }

    @Test
    void parse_badTls_andHttp2_refused(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path crt = java.nio.file.Files.writeString(dir.resolve("a.crt"), "x");
        assertError(withKeys("tls:", "  cert_file: " + crt) + SIM_MODEL)
                .hasMessage("tls.key_file: is required (test.yaml:6)");
        assertError(withKeys("tls:", "  cert_file: " + crt, "  key_file: " + dir.resolve("none.key")) + SIM_MODEL)
                .hasMessage("tls.key_file: '" + dir.resolve("none.key") + "' does not exist (test.yaml:7)");
        assertError(withKeys("tls:", "  cert_file: " + crt, "  key_file: " + crt, "  ciphers: x") + SIM_MODEL)
                .hasMessage("tls.ciphers: unknown field; allowed: cert_file, key_file, key_password, client_ca_file, "
                        + "client_auth (test.yaml:8)");
        assertError(withKeys("tls:", "  cert_file: " + crt, "  key_file: " + crt, "  client_auth: optional") + SIM_MODEL)
                .hasMessage("tls.client_auth: needs client_ca_file: the CA that issues the client certificates "
                        + "(test.yaml:8)");
        assertError(withKeys("tls:", "  cert_file: " + crt, "  key_file: " + crt, "  client_ca_file: "
                + dir.resolve("none.pem")) + SIM_MODEL)
                .hasMessage("tls.client_ca_file: '" + dir.resolve("none.pem") + "' does not exist (test.yaml:8)");
        assertError(withKeys("admin:", "  tls: {cert_file: " + crt + ", key_file: " + crt + "}") + SIM_MODEL)
                .hasMessage("admin.tls: needs admin.listen: it is that listener's TLS (test.yaml:6)");
        assertError(withKeys("tls: {cert_file: " + crt + ", key_file: " + crt + "}", "http2: {cleartext: true}")
                + SIM_MODEL).hasMessageStartingWith("http2.cleartext: is for a plain listener");
        assertError(withKeys("http2: {enabled: false, cleartext: true}") + SIM_MODEL)
                .hasMessage("http2.cleartext: needs http2.enabled: true (test.yaml:5)");
        assertError(withKeys("http2: {max_concurrent_streams: 0}") + SIM_MODEL)
                .hasMessageStartingWith("http2.max_concurrent_streams: ");
        assertError(withKeys("http2: {max_header_list_size: 100}") + SIM_MODEL)
                .hasMessageStartingWith("http2.max_header_list_size: ");
    }

    @Test
    void parse_providerUpstreamTls(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        io.modelgateway.core.testing.TestCertificates certs =
                io.modelgateway.core.testing.TestCertificates.newAuthority(dir, "config");
        String https = "providers:\n  up:\n    type: openai\n    base_url: https://127.0.0.1:1/v1\n";
        String model = "models:\n  m:\n    deployments: [{provider: up}]\n";
        ProviderConfig p = parse(withKeys() + https + "    ca_file: " + certs.caFile() + "\n" + model)
                .providers().get("up");
        assertThat(p.tls().caFile()).isEqualTo(certs.caFile());
        assertThat(p.tls().trusted()).hasSize(1);
        assertThat(p.tls().insecureSkipVerify()).isFalse();
        assertThat(parse(withKeys() + https + model).providers().get("up").tls()).isEqualTo(UpstreamTls.DEFAULT);
        assertThat(parse(withKeys() + https + "    insecure_skip_verify: true\n" + model).providers().get("up").tls()
                .insecureSkipVerify()).isTrue();
        java.nio.file.Path junk = java.nio.file.Files.writeString(dir.resolve("junk.pem"), "not a certificate");
        assertError(withKeys() + https + "    ca_file: " + junk + "\n" + model)
                .hasMessageStartingWith("providers.up.ca_file: '" + junk + "' holds no");
        assertError(withKeys() + https + "    ca_file: " + certs.caFile() + "\n    insecure_skip_verify: true\n"
                + model).hasMessageStartingWith("providers.up.insecure_skip_verify: contradicts ca_file");
        assertError(withKeys() + "providers:\n  up:\n    type: openai\n    base_url: http://127.0.0.1:1/v1\n"
                + "    ca_file: " + certs.caFile() + "\n" + model)
                .hasMessage("providers.up.ca_file: only used with an https base_url (test.yaml:9)");
    }

    @Test
    void parse_reload_bound() throws Exception {
        assertThat(parse(withKeys("reload:", "  watch: false", "  interval_ms: 250") + SIM_MODEL).reload())
                .isEqualTo(new ReloadConfig(false, 250));
        assertThat(parse(withKeys("reload: {interval_ms: 60000}") + SIM_MODEL).reload())
                .isEqualTo(new ReloadConfig(true, 60_000));
        assertThat(parse(withKeys("reload: {watch: off}") + SIM_MODEL).reload())
                .isEqualTo(new ReloadConfig(false, 1000));
    }

    @Test
    void parse_badReload_refused() {
        assertError(withKeys("reload:", "  interval_ms: 50") + SIM_MODEL)
                .hasMessage("reload.interval_ms: must be between 100 and 60000 (test.yaml:6)");
        assertError(withKeys("reload:", "  watch: sometimes") + SIM_MODEL)
                .hasMessage("reload.watch: must be true or false (test.yaml:6)");
        assertError(withKeys("reload:", "  interval: 500") + SIM_MODEL)
                .hasMessage("reload.interval: unknown field (did you mean interval_ms?); allowed: watch, interval_ms"
                        + " (test.yaml:6)");
    }

    @Test
    void gatewayConfig_oldConstructor_takesTheDefaults() throws Exception {
        GatewayConfig loaded = parse(yaml(KEYS) + SIM_MODEL);
        GatewayConfig built = new GatewayConfig(loaded.listen(), loaded.maxBodyBytes(), loaded.keys(),
                loaded.providers(), loaded.models());
        assertThat(built).isEqualTo(loaded);
        assertThat(built.withListeners(new HostAndPort("127.0.0.1", 1), new HostAndPort("127.0.0.1", 2)))
                .satisfies(c -> {
                    assertThat(c.listen()).hasToString("127.0.0.1:1");
                    assertThat(c.adminListen()).hasToString("127.0.0.1:2");
                    assertThat(c.keys()).isEqualTo(loaded.keys());
                });
    }

    // ---- routing: strategy, retries, fallbacks, cool-down

    @Test
    void parse_routing_defaults() throws Exception {
        GatewayConfig config = parse(yaml(KEYS) + SIM_MODEL);

        assertThat(config.model("sim-chat").routing()).isEqualTo(RoutingConfig.DEFAULT);
        assertThat(RoutingConfig.DEFAULT.strategy()).isEqualTo(RoutingStrategy.WEIGHTED);
        assertThat(RoutingConfig.DEFAULT.retries()).isEqualTo(new RetryConfig(2, 100, 2000));
        assertThat(RoutingConfig.DEFAULT.fallbacks()).isEmpty();
        assertThat(config.providers().get("sim").cooldown()).isEqualTo(new CooldownConfig(3, 30));
    }

    @Test
    void parse_routing_bindsEveryField() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers:",
                "  a: {type: simulator, cooldown: {failures: 5, seconds: 10}}",
                "  b: {type: simulator, cooldown: off}",
                "  c: {type: simulator, cooldown: {seconds: 7}}",
                "models:",
                "  main:",
                "    strategy: least_inflight",
                "    retries: {max: 4, backoff_ms: 50, max_backoff_ms: 800}",
                "    fallbacks: [spare, last-resort]",
                "    deployments: [{provider: a}, {provider: b}]",
                "  spare:",
                "    retries: {max: 0}",
                "    deployments: [{provider: c}]",
                "  last-resort:",
                "    retries: {}",
                "    deployments: [{provider: c}]"));

        RoutingConfig main = config.model("main").routing();
        assertThat(main.strategy()).isEqualTo(RoutingStrategy.LEAST_INFLIGHT);
        assertThat(main.retries()).isEqualTo(new RetryConfig(4, 50, 800));
        assertThat(main.fallbacks()).containsExactly("spare", "last-resort");
        assertThat(config.model("spare").routing().retries()).isEqualTo(new RetryConfig(0, 100, 2000));
        assertThat(config.model("last-resort").routing()).isEqualTo(RoutingConfig.DEFAULT);
        assertThat(config.providers().get("a").cooldown()).isEqualTo(new CooldownConfig(5, 10));
        assertThat(config.providers().get("b").cooldown()).isEqualTo(CooldownConfig.OFF);
        assertThat(config.providers().get("b").cooldown().enabled()).isFalse();
        assertThat(config.providers().get("c").cooldown()).isEqualTo(new CooldownConfig(3, 7));
    }

    @Test
    void parse_retries_backoffAboveTheDefaultCap_raisesTheCap() throws Exception {
        GatewayConfig config = parse(withKeys(
                "providers: {sim: {type: simulator}}",
                "models:",
                "  m: {retries: {backoff_ms: 5000}, deployments: [{provider: sim}]}"));

        assertThat(config.model("m").routing().retries()).isEqualTo(new RetryConfig(2, 5000, 5000));
    }

    @Test
    void parse_badRouting_errorNamesFieldAndLine() {
        String providers = "providers: {sim: {type: simulator}}";
        assertError(withKeys(providers, "models:", "  m: {strategy: fastest, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.strategy: must be weighted or least_inflight (got 'fastest') (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m: {retries: {max: 11}, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.retries.max: must be between 0 and 10 (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m: {retries: {max: -1}, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.retries.max: must be between 0 and 10 (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m:", "    retries: {backoff_ms: 500, max_backoff_ms: 100}",
                "    deployments: [{provider: sim}]"))
                .hasMessage("models.m.retries.max_backoff_ms: must be at least backoff_ms (500) (test.yaml:8)");
        assertError(withKeys(providers, "models:", "  m: {retries: {max_backoff_ms: 60001}, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.retries.max_backoff_ms: must be between 1 and 60000 (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m: {retries: {mx: 3}, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.retries.mx: unknown field (did you mean max?); allowed: max, backoff_ms,"
                        + " max_backoff_ms (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m: {retries: 3, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.retries: must be a mapping of fields, not a number (test.yaml:7)");
    }

    @Test
    void parse_badFallbacks_errorNamesTheEntryAndLine() {
        String providers = "providers: {sim: {type: simulator}}";
        assertError(withKeys(providers, "models:",
                "  m:",
                "    fallbacks: [other]",
                "    deployments: [{provider: sim}]"))
                .hasMessage("models.m.fallbacks[0]: unknown model 'other' (test.yaml:8)");
        assertError(withKeys(providers, "models:",
                "  m:",
                "    fallbacks:",
                "      - n",
                "      - m",
                "    deployments: [{provider: sim}]",
                "  n: {deployments: [{provider: sim}]}"))
                .hasMessage("models.m.fallbacks[1]: a model cannot fall back to itself (test.yaml:10)");
        assertError(withKeys(providers, "models:",
                "  m: {fallbacks: [n, n], deployments: [{provider: sim}]}",
                "  n: {deployments: [{provider: sim}]}"))
                .hasMessage("models.m.fallbacks[1]: 'n' is listed twice (test.yaml:7)");
        assertError(withKeys(providers, "models:",
                "  m: {fallbacks: [e], deployments: [{provider: sim}]}",
                "  e: {type: embedding, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.fallbacks[0]: 'e' is a embedding model; a fallback must have the type of the"
                        + " model it stands in for (chat) (test.yaml:7)");
        assertError(withKeys(providers, "models:", "  m: {fallbacks: other, deployments: [{provider: sim}]}"))
                .hasMessage("models.m.fallbacks: must be a list, not a string (test.yaml:7)");
    }

    @Test
    void parse_fallbacks_mayPointForwardAndAtEachOther() throws Exception {
        // Fallbacks of fallbacks are not followed at run time, so a mutual pair is harmless and allowed.
        GatewayConfig config = parse(withKeys("providers: {sim: {type: simulator}}", "models:",
                "  a: {fallbacks: [b], deployments: [{provider: sim}]}",
                "  b: {fallbacks: [a], deployments: [{provider: sim}]}"));

        assertThat(config.model("a").routing().fallbacks()).containsExactly("b");
        assertThat(config.model("b").routing().fallbacks()).containsExactly("a");
    }

    @Test
    void parse_badCooldown_errorNamesFieldAndLine() {
        assertError(withKeys("providers: {sim: {type: simulator, cooldown: {failures: 0}}}") + "models: {}\n")
                .hasMessage("providers.sim.cooldown.failures: must be between 1 and 1000 (test.yaml:5)");
        assertError(withKeys("providers: {sim: {type: simulator, cooldown: {seconds: 3601}}}"))
                .hasMessage("providers.sim.cooldown.seconds: must be between 1 and 3600 (test.yaml:5)");
        assertError(withKeys("providers: {sim: {type: simulator, cooldown: 30}}"))
                .hasMessage("providers.sim.cooldown: must be off, or a mapping with failures and seconds, not a"
                        + " number (test.yaml:5)");
        assertError(withKeys("providers: {sim: {type: simulator, cooldown: {failure: 2}}}"))
                .hasMessage("providers.sim.cooldown.failure: unknown field (did you mean failures?); allowed:"
                        + " failures, seconds (test.yaml:5)");
    }

    @Test
    void parse_tooManyDeployments_refused() {
        StringBuilder list = new StringBuilder("[");
        for (int i = 0; i < 65; i++) {
            list.append(i == 0 ? "" : ", ").append("{provider: sim, model: m").append(i).append('}');
        }
        assertError(withKeys("providers: {sim: {type: simulator}}", "models:", "  m:",
                "    deployments: " + list + "]"))
                .hasMessage("models.m.deployments: at most 64 deployments per model (test.yaml:8)");
    }

    @Test
    void oldConstructors_takeTheRoutingDefaults() {
        ProviderConfig sim = new ProviderConfig("sim", ProviderType.SIMULATOR, null, null, Map.of(), List.of(), 1000,
                null, "max_tokens", false);
        ModelConfig model = new ModelConfig("m", ModelType.CHAT, List.of(new DeploymentConfig(sim, "m", 1)), 0,
                false, false, false, LimitsConfig.NONE);

        assertThat(sim.cooldown()).isEqualTo(CooldownConfig.DEFAULT);
        assertThat(model.routing()).isEqualTo(RoutingConfig.DEFAULT);
    }

    /** The WARNING lines ConfigLoader logs while {@code action} runs. */
    private static List<String> captureWarnings(ThrowingRunnable action) throws Exception {
        java.util.logging.Logger logger = java.util.logging.Logger.getLogger(ConfigLoader.class.getName());
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getLevel() == java.util.logging.Level.WARNING) {
                    lines.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(capture);
        try {
            action.run();
        } finally {
            logger.removeHandler(capture);
        }
        return lines;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
