package io.modelgateway.core.config;

import io.netty.util.AsciiString;
import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One upstream: where it is, how to authenticate to it and what to send besides the request.
 *
 * @param baseUrl          without a trailing slash; null for the simulator. For openai it includes
 *                         {@code /v1}; for anthropic it does not (the gateway appends {@code /v1/messages})
 * @param apiKey           the provider credential, or null; never printed
 * @param headers          extra headers sent on every upstream request, in config order
 * @param forwardHeaders   lower-case names or globs of client headers passed upstream
 * @param connectTimeoutMs TCP (and TLS) connect timeout
 * @param simulator        how the simulator answers; {@link SimulatorSettings#DEFAULT} when not set
 * @param maxTokensField   openai type, translated requests: {@code max_completion_tokens} (OpenAI proper) or
 *                         {@code max_tokens} (older OpenAI-compatible servers)
 * @param reasoningDetails openai type: the upstream accepts {@code reasoning_details} on assistant messages
 *                         (OpenRouter-like), so translated thinking blocks are sent back to it
 * @param cooldown         when this provider's deployments are taken out of rotation after failures
 * @param timeouts         first byte, gap between answer pieces, whole exchange (the HTTP providers)
 * @param anthropicBeta    anthropic type: which of a messages caller's {@code anthropic-beta} values go upstream
 * @param tls              how an {@code https} upstream's certificate is checked ({@code ca_file},
 *                         {@code insecure_skip_verify})
 * @param azure            azure_openai type: its path scheme and how its credential is sent; null for other types
 * @param bedrock          bedrock type: region and AWS credentials; null for every other type
 * @param google           vertex and gemini types: project, location and service account; null for other types
 * @param responsesApi     openai type: the upstream serves the Responses API itself ({@code /responses}), so a
 *                         Responses request passes through; false: it has chat completions only and the gateway
 *                         translates (contract 12.2)
 */
public record ProviderConfig(
        String name,
        ProviderType type,
        URI baseUrl,
        String apiKey,
        Map<String, String> headers,
        List<String> forwardHeaders,
        int connectTimeoutMs,
        SimulatorSettings simulator,
        String maxTokensField,
        boolean reasoningDetails,
        CooldownConfig cooldown,
        TimeoutsConfig timeouts,
        AnthropicBeta anthropicBeta,
        UpstreamTls tls,
        AzureSettings azure,
        BedrockSettings bedrock,
        GoogleSettings google,
        boolean responsesApi) {

    /**
     * Client headers that never go upstream whatever {@code forward_headers} says: credentials (forwarding them
     * would hand the gateway key to the provider; {@code api-key} is Azure OpenAI's, which its SDK client sends) and
     * the hop-by-hop and framing headers the upstream request sets itself.
     */
    private static final String[] NEVER_FORWARDED = {
            "authorization", "proxy-authorization", "x-api-key", "api-key",
            "host", "content-length", "transfer-encoding", "connection", "keep-alive",
            "proxy-connection", "te", "trailer", "upgrade"};

    /** Without a {@code responses_api} setting: an openai provider serves the Responses API itself. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts, AnthropicBeta anthropicBeta,
            UpstreamTls tls, AzureSettings azure, BedrockSettings bedrock, GoogleSettings google) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, anthropicBeta, tls, azure, bedrock, google,
                type == ProviderType.OPENAI);
    }

    /** Not a vertex or gemini provider (no {@link GoogleSettings}). */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts, AnthropicBeta anthropicBeta,
            UpstreamTls tls, AzureSettings azure, BedrockSettings bedrock) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, anthropicBeta, tls, azure, bedrock, null);
    }

    /** Neither a bedrock nor a vertex or gemini provider. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts, AnthropicBeta anthropicBeta,
            UpstreamTls tls, AzureSettings azure) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, anthropicBeta, tls, azure, null);
    }

    /** Neither an azure_openai, a bedrock, a vertex nor a gemini provider. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts, AnthropicBeta anthropicBeta,
            UpstreamTls tls) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, anthropicBeta, tls, null, null);
    }

    /** With the JDK's trust store and verification on ({@link UpstreamTls#DEFAULT}); any type but azure_openai. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts, AnthropicBeta anthropicBeta) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, anthropicBeta, UpstreamTls.DEFAULT, null);
    }

    /** Without an {@code anthropic_beta} setting: {@link AnthropicBeta#FORWARD}. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown, TimeoutsConfig timeouts) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, timeouts, AnthropicBeta.FORWARD);
    }

    /** Without a cool-down setting: {@link CooldownConfig#DEFAULT}. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, CooldownConfig.DEFAULT, TimeoutsConfig.DEFAULT);
    }

    /** Without timeout settings: {@link TimeoutsConfig#DEFAULT}. */
    public ProviderConfig(String name, ProviderType type, URI baseUrl, String apiKey, Map<String, String> headers,
            List<String> forwardHeaders, int connectTimeoutMs, SimulatorSettings simulator, String maxTokensField,
            boolean reasoningDetails, CooldownConfig cooldown) {
        this(name, type, baseUrl, apiKey, headers, forwardHeaders, connectTimeoutMs, simulator, maxTokensField,
                reasoningDetails, cooldown, TimeoutsConfig.DEFAULT);
    }

    public ProviderConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        if ((type == ProviderType.SIMULATOR) != (baseUrl == null)) {
            throw new IllegalArgumentException("a simulator has no base URL; every other provider needs one");
        }
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        forwardHeaders = forwardHeaders.stream().map(h -> h.toLowerCase(Locale.ROOT)).toList();
        if (connectTimeoutMs < 1) {
            throw new IllegalArgumentException("connectTimeoutMs must be >= 1");
        }
        simulator = simulator == null ? SimulatorSettings.DEFAULT : simulator;
        cooldown = cooldown == null ? CooldownConfig.DEFAULT : cooldown;
        timeouts = timeouts == null ? TimeoutsConfig.DEFAULT : timeouts;
        anthropicBeta = anthropicBeta == null ? AnthropicBeta.FORWARD : anthropicBeta;
        tls = tls == null ? UpstreamTls.DEFAULT : tls;
        if ((type == ProviderType.AZURE_OPENAI) != (azure != null)) {
            throw new IllegalArgumentException("azure settings are for type azure_openai, which needs them");
        }
        if ((type == ProviderType.BEDROCK) != (bedrock != null)) {
            throw new IllegalArgumentException("bedrock settings go with type bedrock, and only with it");
        }
        if ((type == ProviderType.VERTEX || type == ProviderType.GEMINI) != (google != null)) {
            throw new IllegalArgumentException("google settings are for types vertex and gemini, which need them");
        }
        responsesApi &= type == ProviderType.OPENAI;
    }

    /**
     * Whether the client header {@code name} (any case) is passed upstream. Runs per header per request on the
     * name as the decoder made it: no allocation, patterns were lower-cased at load and the name's letters are
     * folded as they are compared.
     */
    public boolean forwardsHeader(CharSequence name) {
        for (int i = 0; i < forwardHeaders.size(); i++) {
            if (Glob.matches(forwardHeaders.get(i), name, true)) {
                // Matched (rare: most of a request's headers match no pattern, so they skip this list).
                for (String never : NEVER_FORWARDED) {
                    if (AsciiString.contentEqualsIgnoreCase(never, name)) {
                        return false;
                    }
                }
                return true;
            }
        }
        return false;
    }

    /**
     * The wire style this provider speaks for a deployment's model: its type's, except Claude on Vertex AI (a vertex
     * provider's model starting with {@code claude}), which is Anthropic's messages through {@code rawPredict}.
     */
    public io.modelgateway.codecs.ApiStyle styleFor(String upstreamModel) {
        return claudeOnVertex(upstreamModel) ? io.modelgateway.codecs.ApiStyle.ANTHROPIC : type.style();
    }

    /** Whether a deployment of this provider with {@code upstreamModel} is Claude on Vertex AI. */
    public boolean claudeOnVertex(String upstreamModel) {
        return type == ProviderType.VERTEX && upstreamModel != null && upstreamModel.startsWith("claude");
    }

    /** Without the API key, and with header names only: extra headers often carry credentials too. */
    @Override
    public String toString() {
        return "ProviderConfig[name=" + name
                + ", type=" + type
                + ", baseUrl=" + baseUrl
                + ", apiKey=" + (apiKey == null ? "none" : "(set)")
                + ", headers=" + headers.keySet()
                + ", forwardHeaders=" + forwardHeaders
                + ", connectTimeoutMs=" + connectTimeoutMs
                + ", simulator=" + simulator
                + ", cooldown=" + cooldown
                + ", timeouts=" + timeouts
                + ", anthropicBeta=" + anthropicBeta
                + ", caFile=" + tls.caFile()
                + ", insecureSkipVerify=" + tls.insecureSkipVerify()
                + (azure == null ? "" : ", azure=" + azure) + (bedrock == null ? "" : ", bedrock=" + bedrock)
                + (google == null ? "" : ", google=" + google) + "]";
    }
}
