package io.modelgateway.core.upstream;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.core.config.AzureSettings.Entra;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * How an azure_openai provider's Microsoft Entra ID application obtains its access tokens: the OAuth 2.0
 * client-credentials grant (RFC 6749 4.4) as the Microsoft identity platform takes it — {@code grant_type},
 * {@code client_id}, {@code client_secret} and {@code scope} form-encoded and posted to the tenant's v2.0 token
 * endpoint, which answers {@code token_type}, {@code expires_in} and {@code access_token}. {@link AccessTokens} caches
 * and refreshes the token. Equal by the application (its secret included), so reloads of the same one share its
 * tokens.
 */
record EntraGrant(Entra entra) implements AccessTokens.Grant {

    @Override
    public URI tokenUrl() {
        return entra.tokenUrl();
    }

    @Override
    public String form() {
        return "grant_type=client_credentials&client_id=" + encode(entra.clientId()) + "&client_secret="
                + encode(entra.clientSecret()) + "&scope=" + encode(entra.scope());
    }

    @Override
    public String describe() {
        return "Entra application " + entra.clientId() + " (tenant " + entra.tenantId() + ")";
    }

    @Override
    public String tokenName() {
        return "the provider's Microsoft Entra ID access token";
    }

    /**
     * The OAuth error code and, from Entra's {@code error_codes}, the first AADSTS number ({@code invalid_client
     * AADSTS7000215}: a wrong secret): what an operator looks up. Entra's {@code error_description} is left out: it
     * quotes the request (the application id, the scope) and is free text.
     */
    @Override
    public String refusal(JsonNode body) {
        String code = AccessTokens.oauthError(body);
        JsonNode first = body.path("error_codes").path(0);
        if (first.isIntegralNumber() && first.canConvertToInt() && first.asInt() > 0) {
            return (code.isEmpty() ? "" : code + " ") + "AADSTS" + first.asInt();
        }
        return code;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
