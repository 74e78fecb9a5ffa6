package io.modelgateway.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** The {@code azure_openai} provider block: its fields, their checks, and errors naming the field and line. */
class AzureOpenAiConfigTest {
    private static final String CLIENT_SECRET = "Xy8Q~test.Secret_value-0123456789abcdEFGH";
    private static final String CLIENT_ID = "b1a2c3d4-e5f6-4789-9abc-def012345678";
    private static final Map<String, String> ENV = Map.of("GATEWAY_KEY", "sk-test-gateway-0123456789",
            "AZURE_OPENAI_API_KEY", "5c1f0e9a7b3d4e2f8a6c0b1d9e7f3a2c", "AZURE_OPENAI_AD_TOKEN", "eyJ0.eyJh.c2ln",
            "AZURE_CLIENT_SECRET", CLIENT_SECRET, "EMPTY", "");

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

    /** An azure_openai provider {@code az} on line 6 whose {@code entra} block (line 9 on) has {@code lines}. */
    private static String entra(String... lines) {
        StringBuilder b = new StringBuilder();
        for (String line : lines) {
            b.append("\n      ").append(line);
        }
        return config("providers:", "  az:", "    type: azure_openai", "    base_url: https://r.openai.azure.com",
                "    entra:" + b);
    }

    @Test
    void entra_anApplicationsClientCredentials_scopeAndTokenUrlByDefault_secretNeverShown() throws Exception {
        ProviderConfig p = parse(entra("tenant_id: contoso.onmicrosoft.com", "client_id: " + CLIENT_ID,
                "client_secret: ${AZURE_CLIENT_SECRET}")).providers().get("az");
        assertThat(p.azure().credential()).isEqualTo(AzureSettings.Credential.ENTRA_ID);
        assertThat(p.apiKey()).as("no static credential").isNull();
        assertThat(p.azure().entra()).isEqualTo(new AzureSettings.Entra("contoso.onmicrosoft.com", CLIENT_ID,
                CLIENT_SECRET, "https://cognitiveservices.azure.com/.default",
                URI.create("https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")));
        assertThat(p.toString()).doesNotContain(CLIENT_SECRET).contains("clientSecret=(set)");
    }

    @Test
    void entra_scopeAndTokenUrl_forASovereignCloudOrALocalEndpoint() throws Exception {
        ProviderConfig gov = parse(entra("tenant_id: 5e3c7a91-0b2d-4f6e-8a1c-9d7b3e5f2a40", "client_id: " + CLIENT_ID,
                "client_secret: ${AZURE_CLIENT_SECRET}", "scope: https://cognitiveservices.azure.us/.default",
                "token_url: https://login.microsoftonline.us/5e3c7a91-0b2d-4f6e-8a1c-9d7b3e5f2a40/oauth2/v2.0/token"))
                .providers().get("az");
        assertThat(gov.azure().entra().scope()).isEqualTo("https://cognitiveservices.azure.us/.default");
        assertThat(gov.azure().entra().tokenUrl()).hasHost("login.microsoftonline.us");
        ProviderConfig local = parse(entra("tenant_id: t1", "client_id: " + CLIENT_ID,
                "client_secret: ${AZURE_CLIENT_SECRET}", "token_url: http://127.0.0.1:8400/t1/oauth2/v2.0/token"))
                .providers().get("az");
        assertThat(local.azure().entra().tokenUrl()).hasToString("http://127.0.0.1:8400/t1/oauth2/v2.0/token");
    }

    @Test
    void entra_eachFieldChecked_errorsNameTheFieldAndLine_neverTheSecret() {
        String id = "client_id: " + CLIENT_ID;
        String secret = "client_secret: ${AZURE_CLIENT_SECRET}";
        assertError(entra("tenant_id: t1", id))
                .hasMessage("providers.az.entra.client_secret: is required (test.yaml:10)");
        assertError(entra("tenant_id: t1", id, "client_secret: " + CLIENT_SECRET))
                .hasMessage("providers.az.entra.client_secret: must be an environment reference such as "
                        + "${AZURE_CLIENT_SECRET}: the client secret is never written in the file (test.yaml:12)");
        assertError(entra("tenant_id: t1", id, "client_secret: ${EMPTY:-}"))
                .hasMessage("providers.az.entra.client_secret: is empty (is the environment variable set?) "
                        + "(test.yaml:12)");
        assertError(entra("tenant_id: t1", "client_id: my-app", secret))
                .hasMessageStartingWith("providers.az.entra.client_id: must be the application (client) id, a GUID")
                .hasMessageEndingWith("(test.yaml:11)");
        assertError(entra("tenant_id: common", id, secret))
                .hasMessage("providers.az.entra.tenant_id: the client-credentials grant needs the application's own "
                        + "tenant, not 'common' (test.yaml:10)");
        assertError(entra("tenant_id: 'contoso/../x'", id, secret))
                .hasMessageStartingWith("providers.az.entra.tenant_id: must be the directory (tenant) id");
        assertError(entra(id, secret)).hasMessage("providers.az.entra.tenant_id: is required (test.yaml:10)");
        assertError(entra("tenant_id: t1", id, secret, "scope: https://cognitiveservices.azure.com/user_impersonation"))
                .hasMessageStartingWith("providers.az.entra.scope: the client-credentials grant takes one scope, the "
                        + "resource's followed by /.default")
                .hasMessageEndingWith("(test.yaml:13)");
        assertError(entra("tenant_id: t1", id, secret, "token_url: http://login.example.com/t1/oauth2/v2.0/token"))
                .hasMessageStartingWith("providers.az.entra.token_url: must be https: the client secret is sent to it")
                .hasMessageEndingWith("(test.yaml:13)");
        assertError(entra("tenant_id: t1", id, secret, "token_url: 'https://u:p@login.example.com/t1/token'"))
                .hasMessageStartingWith("providers.az.entra.token_url: must not hold credentials");
        assertError(entra("tenant_id: t1", id, secret, "token_url: ftp://login.example.com/t1"))
                .hasMessageStartingWith("providers.az.entra.token_url: must be an http:// or https:// URL");
        assertError(entra("tenant: t1", id, secret))
                .hasMessageStartingWith("providers.az.entra.tenant: unknown field (did you mean tenant_id?)");
        assertError(config("providers:", "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com', entra: x}"))
                .hasMessage("providers.az.entra: must be a mapping of fields, not a string (test.yaml:6)");
        assertError(config("providers:", "  az: {type: azure_openai, base_url: 'https://r.openai.azure.com',",
                "       api_key: '${AZURE_OPENAI_API_KEY}',",
                "       entra: {tenant_id: t1, " + id + ", client_secret: '${AZURE_CLIENT_SECRET}'}}"))
                .hasMessageStartingWith("providers.az.entra: give one credential: api_key, entra_token or entra")
                .hasMessageEndingWith("(test.yaml:8)");
        assertError(config("providers:", "  az: {type: openai, base_url: 'https://o.example/v1', api_key: x,",
                "       entra: {tenant_id: t1}}"))
                .hasMessage("providers.az.entra: only used by type azure_openai (test.yaml:7)");
        assertError(entra("tenant_id: t1", id, "client_secret: 'x${AZURE_CLIENT_SECRET} y'"))
                .hasMessageStartingWith("providers.az.entra.client_secret: must be printable ASCII without spaces")
                .hasMessageNotContaining(CLIENT_SECRET);
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
