package io.modelgateway.core.config;

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
 */
public record AzureSettings(String apiVersion, Credential credential) {
    /** An Azure OpenAI {@code api-version}: a date, optionally a preview one. */
    public static final Pattern API_VERSION = Pattern.compile("\\d{4}-\\d{2}-\\d{2}(-preview)?");

    /** How the credential goes upstream. */
    public enum Credential {
        /** {@code api_key}: the resource's key, as the {@code api-key} header. */
        API_KEY,
        /** {@code entra_token}: a Microsoft Entra access token, as {@code Authorization: Bearer}. */
        ENTRA_TOKEN
    }

    public AzureSettings {
        Objects.requireNonNull(credential, "credential");
        if (apiVersion != null && !API_VERSION.matcher(apiVersion).matches()) {
            throw new IllegalArgumentException("apiVersion must be YYYY-MM-DD or YYYY-MM-DD-preview");
        }
    }

    /** Whether requests use the v1 paths ({@code /openai/v1/…}, no {@code api-version}). */
    public boolean v1() {
        return apiVersion == null;
    }
}
