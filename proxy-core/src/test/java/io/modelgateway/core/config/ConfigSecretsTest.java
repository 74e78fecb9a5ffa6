package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Keys, API keys and header values never show up in toString, error messages or log lines. */
class ConfigSecretsTest {

    private static final String GATEWAY_KEY = "sk-gw-SECRET-1111";
    private static final String API_KEY = "sk-up-SECRET-2222";
    private static final String HEADER_VALUE = "Bearer hdr-SECRET-3333";
    private static final String DEV_KEY = "sk-dev-SECRET-4444";
    private static final List<String> SECRETS = List.of(GATEWAY_KEY, API_KEY, HEADER_VALUE, DEV_KEY,
            "SECRET", HexFormat.of().formatHex(KeyConfig.sha256(GATEWAY_KEY)));

    private final Logger logger = Logger.getLogger(ConfigLoader.class.getName());
    private final List<String> logLines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logLines.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureLog() {
        logger.addHandler(capture);
        logger.setLevel(Level.ALL);
    }

    @AfterEach
    void releaseLog() {
        logger.removeHandler(capture);
        logger.setLevel(null);
    }

    private static String config(String apiKeyLine) {
        return String.join("\n",
                "development_key: " + DEV_KEY,
                "keys:",
                "  - {name: main, key: '${GATEWAY_KEY}', optional: true, models: ['*']}",
                "  - {name: spare, key: '${SPARE_KEY}', optional: true, models: [nothing-*]}",
                "providers:",
                "  up:",
                "    type: openai",
                "    base_url: https://api.example.com/v1",
                "    " + apiKeyLine,
                "    headers: {X-Auth: '" + HEADER_VALUE + "'}",
                "models:",
                "  m: {deployments: [{provider: up}]}") + "\n";
    }

    @Test
    void toString_ofLoadedConfig_holdsNoSecret() throws Exception {
        GatewayConfig config = ConfigLoader.parse(config("api_key: ${UP_KEY}"), "test.yaml",
                Map.of("GATEWAY_KEY", GATEWAY_KEY, "UP_KEY", API_KEY), null);
        assertThat(config.providers().get("up").apiKey()).isEqualTo(API_KEY);
        assertThat(config.providers().get("up").headers()).containsEntry("X-Auth", HEADER_VALUE);

        String text = config.toString();
        assertThat(text).contains("main", "X-Auth", "https://api.example.com/v1");
        SECRETS.forEach(secret -> assertThat(text).doesNotContain(secret));
        SECRETS.forEach(secret -> assertThat(config.providers().get("up").toString()).doesNotContain(secret));
        SECRETS.forEach(secret -> assertThat(config.keys().get(0).toString()).doesNotContain(secret));
    }

    @Test
    void logLines_literalApiKeyAndSkippedKey_warnWithoutTheSecrets() throws Exception {
        ConfigLoader.parse(config("api_key: " + API_KEY), "test.yaml", Map.of("GATEWAY_KEY", GATEWAY_KEY), null);

        assertThat(logLines).anySatisfy(l -> assertThat(l).startsWith("providers.up.api_key: the API key is written"))
                .anySatisfy(l -> assertThat(l).startsWith("keys[1].key: environment variable SPARE_KEY is not set;"
                        + " optional key 'spare' is skipped (test.yaml:4)"))
                .anySatisfy(l -> assertThat(l)
                        .startsWith("keys[1].models[0]: 'nothing-*' matches no configured model"));
        logLines.forEach(line -> SECRETS.forEach(secret -> assertThat(line).doesNotContain(secret)));
    }

    @Test
    void logLines_developmentKeyInUse_warnWithoutTheKey() throws Exception {
        GatewayConfig config = ConfigLoader.parse(config("api_key: ${UP_KEY:-}"), "test.yaml", Map.of(), null);
        assertThat(config.keys()).singleElement().extracting(KeyConfig::development).isEqualTo(true);
        assertThat(config.providers().get("up").apiKey()).isNull();
        assertThat(logLines).anySatisfy(l -> assertThat(l).startsWith("development_key: in use"));
        logLines.forEach(line -> SECRETS.forEach(secret -> assertThat(line).doesNotContain(secret)));
    }

    @Test
    void errorMessages_aboutSecretFields_doNotQuoteTheValue() {
        // A literal gateway key is refused without repeating it.
        assertThatThrownBy(() -> ConfigLoader.parse("keys: [{name: a, key: " + GATEWAY_KEY + ", models: ['*']}]\n",
                "test.yaml", Map.of(), null))
                .isInstanceOf(ConfigException.class)
                .message().doesNotContain(GATEWAY_KEY);
        // A key from the environment with stray whitespace.
        assertThatThrownBy(() -> ConfigLoader.parse("keys: [{name: a, key: '${K}', models: ['*']}]\n",
                "test.yaml", Map.of("K", GATEWAY_KEY + "\n"), null))
                .hasMessageStartingWith("keys[0].key: the key has leading or trailing whitespace")
                .message().doesNotContain(GATEWAY_KEY);
        // An API key or header value that would split the upstream request.
        assertThatThrownBy(() -> ConfigLoader.parse(config("api_key: ${UP_KEY}"), "test.yaml",
                Map.of("GATEWAY_KEY", GATEWAY_KEY, "UP_KEY", API_KEY + "\r\nX-Injected: 1"), null))
                .hasMessage("providers.up.api_key: must not contain line breaks (test.yaml:9)")
                .message().doesNotContain(API_KEY);
        // A YAML error on the line holding a secret.
        assertThatThrownBy(() -> ConfigLoader.parse("providers:\n  up: {api_key: " + API_KEY + "\n",
                "test.yaml", Map.of(), null))
                .hasMessageStartingWith("yaml: invalid YAML")
                .message().doesNotContain(API_KEY);
    }
}
