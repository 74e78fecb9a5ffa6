package io.modelgateway.core.upstream;

import io.modelgateway.core.exchange.HttpResponses;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.SecretRedactor;
import io.modelgateway.core.config.AzureSettings;
import io.modelgateway.core.config.BedrockSettings;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.util.AsciiString;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What every request to one provider carries, worked out once per provider instead of once per request: the
 * pool key, the {@code Host} header, the request path of each endpoint, the credential header and the
 * provider's extra headers, as {@link AsciiString}s (their hash is computed once and they are written out
 * without encoding). {@link UpstreamPools#target} keeps one per provider per event loop.
 *
 * <p>The header values here were checked once, when the target was built (a config value with a line break
 * in it fails there), so the per-request headers can be built with {@link #TRUSTED_HEADERS}, which skips
 * Netty's per-call name and value validation. Everything else put into such headers is either ours or was
 * validated when the client's or the upstream's request was decoded.
 *
 * <p>It also holds the provider's {@link SecretRedactor}: what the gateway itself sends to this provider and must
 * never reach a caller — the {@code api_key}, an Entra application's client secret, and the values of extra headers
 * whose names say they hold a secret (see {@link #isSecretHeader}) — so that an upstream echoing them in an error
 * answer does not hand them on.
 */
public final class UpstreamTarget {
    /** Headers made by the gateway from values already validated: no re-validation on every {@code set}. */
    public static final HttpHeadersFactory TRUSTED_HEADERS = HttpResponses.TRUSTED_HEADERS;

    private static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");
    /** Azure OpenAI's key header. */
    private static final AsciiString API_KEY = AsciiString.cached("api-key");
    /** The Gemini API's key header. */
    private static final AsciiString X_GOOG_API_KEY = AsciiString.cached("x-goog-api-key");
    /** Parts of a header name that mark its value as a secret. */
    private static final String[] SECRET_NAME_PARTS =
            {"auth", "key", "token", "secret", "password", "passwd", "cookie", "credential", "signature", "session"};

    final ProviderConfig provider;
    final String origin;
    final AsciiString host;
    private final String[] paths = new String[Endpoint.values().length];
    /** azure_openai: its paths, by deployment in the deployment form; null for every other type. */
    private final AzurePaths azurePaths;
    /** vertex and gemini: their paths by model; null for every other type. */
    final GooglePaths googlePaths;
    /**
     * The access tokens the gateway obtains and refreshes (the credential changes hourly): vertex's service account,
     * or an azure_openai provider's Entra ID application; null for every other provider.
     */
    final AccessTokens tokens;
    /** {@code authorization} or {@code x-api-key}; null when the provider has no key. */
    final AsciiString credentialName;
    final AsciiString credentialValue;
    final AsciiString[] extraNames;
    final AsciiString[] extraValues;
    /** The provider's secrets and the common key shapes, removed from its error answers. */
    final SecretRedactor redactor;
    /** Type bedrock: its paths, body and signing; null for every other type. */
    final BedrockTarget bedrock;

    UpstreamTarget(ProviderConfig provider) {
        this.provider = provider;
        URI base = provider.baseUrl();
        // Connections are pooled per origin and per way their certificate was checked: a connection a provider
        // with insecure_skip_verify (or its own ca_file) opened is never reused by one that checks otherwise.
        this.origin = UpstreamPools.origin(base) + (provider.tls().equals(io.modelgateway.core.config.UpstreamTls.DEFAULT)
                ? "" : " tls=" + (provider.tls().insecureSkipVerify() ? "insecure"
                : provider.tls().caFile() + "#" + provider.tls().trusted().hashCode()));
        int port = UpstreamPools.port(base);
        boolean defaultPort = port == ("https".equalsIgnoreCase(base.getScheme()) ? 443 : 80);
        HttpHeaders checked = new DefaultHttpHeaders(); // validating: throws on a bad name or value
        checked.set(HttpHeaderNames.HOST, defaultPort ? base.getHost() : base.getHost() + ":" + port);
        this.host = AsciiString.of(checked.get(HttpHeaderNames.HOST));
        String basePath = base.getRawPath() == null ? "" : base.getRawPath();
        if (basePath.endsWith("/")) {
            basePath = basePath.substring(0, basePath.length() - 1);
        }
        for (Endpoint e : Endpoint.values()) {
            paths[e.ordinal()] = basePath + e.upstreamSuffix();
        }
        azurePaths = provider.azure() == null ? null : new AzurePaths(provider.azure());
        googlePaths = provider.google() == null ? null : new GooglePaths(provider.type(), provider.google());
        tokens = tokens(provider);
        String key = provider.apiKey();
        if (key == null) {
            credentialName = null;
            credentialValue = null;
        } else if (provider.azure() != null && provider.azure().credential() == AzureSettings.Credential.API_KEY) {
            checked.set(API_KEY, key);
            credentialName = API_KEY;
            credentialValue = AsciiString.of(key);
        } else if (provider.type() == io.modelgateway.core.config.ProviderType.GEMINI) {
            checked.set(X_GOOG_API_KEY, key);
            credentialName = X_GOOG_API_KEY;
            credentialValue = AsciiString.of(key);
        } else if (provider.type().style() == ApiStyle.ANTHROPIC && provider.type() != ProviderType.BEDROCK) {
            checked.set(X_API_KEY, key);
            credentialName = X_API_KEY;
            credentialValue = AsciiString.of(key);
        } else {
            checked.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + key);
            credentialName = HttpHeaderNames.AUTHORIZATION;
            credentialValue = AsciiString.of("Bearer " + key);
        }
        List<String> secrets = new ArrayList<>();
        if (key != null) {
            secrets.add(key);
        }
        if (provider.azure() != null && provider.azure().entra() != null) {
            secrets.add(provider.azure().entra().clientSecret());
        }
        Map<String, String> extra = provider.headers();
        extraNames = new AsciiString[extra.size()];
        extraValues = new AsciiString[extra.size()];
        int i = 0;
        for (Map.Entry<String, String> e : extra.entrySet()) {
            checked.set(e.getKey(), e.getValue());
            extraNames[i] = AsciiString.cached(e.getKey().toLowerCase(Locale.ROOT));
            extraValues[i] = AsciiString.of(e.getValue());
            if (isSecretHeader(e.getKey())) {
                addSecret(secrets, e.getValue());
            }
            i++;
        }
        BedrockSettings aws = provider.bedrock();
        if (aws != null && aws.signs()) {
            addSecret(secrets, aws.secretAccessKey());
            if (aws.sessionToken() != null) {
                addSecret(secrets, aws.sessionToken());
                checked.set("x-amz-security-token", aws.sessionToken());
            }
        }
        bedrock = aws == null ? null : new BedrockTarget(aws);
        redactor = new SecretRedactor(secrets);
    }

    private static AccessTokens tokens(ProviderConfig provider) {
        if (provider.google() != null && provider.google().account() != null) {
            return AccessTokens.of(new ServiceAccountGrant(provider.google().account()));
        }
        if (provider.azure() != null && provider.azure().entra() != null) {
            return AccessTokens.of(new EntraGrant(provider.azure().entra()));
        }
        return null;
    }

    /**
     * Whether a configured extra header carries a secret, by its name: one containing auth, key, token, secret,
     * password, passwd, cookie, credential, signature or session (Authorization, api-key, X-Goog-Api-Key,
     * OpenAI-Project is not one; a value shorter than {@link SecretRedactor#MIN_SECRET_CHARS} is never searched for).
     */
    static boolean isSecretHeader(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (String part : SECRET_NAME_PARTS) {
            if (n.contains(part)) {
                return true;
            }
        }
        return false;
    }

    /** A header value as a secret, and its credential alone when it has a scheme in front ({@code Bearer tok}). */
    private static void addSecret(List<String> secrets, String value) {
        String v = value.strip();
        secrets.add(v);
        int space = v.indexOf(' ');
        if (space > 0 && v.substring(0, space).chars().allMatch(Character::isLetter)) {
            secrets.add(v.substring(space + 1).strip());
        }
    }

    /** The request path for {@code endpoint} on this provider (base URL path + the endpoint's suffix). */
    String path(Endpoint endpoint) {
        return paths[endpoint.ordinal()];
    }

    /**
     * The request path (with its query, if any) for {@code endpoint} on this provider when the attempt goes to the
     * deployment whose upstream model name is {@code upstreamModel}: Azure's paths for an azure_openai provider (the
     * deployment form names the deployment in the path), else {@link #path(Endpoint)}.
     */
    String path(Endpoint endpoint, String upstreamModel) {
        return azurePaths == null ? paths[endpoint.ordinal()] : azurePaths.path(endpoint, upstreamModel);
    }

    /**
     * As {@link #path(Endpoint, String)}, and for vertex and gemini the model's generateContent method
     * ({@code stream}: streamGenerateContent with SSE; Claude on Vertex: rawPredict / streamRawPredict), or for
     * embeddings its {@code :predict} (vertex) or {@code :batchEmbedContents} (gemini).
     */
    String path(Endpoint endpoint, String upstreamModel, boolean stream) {
        if (googlePaths == null) {
            return path(endpoint, upstreamModel);
        }
        return endpoint == Endpoint.EMBEDDINGS ? googlePaths.embeddingsPath(upstreamModel)
                : googlePaths.path(upstreamModel, stream);
    }
}
