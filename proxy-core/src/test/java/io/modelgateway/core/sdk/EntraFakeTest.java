package io.modelgateway.core.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.AzureOpenAiFake;
import io.modelgateway.core.testing.EntraFake;
import io.modelgateway.core.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fake Microsoft Entra ID ({@link EntraFake}) checked by Microsoft's own client, never by the gateway's code
 * ({@code src/test/node/entra.test.mjs}): the {@code ClientSecretCredential} of {@code @azure/identity} (MSAL for
 * Node underneath, both unmodified test dependencies), its authority host pointed at the fake's HTTPS listener,
 * obtains tokens and reads the fake's refusals; the openai SDK's {@code AzureOpenAI} client calls
 * {@link AzureOpenAiFake} with such a token. Afterwards, what Microsoft's client put on the wire is checked here: the
 * OpenID configuration read first, then the grant's form — the four parameters the gateway sends too
 * ({@code EntraEndToEndTest}).
 */
class EntraFakeTest {

    @Test
    void azureIdentityClientSecretCredential_getsTokensFromTheFake_andAzureOpenAiTakesThem() throws Exception {
        OfficialSdkCompatibilityTest.installNodePackagesIfStale();
        Path dir = Files.createTempDirectory("entra-tls");
        TestCertificates authority = TestCertificates.newAuthority(dir, "Entra");
        try (EntraFake entra = EntraFake.startWithTls(authority)) {
            AzureOpenAiFake azure = new AzureOpenAiFake();
            try {
                azure.trust(entra);
                Map<String, String> vars = new HashMap<>();
                vars.put("ENTRA_FAKE_AUTHORITY_HOST", entra.httpsAuthorityHost());
                vars.put("ENTRA_FAKE_TENANT_ID", EntraFake.TENANT_ID);
                vars.put("ENTRA_FAKE_CLIENT_ID", EntraFake.CLIENT_ID);
                vars.put("ENTRA_FAKE_CLIENT_SECRET", EntraFake.CLIENT_SECRET);
                vars.put("AZURE_FAKE_ENDPOINT", azure.endpoint());
                vars.put("AZURE_FAKE_CHAT_DEPLOYMENT", AzureOpenAiFake.CHAT_DEPLOYMENT);
                vars.put("NODE_EXTRA_CA_CERTS", authority.caFile().toString());
                // gateway-env.mjs (for its fetch recorder) asks for these; no gateway is called here.
                vars.put("GATEWAY_CHAT_MODELS", "none");
                vars.put("GATEWAY_EMBED_MODELS", "none");
                vars.put("GATEWAY_MESSAGES_MODELS", "none");
                OfficialSdkCompatibilityTest.runNodeTests("entra.test.mjs", 9, vars, 6);

                assertThat(entra.paths).as("MSAL reads the tenant's metadata before its first grant")
                        .contains("/" + EntraFake.TENANT_ID + "/v2.0/.well-known/openid-configuration",
                                "/00000000-1111-2222-3333-444444444444/v2.0/.well-known/openid-configuration");
                Map<String, String> granted = entra.tokenRequests.stream()
                        .filter(f -> EntraFake.CLIENT_SECRET.equals(f.get("client_secret"))
                                && EntraFake.SCOPE.equals(f.get("scope")))
                        .findFirst().orElseThrow();
                assertThat(granted).containsEntry("grant_type", "client_credentials")
                        .containsEntry("client_id", EntraFake.CLIENT_ID);
                assertThat(azure.received()).as("the AzureOpenAI client's call").isNotEmpty()
                        .allSatisfy(r -> assertThat(r.all("authorization")).singleElement().asString()
                                .startsWith("Bearer ey"));
            } finally {
                azure.close();
            }
        }
    }
}
