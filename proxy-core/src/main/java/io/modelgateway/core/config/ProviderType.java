package io.modelgateway.core.config;

import io.modelgateway.codecs.ApiStyle;
import java.util.Locale;

/** The kind of upstream a provider is; {@code type:} in the config, in lower case. */
public enum ProviderType {
    /** Any OpenAI-compatible base URL. */
    OPENAI(ApiStyle.OPENAI),
    /** The Anthropic messages API. */
    ANTHROPIC(ApiStyle.ANTHROPIC),
    /** The built-in simulator: answers in-process, in whichever style the caller used. */
    SIMULATOR(null),
    /**
     * Azure OpenAI: OpenAI's chat completions and embeddings on a resource endpoint, under Azure's paths (a
     * deployment in the path and {@code api-version} in the query, or the v1 paths), with an {@code api-key} or a
     * Microsoft Entra bearer token ({@link AzureSettings}).
     */
    AZURE_OPENAI(ApiStyle.OPENAI),

    /** Amazon Bedrock Runtime, SigV4-signed (or a Bedrock API key); answers as Anthropic (its Claude models). */
    BEDROCK(ApiStyle.ANTHROPIC),
    // ---- Google (issue 18): Gemini's generateContent, translated from and to both caller styles
    /** Google Vertex AI: OAuth2 access tokens from a service account, the model in the path ({@link GoogleSettings}). */
    VERTEX(ApiStyle.GEMINI),
    /** The Gemini API (generativelanguage.googleapis.com) with an {@code x-goog-api-key}. */
    GEMINI(ApiStyle.GEMINI);

    private final ApiStyle style;

    ProviderType(ApiStyle style) {
        this.style = style;
    }

    /** The wire style this upstream speaks; null for {@link #SIMULATOR}, which answers both. */
    public ApiStyle style() {
        return style;
    }

    /** The name used in the config file. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The type for a config name ({@code openai}, {@code anthropic}, {@code simulator}, {@code bedrock}, …); null when unknown. */
    public static ProviderType fromConfigName(String name) {
        for (ProviderType t : values()) {
            if (t.configName().equals(name)) {
                return t;
            }
        }
        return null;
    }
}
