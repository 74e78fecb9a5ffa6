package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The per-provider parts of an upstream request, worked out once: what every request then carries. */
class UpstreamTargetTest {

    private static ProviderConfig provider(ProviderType type, String base, String key, Map<String, String> headers) {
        return new ProviderConfig("p", type, URI.create(base), key, headers, List.of(), 1000, null, null, false);
    }

    @Test
    void openai_pathsHostAndBearerCredential() {
        UpstreamTarget t = new UpstreamTarget(provider(ProviderType.OPENAI, "http://127.0.0.1:9090/v1/", "sk-up",
                Map.of("X-Extra", "yes")));
        assertThat(t.origin).isEqualTo("http://127.0.0.1:9090");
        assertThat(t.host.toString()).isEqualTo("127.0.0.1:9090");
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS)).isEqualTo("/v1/chat/completions");
        assertThat(t.path(Endpoint.EMBEDDINGS)).isEqualTo("/v1/embeddings");
        assertThat(t.credentialName.toString()).isEqualTo("authorization");
        assertThat(t.credentialValue.toString()).isEqualTo("Bearer sk-up");
        assertThat(t.extraNames).extracting(Object::toString).containsExactly("x-extra");
        assertThat(t.extraValues).extracting(Object::toString).containsExactly("yes");
    }

    @Test
    void anthropic_defaultPortLeftOutOfHost_xApiKey_noKeyNoCredential() {
        UpstreamTarget t = new UpstreamTarget(provider(ProviderType.ANTHROPIC, "https://api.example.test", "sk-a", Map.of()));
        assertThat(t.host.toString()).isEqualTo("api.example.test");
        assertThat(t.path(Endpoint.MESSAGES)).isEqualTo("/v1/messages");
        assertThat(t.credentialName.toString()).isEqualTo("x-api-key");

        UpstreamTarget none = new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", null, Map.of()));
        assertThat((Object) none.credentialName).isNull();
        assertThat((Object) none.credentialValue).isNull();
    }

    @Test
    void aConfigValueThatWouldSplitTheRequest_isRefusedWhenTheTargetIsBuilt() {
        // The per-request headers skip Netty's validation, so a line break must be caught here, once.
        assertThatThrownBy(() -> new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", null,
                Map.of("x-extra", "a\r\nx-injected: 1")))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new UpstreamTarget(provider(ProviderType.OPENAI, "http://h/v1", "sk\r\nx: y",
                Map.of()))).isInstanceOf(IllegalArgumentException.class);
    }

    // ---- azure_openai

    private static ProviderConfig azure(String apiVersion, io.modelgateway.core.config.AzureSettings.Credential c) {
        return new ProviderConfig("az", ProviderType.AZURE_OPENAI, URI.create("https://my-resource.openai.azure.com"),
                "az-secret", Map.of(), List.of(), 1000, null, "max_completion_tokens", false, null, null, null,
                null, new io.modelgateway.core.config.AzureSettings(apiVersion, c));
    }

    @Test
    void azure_deploymentForm_deploymentInThePathVersionInTheQuery_apiKeyHeader() {
        UpstreamTarget t = new UpstreamTarget(azure("2024-10-21",
                io.modelgateway.core.config.AzureSettings.Credential.API_KEY));
        assertThat(t.host.toString()).isEqualTo("my-resource.openai.azure.com");
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS, "gpt-4o-prod"))
                .isEqualTo("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21");
        assertThat(t.path(Endpoint.EMBEDDINGS, "embed-3-small"))
                .isEqualTo("/openai/deployments/embed-3-small/embeddings?api-version=2024-10-21");
        // Made once per deployment: the second request gets the same string.
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS, "gpt-4o-prod"))
                .isSameAs(t.path(Endpoint.CHAT_COMPLETIONS, "gpt-4o-prod"));
        assertThat(t.credentialName.toString()).isEqualTo("api-key");
        assertThat(t.credentialValue.toString()).isEqualTo("az-secret");
    }

    @Test
    void azure_v1Form_oneFixedPath_entraTokenAsBearer() {
        UpstreamTarget t = new UpstreamTarget(azure(null,
                io.modelgateway.core.config.AzureSettings.Credential.ENTRA_TOKEN));
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS, "gpt-4o-prod")).isEqualTo("/openai/v1/chat/completions");
        assertThat(t.path(Endpoint.EMBEDDINGS, "any")).isEqualTo("/openai/v1/embeddings");
        assertThat(t.credentialName.toString()).isEqualTo("authorization");
        assertThat(t.credentialValue.toString()).isEqualTo("Bearer az-secret");
    }

    @Test
    void azure_entraApplication_tokensObtainedNotConfigured_clientSecretRedacted_sharedBySameApplication() {
        io.modelgateway.core.config.AzureSettings.Entra app = new io.modelgateway.core.config.AzureSettings.Entra(
                "t1", "b1a2c3d4-e5f6-4789-9abc-def012345678", "Xy8Q~client-secret-value-0123",
                io.modelgateway.core.config.AzureSettings.Entra.DEFAULT_SCOPE,
                io.modelgateway.core.config.AzureSettings.Entra.defaultTokenUrl("t1"));
        java.util.function.Supplier<ProviderConfig> provider = () -> new ProviderConfig("az", ProviderType.AZURE_OPENAI,
                URI.create("https://my-resource.openai.azure.com"), null, Map.of(), List.of(), 1000, null,
                "max_completion_tokens", false, null, null, null, null, new io.modelgateway.core.config.AzureSettings(
                        null, io.modelgateway.core.config.AzureSettings.Credential.ENTRA_ID, app));
        UpstreamTarget t = new UpstreamTarget(provider.get());
        assertThat((Object) t.credentialName).as("the header comes from the token cache, per request").isNull();
        assertThat(t.tokens).isNotNull().isSameAs(new UpstreamTarget(provider.get()).tokens);
        assertThat(t.redactor.redact("echo Xy8Q~client-secret-value-0123")).isEqualTo("echo [redacted]");
    }

    @Test
    void azure_deploymentName_cannotAddASegmentOrAQuery() {
        assertThat(AzurePaths.encode("my.gpt-4o_v2~x")).isEqualTo("my.gpt-4o_v2~x");
        assertThat(AzurePaths.encode("a/../b?x=1#f")).isEqualTo("a%2F..%2Fb%3Fx%3D1%23f");
        assertThat(AzurePaths.encode("..")).isEqualTo("%2E%2E");
        assertThat(AzurePaths.encode("é d")).isEqualTo("%C3%A9%20d");
        UpstreamTarget t = new UpstreamTarget(azure("2024-10-21",
                io.modelgateway.core.config.AzureSettings.Credential.API_KEY));
        assertThat(t.path(Endpoint.CHAT_COMPLETIONS, "x/../../admin"))
                .isEqualTo("/openai/deployments/x%2F..%2F..%2Fadmin/chat/completions?api-version=2024-10-21");
    }
}
