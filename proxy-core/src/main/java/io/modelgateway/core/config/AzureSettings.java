package io.modelgateway.core.config;

import java.net.URI;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What an {@code azure_openai} provider needs besides a base URL: which of Azure's two path schemes it is called on,
 * and how its credential (the provider's {@link ProviderConfig#apiKey()}) is sent.
 *
 * <p>Paths: with an {@code api_version}, the deployment form, the deployment (the upstream model name) in the path and
 * the version in the query — {@code /openai/deployments/{deployment}/chat/completions?api-version=2024-10-21}, and
 * {@code …/embeddings} likewise; without one, the v1 form — {@code /openai/v1/chat/completions} and
 * {@code /openai/v1/embeddings}, the deployment named in the body's {@code model}. Either way the body's {@code model}
 * is the deployment name (spliced in when the caller's model name differs, as for any provider).
 *
 * @param apiVersion the {@code api-version} query value ({@code YYYY-MM-DD} or {@code YYYY-MM-DD-preview}); null for
 *                   the v1 paths
 * @param credential how the provider's credential is sent
 * @param entra      with {@link Credential#ENTRA_ID}: the Entra application whose tokens are sent; else null
 */
public record AzureSettings(String apiVersion, Credential credential, Entra entra) {
    /** An Azure OpenAI {@code api-version}: a date, optionally a preview one. */
    public static final Pattern API_VERSION = Pattern.compile("\\d{4}-\\d{2}-\\d{2}(-preview)?");

    /** How the credential goes upstream. */
    public enum Credential {
        /** {@code api_key}: the resource's key, as the {@code api-key} header. */
        API_KEY,
        /** {@code entra_token}: a Microsoft Entra access token, as {@code Authorization: Bearer}. */
        ENTRA_TOKEN,
        /**
         * {@code entra}: Microsoft Entra ID access tokens the gateway obtains itself by the application's
         * client-credentials grant and refreshes before they expire, as {@code Authorization: Bearer}.
         */
        ENTRA_ID
    }

    /**
     * A Microsoft Entra ID application (a service principal) whose OAuth 2.0 client-credentials grant obtains the
     * provider's access tokens: {@code client_id}, {@code client_secret} and {@code scope} posted to the tenant's
     * token endpoint. Equal by every field, the secret included, so a reload with the same application keeps its
     * tokens and one with a rotated secret gets new ones.
     *
     * @param tenantId     the directory (tenant) id, or its domain ({@code contoso.onmicrosoft.com})
     * @param clientId     the application (client) id
     * @param clientSecret the client secret, from the environment; never in {@link #toString}
     * @param scope        the resource's {@code .default} scope ({@link #DEFAULT_SCOPE} for Azure OpenAI)
     * @param tokenUrl     where the grant is posted ({@link #defaultTokenUrl} unless the config says otherwise)
     */
    public record Entra(String tenantId, String clientId, String clientSecret, String scope, URI tokenUrl) {
        /** Azure OpenAI's (Azure AI services') resource, as a client-credentials scope. */
        public static final String DEFAULT_SCOPE = "https://cognitiveservices.azure.com/.default";

        public Entra {
            Objects.requireNonNull(tenantId, "tenantId");
            Objects.requireNonNull(clientId, "clientId");
            Objects.requireNonNull(clientSecret, "clientSecret");
            Objects.requireNonNull(scope, "scope");
            Objects.requireNonNull(tokenUrl, "tokenUrl");
        }

        /** The Microsoft identity platform's (v2.0) token endpoint of {@code tenantId} in Azure's global cloud. */
        public static URI defaultTokenUrl(String tenantId) {
            return URI.create("https://login.microsoftonline.com/" + tenantId + "/oauth2/v2.0/token");
        }

        /** Never the secret. */
        @Override
        public String toString() {
            return "Entra[tenantId=" + tenantId + ", clientId=" + clientId + ", clientSecret=(set), scope=" + scope
                    + ", tokenUrl=" + tokenUrl + "]";
        }
    }

    /** With a key or a static token (no Entra application). */
    public AzureSettings(String apiVersion, Credential credential) {
        this(apiVersion, credential, null);
    }

    public AzureSettings {
        Objects.requireNonNull(credential, "credential");
        if (apiVersion != null && !API_VERSION.matcher(apiVersion).matches()) {
            throw new IllegalArgumentException("apiVersion must be YYYY-MM-DD or YYYY-MM-DD-preview");
        }
        if ((credential == Credential.ENTRA_ID) != (entra != null)) {
            throw new IllegalArgumentException("an Entra application goes with credential ENTRA_ID, and only there");
        }
    }

    /** Whether requests use the v1 paths ({@code /openai/v1/…}, no {@code api-version}). */
    public boolean v1() {
        return apiVersion == null;
    }
}
