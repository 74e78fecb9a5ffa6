package io.modelgateway.core.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.AzureOpenAiFake;
import io.modelgateway.core.testing.EntraFake;
import io.modelgateway.core.testing.ScriptedUpstream.Received;
import io.modelgateway.core.testing.TestGateway;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Azure OpenAI through the official Node SDKs ({@code src/test/node/azure.test.mjs}): the openai SDK's own
 * {@code AzureOpenAI} client checks the {@link AzureOpenAiFake} directly, then the openai and Anthropic SDKs drive the
 * gateway with that fake behind it — the deployment paths ({@code az-chat}), the v1 paths ({@code az-chat-v1}), a
 * static Entra token ({@code az-chat-entra}) and an Entra ID application whose tokens the gateway obtains from
 * {@link EntraFake} ({@code az-chat-entra-id}), chat and messages, streams included, and embeddings. Afterwards, what
 * reached the fake from the gateway is checked here: Azure's paths, the {@code api-version}, the provider's credential
 * only.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AzureOpenAiSdkTest {
    private static AzureOpenAiFake azure;
    private static EntraFake entra;
    private static TestGateway gateway;

    @BeforeAll
    static void startFakeAndGateway() throws Exception {
        OfficialSdkCompatibilityTest.installNodePackagesIfStale();
        azure = new AzureOpenAiFake();
        entra = EntraFake.start();
        azure.trust(entra);
        String providers = """
                  azure: {type: azure_openai, base_url: "%1$s", api_key: "${AZURE_OPENAI_API_KEY}", api_version: 2024-10-21}
                  azure-v1: {type: azure_openai, base_url: "%1$s", api_key: "${AZURE_OPENAI_API_KEY}"}
                  azure-entra: {type: azure_openai, base_url: "%1$s", entra_token: "${AZURE_OPENAI_AD_TOKEN}", api_version: 2025-04-01-preview}
                  azure-entra-id:
                    type: azure_openai
                    base_url: "%1$s"
                    entra: {tenant_id: %2$s, client_id: %3$s, client_secret: "${AZURE_CLIENT_SECRET}", token_url: "%4$s"}
                """.formatted(azure.endpoint(), EntraFake.TENANT_ID, EntraFake.CLIENT_ID, entra.tokenUrl());
        String models = """
                  az-chat: {deployments: [{provider: azure, model: %1$s}]}
                  az-chat-v1: {deployments: [{provider: azure-v1, model: %1$s}]}
                  az-chat-entra: {deployments: [{provider: azure-entra, model: %1$s}]}
                  az-chat-entra-id: {deployments: [{provider: azure-entra-id, model: %1$s}]}
                  az-embed: {type: embedding, supports_dimensions: true, deployments: [{provider: azure, model: %2$s}]}
                """.formatted(AzureOpenAiFake.CHAT_DEPLOYMENT, AzureOpenAiFake.EMBEDDING_DEPLOYMENT);
        gateway = TestGateway.start(TestGateway.simulatorConfig(providers, models), null, Map.of(
                "AZURE_OPENAI_API_KEY", AzureOpenAiFake.API_KEY, "AZURE_OPENAI_AD_TOKEN", AzureOpenAiFake.ENTRA_TOKEN,
                "AZURE_CLIENT_SECRET", EntraFake.CLIENT_SECRET));
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (azure != null) {
            azure.close();
        }
        if (entra != null) {
            entra.close();
        }
    }

    @Test
    @Order(1)
    void officialSdks_fakeCheckedByAzureOpenAiClient_thenOpenAiAndAnthropicThroughTheGateway_allPass()
            throws Exception {
        // 9 fake checks + 6 openai tests x 4 chat models + 1 embeddings + 6 Anthropic tests x 3 models.
        Map<String, String> vars = new HashMap<>();
        vars.put("AZURE_FAKE_ENDPOINT", azure.endpoint());
        vars.put("AZURE_FAKE_API_KEY", AzureOpenAiFake.API_KEY);
        vars.put("AZURE_FAKE_ENTRA_TOKEN", AzureOpenAiFake.ENTRA_TOKEN);
        vars.put("AZURE_FAKE_API_VERSION", "2024-10-21");
        vars.put("AZURE_FAKE_CHAT_DEPLOYMENT", AzureOpenAiFake.CHAT_DEPLOYMENT);
        vars.put("AZURE_FAKE_EMBED_DEPLOYMENT", AzureOpenAiFake.EMBEDDING_DEPLOYMENT);
        vars.put("GATEWAY_AZURE_CHAT_MODELS", "az-chat,az-chat-v1,az-chat-entra,az-chat-entra-id");
        vars.put("GATEWAY_AZURE_MESSAGES_MODELS", "az-chat,az-chat-v1,az-chat-entra-id");
        vars.put("GATEWAY_AZURE_EMBED_MODEL", "az-embed");
        // gateway-env.mjs, shared by every SDK test file, asks for these too
        vars.put("GATEWAY_CHAT_MODELS", "az-chat");
        vars.put("GATEWAY_EMBED_MODELS", "az-embed");
        vars.put("GATEWAY_MESSAGES_MODELS", "az-chat");
        OfficialSdkCompatibilityTest.runNodeTests("azure.test.mjs", gateway.port(), vars, 52);
    }

    /** What the gateway sent: Azure's paths and version, the provider's credential alone, the deployment as model. */
    @Test
    @Order(2)
    void gatewayRequests_usedAzuresPathsAndOnlyTheProvidersCredential() {
        // The gateway's requests are the ones sent with its user agent; the SDKs' own carry theirs.
        List<Received> fromGateway = azure.received().stream()
                .filter(r -> String.valueOf(r.headers().get("user-agent")).startsWith("model-gateway/")).toList();
        assertThat(fromGateway).extracting(Received::uri).contains(
                "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21",
                "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview",
                "/openai/deployments/embed-3-small/embeddings?api-version=2024-10-21",
                "/openai/v1/chat/completions");
        int obtained = 0;
        for (Received r : fromGateway) {
            String credentials = r.all("api-key") + " " + r.all("authorization");
            assertThat(credentials).as(r.uri()).doesNotContain(TestGateway.KEY);
            if (r.uri().contains("2025-04-01-preview")) {
                assertThat(r.all("authorization")).as(r.uri()).containsExactly("Bearer " + AzureOpenAiFake.ENTRA_TOKEN);
                assertThat(r.all("api-key")).isEmpty();
            } else if (!r.all("authorization").isEmpty()) {
                // azure-entra-id (v1 paths): a token the gateway obtained from the Entra fake, for Azure OpenAI
                assertThat(r.uri()).isEqualTo("/openai/v1/chat/completions");
                assertThat(r.all("authorization")).singleElement().asString().startsWith("Bearer ")
                        .satisfies(a -> assertThat(entra.accepts(a.substring(7), EntraFake.AUDIENCE)).isTrue());
                assertThat(r.all("api-key")).isEmpty();
                obtained++;
            } else {
                assertThat(r.all("api-key")).as(r.uri()).containsExactly(AzureOpenAiFake.API_KEY);
                assertThat(r.all("authorization")).isEmpty();
            }
            assertThat(r.body()).as("the body names the deployment")
                    .containsAnyOf("\"model\":\"gpt-4o-prod\"", "\"model\":\"embed-3-small\"");
        }
        assertThat(obtained).as("requests of az-chat-entra-id").isGreaterThanOrEqualTo(12);
        assertThat(entra.issuedCount()).as("one grant for all of them").isEqualTo(1);
    }
}
