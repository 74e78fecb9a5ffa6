package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.codecs.ApiStyle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code vertex} and {@code gemini} provider blocks: defaults, the service-account key, errors by field and line. */
class GoogleProvidersConfigTest {
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-test-gateway-0123456789",
            "GEMINI_API_KEY", "AIza-secret-value-0123456789");
    @TempDir
    Path dir;

    private static String config(String provider) {
        return "keys:\n  - name: default\n    key: ${GATEWAY_KEY}\n    models: [\"*\"]\nproviders:\n" + provider
                + "models:\n  m: {deployments: [{provider: g, model: gemini-2.5-flash}]}\n";
    }

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private Path serviceAccount(String tokenUri) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        String pem = "-----BEGIN PRIVATE KEY-----\\n"
                + Base64.getEncoder().encodeToString(g.generateKeyPair().getPrivate().getEncoded())
                + "\\n-----END PRIVATE KEY-----\\n";
        Path f = dir.resolve("sa.json");
        Files.writeString(f, "{\"type\":\"service_account\",\"client_email\":\"a@p.iam.gserviceaccount.com\","
                + "\"private_key_id\":\"k1\",\"private_key\":\"" + pem + "\""
                + (tokenUri == null ? "" : ",\"token_uri\":\"" + tokenUri + "\"") + "}");
        return f;
    }

    @Test
    void gemini_defaultEndpoint_keyFromEnv_neverPrinted() throws Exception {
        ProviderConfig p = parse(config("  g: {type: gemini, api_key: \"${GEMINI_API_KEY}\"}\n")).providers().get("g");
        assertThat(p.type()).isEqualTo(ProviderType.GEMINI);
        assertThat(p.baseUrl()).hasToString("https://generativelanguage.googleapis.com");
        assertThat(p.apiKey()).isEqualTo("AIza-secret-value-0123456789");
        assertThat(p.styleFor("gemini-2.5-flash")).isEqualTo(ApiStyle.GEMINI);
        assertThat(p.toString()).doesNotContain("AIza-secret");
    }

    @Test
    void vertex_regionalEndpoint_serviceAccountRead_claudeModelsAreAnthropicStyle() throws Exception {
        Path sa = serviceAccount(null);
        ProviderConfig p = parse(config("  g: {type: vertex, project: my-project, location: us-east5, "
                + "credentials_file: " + sa + "}\n")).providers().get("g");
        assertThat(p.baseUrl()).hasToString("https://us-east5-aiplatform.googleapis.com");
        assertThat(p.google().project()).isEqualTo("my-project");
        assertThat(p.google().account().clientEmail()).isEqualTo("a@p.iam.gserviceaccount.com");
        assertThat(p.google().account().tokenUri()).isEqualTo("https://oauth2.googleapis.com/token");
        assertThat(p.styleFor("claude-sonnet-4-5@20250929")).isEqualTo(ApiStyle.ANTHROPIC);
        assertThat(p.styleFor("gemini-2.5-pro")).isEqualTo(ApiStyle.GEMINI);
        assertThat(p.toString()).doesNotContain("PRIVATE");
        ProviderConfig global = parse(config("  g: {type: vertex, project: my-project, location: global, "
                + "credentials_file: " + sa + ", base_url: \"http://127.0.0.1:9\"}\n")).providers().get("g");
        assertThat(global.baseUrl()).hasToString("http://127.0.0.1:9");
        ProviderConfig globalDefault = parse(config("  g: {type: vertex, project: my-project, location: global, "
                + "credentials_file: " + sa + "}\n")).providers().get("g");
        assertThat(globalDefault.baseUrl()).hasToString("https://aiplatform.googleapis.com");
    }

    @Test
    void vertex_tokenUriOfTheKeyIsHonoured() throws Exception {
        ProviderConfig p = parse(config("  g: {type: vertex, project: p, location: us-east5, credentials_file: "
                + serviceAccount("http://127.0.0.1:7/token") + "}\n")).providers().get("g");
        assertThat(p.google().account().tokenUri()).isEqualTo("http://127.0.0.1:7/token");
    }

    @Test
    void errors_nameTheFieldAndLine_neverTheKey() throws Exception {
        assertThatThrownBy(() -> parse(config("  g: {type: gemini}\n")))
                .hasMessageStartingWith("providers.g.api_key: is required for type gemini");
        assertThatThrownBy(() -> parse(config("  g: {type: vertex, location: us-east5, credentials_file: x}\n")))
                .hasMessage("providers.g.project: is required (test.yaml:6)");
        assertThatThrownBy(() -> parse(config("  g: {type: vertex, project: My_Project, location: us-east5, "
                + "credentials_file: x}\n"))).hasMessageStartingWith("providers.g.project: must be lower-case");
        assertThatThrownBy(() -> parse(config("  g: {type: vertex, project: p, location: us-east5, "
                + "credentials_file: /no/such/sa.json}\n")))
                .hasMessage("providers.g.credentials_file: '/no/such/sa.json' does not exist (test.yaml:6)");
        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"type\":\"service_account\",\"client_email\":\"a@b\",\"private_key\":\"-----BEGIN "
                + "PRIVATE KEY-----\\nnot-a-key-SECRETBYTES\\n-----END PRIVATE KEY-----\\n\"}");
        assertThatThrownBy(() -> parse(config("  g: {type: vertex, project: p, location: us-east5, "
                + "credentials_file: " + bad + "}\n")))
                .hasMessageContaining("private_key that is not a PKCS#8 RSA key").hasMessageNotContaining("SECRET");
        assertThatThrownBy(() -> parse(config("  g: {type: vertex, project: p, location: us-east5, api_key: k, "
                + "credentials_file: x}\n"))).hasMessageStartingWith("providers.g.api_key: not used by type vertex");
        assertThatThrownBy(() -> parse(config("  g: {type: gemini, api_key: k, project: p}\n")))
                .hasMessageStartingWith("providers.g.project: only used by type vertex");
        assertThatThrownBy(() -> parse(config("  g: {type: openai, base_url: \"http://x/v1\", location: eu}\n")))
                .hasMessageStartingWith("providers.g.location: only used by type vertex");
        assertThatThrownBy(() -> parse(config("  g: {type: gemini, api_key: k, base_url: \"http://h:1/v1beta\"}\n")))
                .hasMessageStartingWith("providers.g.base_url: for type gemini give only the scheme, host and port");
    }
}
