package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** The {@code type: bedrock} provider block: region, credentials, base URL and the deployments it may serve. */
class BedrockConfigTest {
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-gw", "AWS_ACCESS_KEY_ID",
            "AKIDCONFIGTEST000001", "AWS_SECRET_ACCESS_KEY", "config/Test+Secret0123456789", "AWS_SESSION_TOKEN",
            "FwoGZXIvYXdzConfigSessionToken", "AWS_BEARER_TOKEN_BEDROCK", "ABSKconfigApiKey0123456789");

    private static String config(String provider, String model) {
        return """
                keys:
                  - name: k
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  aws:
                    type: bedrock
                %s
                models:
                  m:
                %s
                """.formatted(provider.indent(4).stripTrailing(), model.indent(4).stripTrailing());
    }

    private static final String CLAUDE = "deployments: [{provider: aws, model: \"anthropic.claude-sonnet-4-5-20250929-v1:0\"}]";
    private static final String KEYS = """
            region: us-east-1
            aws_access_key_id: ${AWS_ACCESS_KEY_ID}
            aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}""";

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertError(String yaml) {
        return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
    }

    @Test
    void accessKeys_fromTheEnvironment_defaultEndpointOfTheRegion_secretsNeverPrinted() throws Exception {
        ProviderConfig p = parse(config(KEYS, CLAUDE)).providers().get("aws");

        assertThat(p.type()).isEqualTo(ProviderType.BEDROCK);
        assertThat(p.type().style()).isEqualTo(io.modelgateway.codecs.ApiStyle.ANTHROPIC);
        assertThat(p.baseUrl()).isEqualTo(URI.create("https://bedrock-runtime.us-east-1.amazonaws.com"));
        assertThat(p.bedrock()).isEqualTo(new BedrockSettings("us-east-1", "AKIDCONFIGTEST000001",
                "config/Test+Secret0123456789", null));
        assertThat(p.bedrock().signs()).isTrue();
        assertThat(p.toString()).doesNotContain("config/Test+Secret0123456789").contains("sigv4");
    }

    @Test
    void sessionToken_andUsRegionPrefixedModel_andBaseUrlOverride() throws Exception {
        ProviderConfig p = parse(config(KEYS + "\naws_session_token: ${AWS_SESSION_TOKEN}\n"
                + "base_url: http://127.0.0.1:4566/",
                "deployments: [{provider: aws, model: \"us.anthropic.claude-3-7-sonnet-20250219-v1:0\"}]"))
                .providers().get("aws");

        assertThat(p.bedrock().sessionToken()).isEqualTo("FwoGZXIvYXdzConfigSessionToken");
        assertThat(p.baseUrl()).isEqualTo(URI.create("http://127.0.0.1:4566"));
        assertThat(p.toString()).doesNotContain("FwoGZXIvYXdzConfigSessionToken");
    }

    @Test
    void bedrockApiKey_insteadOfAccessKeys() throws Exception {
        ProviderConfig p = parse(config("region: eu-central-1\napi_key: ${AWS_BEARER_TOKEN_BEDROCK}", CLAUDE))
                .providers().get("aws");

        assertThat(p.bedrock().signs()).isFalse();
        assertThat(p.apiKey()).isEqualTo("ABSKconfigApiKey0123456789");
        assertThat(p.baseUrl()).isEqualTo(URI.create("https://bedrock-runtime.eu-central-1.amazonaws.com"));
    }

    @Test
    void regionMissingOrMalformed_namesTheField() {
        assertError(config("api_key: ${AWS_BEARER_TOKEN_BEDROCK}", CLAUDE))
                .hasMessageContaining("providers.aws.region");
        assertError(config("region: US East\napi_key: ${AWS_BEARER_TOKEN_BEDROCK}", CLAUDE))
                .hasMessageStartingWith("providers.aws.region: is not an AWS region name");
    }

    @Test
    void credentials_missingHalfOrBothKindsOrNone_namesTheField() {
        assertError(config("region: us-east-1\naws_access_key_id: ${AWS_ACCESS_KEY_ID}", CLAUDE))
                .hasMessageStartingWith("providers.aws.aws_access_key_id: needs aws_secret_access_key too");
        assertError(config(KEYS + "\napi_key: ${AWS_BEARER_TOKEN_BEDROCK}", CLAUDE))
                .hasMessageStartingWith("providers.aws.api_key: a bedrock provider signs with its access key or");
        assertError(config("region: us-east-1", CLAUDE))
                .hasMessageContaining("type bedrock needs credentials");
        assertError(config("region: us-east-1\napi_key: ${AWS_BEARER_TOKEN_BEDROCK}\n"
                + "aws_session_token: ${AWS_SESSION_TOKEN}", CLAUDE))
                .hasMessageStartingWith("providers.aws.aws_session_token: goes with aws_access_key_id");
    }

    @Test
    void baseUrlWithAPath_refused_thePathsAreBedrocks() {
        assertError(config(KEYS + "\nbase_url: https://bedrock.example/v1", CLAUDE))
                .hasMessageStartingWith("providers.aws.base_url: for type bedrock give only the scheme, host and port");
    }

    @Test
    void bedrockFields_onAnotherType_refused() {
        assertError("""
                keys:
                  - name: k
                    key: ${GATEWAY_KEY}
                    models: ["*"]
                providers:
                  o: {type: openai, base_url: "https://o.example/v1", region: us-east-1}
                models:
                  m: {deployments: [{provider: o}]}
                """).hasMessage("providers.o.region: only used by type bedrock (test.yaml:6)");
    }

    @Test
    void anEmbeddingModel_refusedWithTheLine() {
        assertError(config(KEYS, "type: embedding\n" + CLAUDE))
                .hasMessageStartingWith("models.m.deployments[0].model: a bedrock deployment serves chat models only");
    }
}
