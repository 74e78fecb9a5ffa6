package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** The {@code azure_openai} provider block: its fields, their checks, and errors naming the field and line. */
class AzureOpenAiConfigTest {
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-test-gateway-0123456789",
            "AZURE_OPENAI_API_KEY", "5c1f0e9a7b3d4e2f8a6c0b1d9e7f3a2c", "AZURE_OPENAI_AD_TOKEN", "eyJ0.eyJh.c2ln");

    /** Keys on lines 1-4, the provider block on line 5 and after, a model on the provider. */
    private static String config(String... providerLines) {
        return "keys:\n  - name: default\n    key: ${GATEWAY_KEY}\n    models: [\"*\"]\n"
                + String.join("\n", providerLines) + "\n"
                + "models: {gpt: {deployments: [{provider: az, model: my-gpt-4o}]}}\n";
    }

    private static GatewayConfig parse(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "test.yaml", ENV, null);
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> assertError(String yaml) {
        return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
    }

    @Test
    void deploymentForm_apiVersionAndApiKey() throws Exception {
        ProviderConfig p = parse(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://my-resource.openai.azure.com/', "
                        + "api_key: '${AZURE_OPENAI_API_KEY}', api_version: 2024-10-21}"))
                .providers().get("az");
        assertThat(p.type()).isEqualTo(ProviderType.AZURE_OPENAI);
        assertThat(p.type().style()).isEqualTo(io.modelgateway.codecs.ApiStyle.OPENAI);
        assertThat(p.baseUrl()).hasToString("https://my-resource.openai.azure.com");
        assertThat(p.apiKey()).isEqualTo("5c1f0e9a7b3d4e2f8a6c0b1d9e7f3a2c");
        assertThat(p.azure()).isEqualTo(new AzureSettings("2024-10-21", AzureSettings.Credential.API_KEY));
        assertThat(p.azure().v1()).isFalse();
        assertThat(p.toString()).doesNotContain("5c1f0e9a").contains("apiKey=(set)");
    }

    @Test
    void v1Form_whenApiVersionLeftOut_entraTokenAsCredential_previewVersionAccepted() throws Exception {
        GatewayConfig c = parse(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', entra_token: '${AZURE_OPENAI_AD_TOKEN}'}",
                "  az2: {type: azure_openai, base_url: 'https://r.openai.azure.com', api_key: '${AZURE_OPENAI_API_KEY}',"
                        + " api_version: 2025-04-01-preview}"));
        ProviderConfig p = c.providers().get("az");
        assertThat(p.azure().v1()).isTrue();
        assertThat(p.azure().credential()).isEqualTo(AzureSettings.Credential.ENTRA_TOKEN);
        assertThat(p.apiKey()).isEqualTo("eyJ0.eyJh.c2ln");
        assertThat(p.toString()).doesNotContain("eyJ0");
        assertThat(c.providers().get("az2").azure().apiVersion()).isEqualTo("2025-04-01-preview");
    }

    @Test
    void badApiVersion_namesTheFieldAndLine() {
        assertError(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', api_key: x, api_version: 'v1'}"))
                .hasMessageStartingWith("providers.az.api_version: must be an Azure OpenAI API version such as "
                        + "2024-10-21")
                .hasMessageEndingWith("(test.yaml:6)");
        assertError(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', api_key: x,",
                "       api_version: '2024-10-21&x=1'}"))
                .hasMessageStartingWith("providers.az.api_version: must be an Azure OpenAI API version")
                .hasMessageEndingWith("(test.yaml:7)");
    }

    @Test
    void credential_exactlyOne_andNeverEmpty() {
        assertError(config("providers:", "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com'}"))
                .hasMessageContaining("type azure_openai needs a credential: api_key")
                .hasMessageEndingWith("(test.yaml:6)");
        assertError(config("providers:", "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com',",
                "       api_key: '${AZURE_OPENAI_API_KEY}', entra_token: '${AZURE_OPENAI_AD_TOKEN}'}"))
                .hasMessage("providers.az.entra_token: give either api_key or entra_token, not both (test.yaml:7)");
        assertError(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', entra_token: '${NOT_SET_HERE}'}"))
                .hasMessageStartingWith("providers.az.entra_token:");
        assertError(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', entra_token: 'Bearer eyJ0'}"))
                .hasMessageStartingWith("providers.az.entra_token: must be the token alone");
    }

    @Test
    void baseUrl_requiredAndTheResourceEndpointOnly() {
        assertError(config("providers:", "  az: {type: azure_openai, api_key: x}"))
                .hasMessageStartingWith("providers.az.base_url: is required for type azure_openai");
        assertError(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com/openai/v1', api_key: x}"))
                .hasMessageStartingWith("providers.az.base_url: for type azure_openai give the resource endpoint only")
                .hasMessageEndingWith("(test.yaml:6)");
    }

    @Test
    void azureFields_onAnotherType_areRefused_andUnknownTypeListsAzure() {
        assertError(config("providers:",
                "  az: {type: openai, base_url: 'https://o.example/v1', api_key: x, api_version: 2024-10-21}"))
                .hasMessage("providers.az.api_version: only used by type azure_openai (test.yaml:6)");
        assertError(config("providers:",
                "  az: {type: anthropic, base_url: 'https://a.example', entra_token: x}"))
                .hasMessage("providers.az.entra_token: only used by type azure_openai (test.yaml:6)");
        assertError(config("providers:", "  az: {type: azure, base_url: 'https://r.openai.azure.com', api_key: x}"))
                .hasMessageContaining("must be one of openai, anthropic, simulator, azure_openai, bedrock, vertex, gemini (got 'azure')");
    }

    @Test
    void maxTokensField_appliesToAzureToo() throws Exception {
        ProviderConfig p = parse(config("providers:",
                "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', api_key: x, max_tokens_field: max_tokens}"))
                .providers().get("az");
        assertThat(p.maxTokensField()).isEqualTo("max_tokens");
    }

    @Test
    void shippedExample_withFakeEnv_loads() throws Exception {
        GatewayConfig config = ConfigLoader.load(java.nio.file.Path.of("..", "conf", "examples", "azure-openai.yaml"),
                ENV, null);
        ProviderConfig azure = config.providers().get("azure");
        assertThat(azure.azure()).isEqualTo(new AzureSettings("2024-10-21", AzureSettings.Credential.API_KEY));
        assertThat(azure.baseUrl()).hasToString("https://my-resource.openai.azure.com");
        assertThat(config.providers().get("azure-v1").azure().v1()).isTrue();
        assertThat(config.model("gpt-4o").deployments().get(0).upstreamModel()).isEqualTo("my-gpt-4o-deployment");
        assertThat(config.model("text-embedding-3-small").type()).isEqualTo(ModelType.EMBEDDING);
    }

    @Test
    void benchConfig_azureChatGoesToTheBenchUpstreamAsAnAzureResource() throws Exception {
        GatewayConfig config = ConfigLoader.load(java.nio.file.Path.of("..", "conf", "bench", "gateway-bench.yaml"),
                Map.of("GATEWAY_KEY", "sk-bench-0123456789", "BENCH_SIM_PORT", "9999"), "127.0.0.1:0");
        ProviderConfig p = config.model("azure-chat").deployments().get(0).provider();
        assertThat(p.type()).isEqualTo(ProviderType.AZURE_OPENAI);
        assertThat(p.baseUrl().getPort()).isEqualTo(9999);
        assertThat(p.azure().apiVersion()).isEqualTo("2024-10-21");
    }
}
