package io.modelgateway.core.config;

import static io.modelgateway.core.config.ConfigLoader.DEFAULT_CONNECT_TIMEOUT_MS;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.core.config.YamlTree.Field;
import io.modelgateway.core.config.YamlTree.ListNode;
import io.modelgateway.core.config.YamlTree.Node;
import io.modelgateway.core.config.YamlTree.Scalar;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Reads {@code providers}: each named provider block, with its {@code base_url}, {@code api_key}, {@code headers},
 * {@code forward_headers}, {@code timeouts}, {@code cooldown} and {@code simulator} settings, into a
 * {@link ProviderConfig} (with its {@link TimeoutsConfig}, {@link CooldownConfig} and {@link SimulatorSettings}).
 */
final class ProvidersSection extends ConfigReader {

    private static final List<String> PROVIDER_FIELDS = List.of("type", "base_url", "api_key", "headers",
            "forward_headers", "connect_timeout_ms", "simulator", "max_tokens_field", "reasoning_details", "cooldown",
            "timeouts", "anthropic_beta", "ca_file", "insecure_skip_verify",
            "api_version", "entra_token", "entra", // azure_openai
            // type bedrock
            "region", "aws_access_key_id", "aws_secret_access_key", "aws_session_token",
            "project", "location", "credentials_file", // vertex and gemini (GoogleProviders)
            "responses_api");
    /** The fields only a bedrock provider takes. */
    private static final List<String> BEDROCK_FIELDS =
            List.of("region", "aws_access_key_id", "aws_secret_access_key", "aws_session_token");
    /** The fields of an azure_openai provider's {@code entra} block. */
    private static final List<String> ENTRA_FIELDS =
            List.of("tenant_id", "client_id", "client_secret", "scope", "token_url");
    /** A Microsoft Entra tenant: its id (a GUID) or a domain name; it goes into the token endpoint's path. */
    private static final Pattern ENTRA_TENANT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9.-]{0,127}");
    /** A Microsoft Entra application (client) id: a GUID. */
    private static final Pattern GUID =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    /** An AWS region name: {@code us-east-1}, {@code eu-central-2}, {@code us-gov-west-1}, … */
    private static final Pattern AWS_REGION = Pattern.compile("[a-z]{2,}(-[a-z0-9]+)+");
    private static final List<String> TIMEOUT_FIELDS = List.of("first_byte_ms", "stream_idle_ms", "total_ms");
    private static final List<String> COOLDOWN_FIELDS = List.of("failures", "seconds");
    private static final List<String> SIMULATOR_FIELDS =
            List.of("ttft_ms", "tokens_per_second", "output_tokens", "fault");

    // RFC 9110 token characters; forward_headers patterns may also use '?' ('*' already is one).
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern HEADER_GLOB = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z?-]+");
    /** An entry of anthropic_beta's allow-list: a beta name such as prompt-caching-2024-07-31, or a glob. */
    private static final Pattern BETA_NAME = Pattern.compile("[A-Za-z0-9._*?-]+");
    /** Client headers with a rule of their own (the upstream request's Anthropic headers), whatever forward_headers says. */
    private static final Set<String> ANTHROPIC_HEADERS = Set.of("anthropic-version", "anthropic-beta", "vendor-version");
    /** Headers the upstream request frames itself; setting them from config would corrupt it. */
    private static final Set<String> MANAGED_HEADERS = Set.of("content-length", "transfer-encoding",
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade");

    ProvidersSection(ConfigReader load) {
        super(load);
    }

    Map<String, ProviderConfig> providers(Section top) throws ConfigException {
        Map<String, ProviderConfig> providers = new LinkedHashMap<>();
        Section all = top.section("providers");
        if (all == null) {
            return providers;
        }
        for (Field f : all.node.fields().values()) {
            String path = all.pathOf(f.key());
            if (!NAME.matcher(f.key()).matches()) {
                throw error(path, f.line(), "a provider name may use only letters, digits, '_', '.' and '-'");
            }
            Section p = section(f.value(), path, f.line());
            p.allowOnly(PROVIDER_FIELDS);
            providers.put(f.key(), provider(f.key(), p));
        }
        return providers;
    }

    private ProviderConfig provider(String name, Section p) throws ConfigException {
        String typeText = p.requiredString("type");
        ProviderType type = ProviderType.fromConfigName(typeText);
        if (type == null) {
            throw error(p.pathOf("type"), p.lineOf("type"),
                    "must be one of " + typeNames() + " (got '" + typeText + "')");
        }
        URI baseUrl = null;
        if (type == ProviderType.SIMULATOR) {
            if (p.field("base_url") != null) {
                throw error(p.pathOf("base_url"), p.lineOf("base_url"), "not used by type simulator, which"
                        + " answers in-process; to reach a standalone simulator use type openai or anthropic");
            }
        } else if (type == ProviderType.BEDROCK) {
            baseUrl = bedrockBaseUrl(p);
        } else if (GoogleProviders.isGoogle(type) && p.field("base_url") == null) {
            baseUrl = null; // the cloud's own endpoint, below
        } else {
            baseUrl = baseUrl(p, type);
        }
        String apiKey = apiKey(p, type);
        BedrockSettings bedrock = bedrock(p, type, apiKey);
        GoogleSettings google = null;
        if (GoogleProviders.isGoogle(type)) {
            GoogleProviders g = new GoogleProviders(this);
            google = g.settings(p, type, apiKey);
            baseUrl = g.baseUrl(p, type, baseUrl, google);
        } else {
            GoogleProviders.refuseGoogleFields(this, p, type);
        }
        Map<String, String> headers = headers(p);
        int connectTimeoutMs = (int) p.integer("connect_timeout_ms", DEFAULT_CONNECT_TIMEOUT_MS, 1, 600_000);
        SimulatorSettings simulator = simulator(p, type);
        ListNode forwardList = p.list("forward_headers");
        List<String> forward = new ArrayList<>();
        if (forwardList != null) {
            for (int i = 0; i < forwardList.items().size(); i++) {
                Node item = forwardList.items().get(i);
                String path = p.pathOf("forward_headers") + "[" + i + "]";
                String pattern = text(item, path);
                if (!HEADER_GLOB.matcher(pattern).matches()) {
                    throw error(path, item.line(), "not a header name or glob (letters, digits, '-', '*', '?')");
                }
                forward.add(pattern);
            }
        }
        String maxTokensField = p.string("max_tokens_field");
        if (maxTokensField == null) {
            maxTokensField = "max_completion_tokens";
        } else if (type != ProviderType.OPENAI && type != ProviderType.AZURE_OPENAI) {
            throw error(p.pathOf("max_tokens_field"), p.lineOf("max_tokens_field"),
                    "only used by types openai and azure_openai");
        } else if (!maxTokensField.equals("max_completion_tokens") && !maxTokensField.equals("max_tokens")) {
            throw error(p.pathOf("max_tokens_field"), p.lineOf("max_tokens_field"),
                    "must be max_completion_tokens or max_tokens (got '" + maxTokensField + "')");
        }
        boolean reasoningDetails = p.bool("reasoning_details", false);
        boolean responsesApi = p.bool("responses_api", type == ProviderType.OPENAI);
        if (responsesApi && type != ProviderType.OPENAI) {
            throw error(p.pathOf("responses_api"), p.lineOf("responses_api"), "only used by type openai");
        }
        CooldownConfig cooldown = cooldown(p);
        TimeoutsConfig timeouts = timeouts(p);
        AnthropicBeta anthropicBeta = anthropicBeta(p, type);
        UpstreamTls tls = upstreamTls(p, baseUrl);
        AzureSettings azure = azure(p, type, apiKey);
        if (azure != null && azure.credential() == AzureSettings.Credential.ENTRA_TOKEN) {
            apiKey = entraToken(p);
        }
        ProviderConfig provider = new ProviderConfig(name, type, baseUrl, apiKey, headers, forward, connectTimeoutMs,
                simulator, maxTokensField, reasoningDetails, cooldown, timeouts, anthropicBeta, tls, azure, bedrock,
                google, responsesApi);
        for (int i = 0; i < forward.size(); i++) {
            String lower = forward.get(i).toLowerCase(Locale.ROOT);
            String path = p.pathOf("forward_headers") + "[" + i + "]";
            int line = forwardList.items().get(i).line();
            if (!Glob.isGlob(lower) && !provider.forwardsHeader(lower)) {
                throw error(path, line,
                        "'" + lower + "' is never forwarded: it is a gateway credential or a hop-by-hop header");
            }
            if (ANTHROPIC_HEADERS.contains(lower)) {
                warn(path, line, "'" + lower + "' follows its own rule, not forward_headers: a messages caller's "
                        + "anthropic-version and anthropic-beta go to anthropic providers (narrow the betas with "
                        + "anthropic_beta), never to other types");
            }
        }
        return provider;
    }

    /**
     * {@code ca_file} (PEM certificates of the authorities trusted for this upstream instead of the JDK's list, read
     * now so that a bad file stops the load) and {@code insecure_skip_verify} (no certificate or host-name check at
     * all, warned at every load); both only for an {@code https} base URL, and not together.
     */
    private UpstreamTls upstreamTls(Section p, URI baseUrl) throws ConfigException {
        Field caField = p.field("ca_file");
        boolean insecure = p.bool("insecure_skip_verify", false);
        boolean https = baseUrl != null && "https".equalsIgnoreCase(baseUrl.getScheme());
        if ((caField != null || p.field("insecure_skip_verify") != null) && !https) {
            String name = caField != null ? "ca_file" : "insecure_skip_verify";
            throw error(p.pathOf(name), p.lineOf(name), "only used with an https base_url");
        }
        Path caFile = null;
        List<X509Certificate> trusted = List.of();
        if (caField != null) {
            if (insecure) {
                throw error(p.pathOf("insecure_skip_verify"), p.lineOf("insecure_skip_verify"),
                        "contradicts ca_file: with it nothing would be checked against that file; keep one");
            }
            String value = p.requiredString("ca_file");
            String path = p.pathOf("ca_file");
            int line = p.lineOf("ca_file");
            try {
                caFile = Path.of(value).toAbsolutePath();
            } catch (InvalidPathException e) {
                throw error(path, line, "is not a valid file path");
            }
            trusted = readCertificates(caFile, value, path, line);
        }
        if (insecure) {
            warn(p.pathOf("insecure_skip_verify"), p.lineOf("insecure_skip_verify"), "the upstream's certificate"
                    + " is not verified: anyone on the path to " + baseUrl.getHost() + " can read and change its"
                    + " traffic, provider key included; use ca_file for a private authority instead");
        }
        return caFile == null && !insecure ? UpstreamTls.DEFAULT : new UpstreamTls(caFile, trusted, insecure);
    }

    private List<X509Certificate> readCertificates(Path file, String value, String path, int line)
            throws ConfigException {
        byte[] pem;
        try {
            pem = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw error(path, line, "'" + value + "' does not exist");
        } catch (IOException e) {
            throw error(path, line, "'" + value + "' cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        List<X509Certificate> certs = new ArrayList<>();
        try {
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem))) {
                certs.add((X509Certificate) c);
            }
        } catch (CertificateException e) {
            throw error(path, line, "'" + value + "' holds no readable PEM certificate");
        }
        if (certs.isEmpty()) {
            throw error(path, line, "'" + value + "' holds no certificate");
        }
        return certs;
    }

    /**
     * {@code anthropic_beta} (anthropic type only): {@code forward} (the default), {@code drop}, or a list of beta
     * names or globs; values of the caller's comma list that no entry matches are removed.
     */
    AnthropicBeta anthropicBeta(Section p, ProviderType type) throws ConfigException {
        Field f = p.field("anthropic_beta");
        if (f == null) {
            return AnthropicBeta.FORWARD;
        }
        String path = p.pathOf("anthropic_beta");
        if (type != ProviderType.ANTHROPIC && type != ProviderType.BEDROCK) {
            throw error(path, f.line(), "only used by type anthropic or bedrock (no other type is sent"
                    + " anthropic-beta)");
        }
        if (f.value() instanceof ListNode list) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < list.items().size(); i++) {
                Node item = list.items().get(i);
                String itemPath = path + "[" + i + "]";
                String name = text(item, itemPath).strip();
                if (!BETA_NAME.matcher(name).matches()) {
                    throw error(itemPath, item.line(), "not a beta name or glob (letters, digits, '.', '_', '-', "
                            + "'*', '?'; one name per entry, no commas)");
                }
                names.add(name);
            }
            return AnthropicBeta.allow(names);
        }
        String mode = text(f.value(), path, f.line()).strip();
        return switch (mode) {
            case "forward" -> AnthropicBeta.FORWARD;
            case "drop" -> AnthropicBeta.DROP;
            default -> throw error(path, f.line(),
                    "must be forward, drop, or a list of allowed beta names (got '" + mode + "')");
        };
    }

    /**
     * {@code cooldown}: absent is {@link CooldownConfig#DEFAULT}; {@code false} (YAML also reads a bare {@code off}
     * so) turns it off; a mapping sets {@code failures} and {@code seconds}, each defaulting as in DEFAULT.
     */
    private CooldownConfig cooldown(Section p) throws ConfigException {
        Field f = p.field("cooldown");
        if (f == null) {
            return CooldownConfig.DEFAULT;
        }
        String path = p.pathOf("cooldown");
        if (f.value() instanceof Scalar s) {
            if (s.token() == JsonToken.VALUE_FALSE) {
                return CooldownConfig.OFF;
            }
            if (s.token() == JsonToken.VALUE_TRUE) {
                return CooldownConfig.DEFAULT;
            }
            throw error(path, f.line(), "must be off, or a mapping with failures and seconds, not " + kind(s));
        }
        Section c = section(f.value(), path, f.line());
        c.allowOnly(COOLDOWN_FIELDS);
        int failures = (int) c.integer("failures", CooldownConfig.DEFAULT.failures(), 1, CooldownConfig.MAX_FAILURES);
        int seconds = (int) c.integer("seconds", CooldownConfig.DEFAULT.seconds(), 1, CooldownConfig.MAX_SECONDS);
        return new CooldownConfig(failures, seconds);
    }

    private TimeoutsConfig timeouts(Section p) throws ConfigException {
        Section t = p.section("timeouts");
        if (t == null) {
            return TimeoutsConfig.DEFAULT;
        }
        t.allowOnly(TIMEOUT_FIELDS);
        TimeoutsConfig d = TimeoutsConfig.DEFAULT;
        return new TimeoutsConfig(
                t.integer("first_byte_ms", d.firstByteMs(), 1, 86_400_000),
                t.integer("stream_idle_ms", d.streamIdleMs(), 1, 86_400_000),
                t.integer("total_ms", d.totalMs(), 1, 86_400_000));
    }

    private URI baseUrl(Section p, ProviderType type) throws ConfigException {
        String path = p.pathOf("base_url");
        int line = p.lineOf("base_url");
        String text = p.string("base_url");
        if (text == null || text.isBlank()) {
            throw error(path, line, "is required for type " + type.configName());
        }
        // The URL's text stays out of messages: a mistyped one may carry credentials.
        URI uri;
        try {
            uri = new URI(text.strip());
        } catch (URISyntaxException e) {
            throw error(path, line, "is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw error(path, line, "must start with http:// or https://");
        }
        if (uri.getRawUserInfo() != null) {
            throw error(path, line, "must not hold credentials; put them in api_key or headers");
        }
        if (uri.getHost() == null) {
            throw error(path, line, "needs a valid host");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw error(path, line, "must not have a query or a fragment");
        }
        String urlPath = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (urlPath.endsWith("/")) {
            urlPath = urlPath.substring(0, urlPath.length() - 1);
        }
        if (type == ProviderType.ANTHROPIC && urlPath.endsWith("/v1")) {
            throw error(path, line, "for type anthropic give the URL without /v1 (the gateway appends /v1/messages)");
        }
        if (type == ProviderType.AZURE_OPENAI && !urlPath.isEmpty()) {
            throw error(path, line, "for type azure_openai give the resource endpoint only (scheme, host and port, "
                    + "e.g. https://my-resource.openai.azure.com): the paths are Azure's (/openai/deployments/... or "
                    + "/openai/v1/...)");
        }
        return URI.create(scheme + "://" + uri.getRawAuthority() + urlPath);
    }

    private String apiKey(Section p, ProviderType type) throws ConfigException {
        Scalar raw = p.scalar("api_key");
        if (raw == null) {
            return null;
        }
        String path = p.pathOf("api_key");
        int line = p.lineOf("api_key");
        String value = expand(raw.text(), path, line);
        if (value.isEmpty()) {
            return null; // e.g. ${OPENAI_API_KEY:-} — an upstream that needs no key
        }
        if (hasLineBreak(value)) {
            throw error(path, line, "must not contain line breaks");
        }
        if (!EnvExpander.hasReference(raw.text())) {
            warn(path, line, "the API key is written in the config file; prefer an environment reference"
                    + " such as ${" + apiKeyVariable(type) + "}");
        }
        return value;
    }

    /** The environment variable a provider of this type conventionally takes its key from. */
    static String apiKeyVariable(ProviderType type) {
        return switch (type) {
            case OPENAI -> "OPENAI_API_KEY";
            case ANTHROPIC -> "ANTHROPIC_API_KEY";
            case SIMULATOR -> "SIMULATOR_API_KEY";
            case AZURE_OPENAI -> "AZURE_OPENAI_API_KEY";
            case BEDROCK -> "AWS_BEARER_TOKEN_BEDROCK";
            case VERTEX, GEMINI -> GoogleProviders.apiKeyVariable(type);
        };
    }

    /** The config names of every provider type, for the message of an unknown one. */
    private static String typeNames() {
        StringBuilder names = new StringBuilder();
        for (ProviderType t : ProviderType.values()) {
            names.append(names.length() == 0 ? "" : ", ").append(t.configName());
        }
        return names.toString();
    }

    // ------------------------------------------------------------------ azure_openai

    /**
     * The azure_openai settings: {@code api_version} (left out: the v1 paths) and which credential is sent — exactly
     * one of {@code api_key} (the {@code api-key} header), {@code entra_token} (a Microsoft Entra access token, as
     * {@code Authorization: Bearer}) and {@code entra} (an Entra application whose tokens the gateway obtains). Null
     * for other types, which may use none of these fields.
     */
    private AzureSettings azure(Section p, ProviderType type, String apiKey) throws ConfigException {
        if (type != ProviderType.AZURE_OPENAI) {
            for (String field : List.of("api_version", "entra_token", "entra")) {
                if (p.field(field) != null) {
                    throw error(p.pathOf(field), p.lineOf(field), "only used by type azure_openai");
                }
            }
            return null;
        }
        String version = p.string("api_version");
        if (version != null) {
            version = version.strip();
            if (!AzureSettings.API_VERSION.matcher(version).matches()) {
                throw error(p.pathOf("api_version"), p.lineOf("api_version"), "must be an Azure OpenAI API version "
                        + "such as 2024-10-21 or 2025-04-01-preview (leave it out for the v1 paths, /openai/v1/...)");
            }
        }
        boolean entra = p.field("entra_token") != null;
        if (entra && p.field("api_key") != null) {
            throw error(p.pathOf("entra_token"), p.lineOf("entra_token"),
                    "give either api_key or entra_token, not both");
        }
        if (p.field("entra") != null) {
            if (entra || p.field("api_key") != null) {
                throw error(p.pathOf("entra"), p.lineOf("entra"), "give one credential: api_key, entra_token or "
                        + "entra (the gateway obtains the tokens of the entra application itself)");
            }
            return new AzureSettings(version, AzureSettings.Credential.ENTRA_ID, entra(p));
        }
        if (!entra && apiKey == null) {
            throw error(p.pathOf(p.field("api_key") != null ? "api_key" : "type"),
                    p.lineOf(p.field("api_key") != null ? "api_key" : "type"),
                    "type azure_openai needs a credential: api_key (e.g. ${AZURE_OPENAI_API_KEY}), entra (a "
                            + "Microsoft Entra ID application: tenant_id, client_id, client_secret) or entra_token "
                            + "(a Microsoft Entra access token, e.g. ${AZURE_OPENAI_AD_TOKEN})");
        }
        return new AzureSettings(version,
                entra ? AzureSettings.Credential.ENTRA_TOKEN : AzureSettings.Credential.API_KEY);
    }

    /**
     * {@code entra}: the Microsoft Entra ID application whose client-credentials grant obtains the provider's tokens —
     * {@code tenant_id}, {@code client_id}, {@code client_secret} (an environment reference, never written in the
     * file), {@code scope} (default Azure OpenAI's {@code .default} scope) and {@code token_url} (default the tenant's
     * endpoint at {@code login.microsoftonline.com}; another for sovereign clouds and tests).
     */
    private AzureSettings.Entra entra(Section p) throws ConfigException {
        Section e = p.section("entra");
        e.allowOnly(ENTRA_FIELDS);
        String tenant = e.requiredString("tenant_id").strip();
        if (!ENTRA_TENANT.matcher(tenant).matches()) {
            throw error(e.pathOf("tenant_id"), e.lineOf("tenant_id"), "must be the directory (tenant) id, a GUID, "
                    + "or its domain such as contoso.onmicrosoft.com");
        }
        if (List.of("common", "organizations", "consumers").contains(tenant.toLowerCase(Locale.ROOT))) {
            throw error(e.pathOf("tenant_id"), e.lineOf("tenant_id"), "the client-credentials grant needs the "
                    + "application's own tenant, not '" + tenant + "'");
        }
        String clientId = e.requiredString("client_id").strip();
        if (!GUID.matcher(clientId).matches()) {
            throw error(e.pathOf("client_id"), e.lineOf("client_id"), "must be the application (client) id, a GUID "
                    + "such as 00000000-0000-0000-0000-000000000000");
        }
        String scope = e.string("scope");
        scope = scope == null ? AzureSettings.Entra.DEFAULT_SCOPE : scope.strip();
        if (scope.isEmpty() || hasWhitespace(scope) || !scope.endsWith("/.default")) {
            throw error(e.pathOf("scope"), e.lineOf("scope"), "the client-credentials grant takes one scope, the "
                    + "resource's followed by /.default (e.g. " + AzureSettings.Entra.DEFAULT_SCOPE + ")");
        }
        URI tokenUrl = e.field("token_url") == null ? AzureSettings.Entra.defaultTokenUrl(tenant) : tokenUrl(e);
        return new AzureSettings.Entra(tenant, clientId, clientSecret(e), scope, tokenUrl);
    }

    /** {@code entra.client_secret}: only from the environment, never empty, printable ASCII without spaces. */
    private String clientSecret(Section e) throws ConfigException {
        String path = e.pathOf("client_secret");
        int line = e.lineOf("client_secret");
        Scalar raw = e.scalar("client_secret");
        if (raw == null) {
            throw e.missing("client_secret");
        }
        if (!EnvExpander.hasReference(raw.text())) {
            throw error(path, line, "must be an environment reference such as ${AZURE_CLIENT_SECRET}: the client "
                    + "secret is never written in the file");
        }
        String value = expand(raw.text(), path, line).strip();
        if (value.isEmpty()) {
            throw error(path, line, "is empty (is the environment variable set?)");
        }
        if (!value.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw error(path, line, "must be printable ASCII without spaces");
        }
        return value;
    }

    /**
     * {@code entra.token_url}: an http(s) URL with a host, no credentials, query or fragment; plain http only to a
     * loopback address, since the client secret travels in the request.
     */
    private URI tokenUrl(Section e) throws ConfigException {
        String path = e.pathOf("token_url");
        int line = e.lineOf("token_url");
        URI uri;
        try {
            uri = new URI(e.requiredString("token_url").strip());
        } catch (URISyntaxException x) {
            throw error(path, line, "is not a valid URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
            throw error(path, line, "must be an http:// or https:// URL with a host");
        }
        if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw error(path, line, "must not hold credentials, a query or a fragment");
        }
        if (scheme.equals("http") && !isLoopback(uri.getHost())) {
            throw error(path, line, "must be https: the client secret is sent to it (plain http only to a loopback "
                    + "address, such as a local test endpoint)");
        }
        return uri;
    }

    /** {@code localhost}, an address in 127.0.0.0/8, or {@code [::1]}: a literal, never a name lookup. */
    private static boolean isLoopback(String host) {
        return host.equalsIgnoreCase("localhost") || host.equals("[::1]")
                || host.matches("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
    }

    /** {@code entra_token}: a Microsoft Entra access token, from the environment; never empty. */
    private String entraToken(Section p) throws ConfigException {
        String path = p.pathOf("entra_token");
        int line = p.lineOf("entra_token");
        Scalar raw = p.scalar("entra_token");
        String value = raw == null ? "" : expand(raw.text(), path, line).strip();
        if (value.isEmpty()) {
            throw error(path, line, "is empty (is the environment variable set?)");
        }
        if (hasWhitespace(value)) {
            throw error(path, line, "must be the token alone (no 'Bearer ', no spaces or line breaks)");
        }
        if (!EnvExpander.hasReference(raw.text())) {
            warn(path, line, "the token is written in the config file; prefer an environment reference such as "
                    + "${AZURE_OPENAI_AD_TOKEN}");
        }
        return value;
    }

    // ------------------------------------------------------------------ type bedrock

    /**
     * A bedrock provider's {@code region} and credentials: {@code aws_access_key_id} with
     * {@code aws_secret_access_key} (and {@code aws_session_token} for temporary credentials), each an environment
     * reference, or else {@code api_key} as a Bedrock API key; one of the two is required. Null for other types,
     * which must not set these fields.
     */
    private BedrockSettings bedrock(Section p, ProviderType type, String apiKey) throws ConfigException {
        if (type != ProviderType.BEDROCK) {
            for (String name : BEDROCK_FIELDS) {
                if (p.field(name) != null) {
                    throw error(p.pathOf(name), p.lineOf(name), "only used by type bedrock");
                }
            }
            return null;
        }
        String region = p.requiredString("region").strip();
        if (!AWS_REGION.matcher(region).matches()) {
            throw error(p.pathOf("region"), p.lineOf("region"), "is not an AWS region name such as us-east-1");
        }
        String keyId = awsSecret(p, "aws_access_key_id", "AWS_ACCESS_KEY_ID");
        String secret = awsSecret(p, "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY");
        String session = awsSecret(p, "aws_session_token", "AWS_SESSION_TOKEN");
        if ((keyId == null) != (secret == null)) {
            String given = keyId == null ? "aws_secret_access_key" : "aws_access_key_id";
            String other = keyId == null ? "aws_access_key_id" : "aws_secret_access_key";
            throw error(p.pathOf(given), p.lineOf(given), "needs " + other + " too (or leave both out and give a"
                    + " Bedrock API key in api_key)");
        }
        if (keyId == null && session != null) {
            throw error(p.pathOf("aws_session_token"), p.lineOf("aws_session_token"),
                    "goes with aws_access_key_id and aws_secret_access_key");
        }
        if (keyId != null && apiKey != null) {
            throw error(p.pathOf("api_key"), p.lineOf("api_key"), "a bedrock provider signs with its access key or"
                    + " sends a Bedrock API key, not both; keep one");
        }
        if (keyId == null && apiKey == null) {
            throw error(p.pathOf("aws_access_key_id"), p.lineOf("type"), "type bedrock needs credentials:"
                    + " aws_access_key_id and aws_secret_access_key (optionally aws_session_token), or api_key");
        }
        return new BedrockSettings(region, keyId, secret, session);
    }

    /** An AWS credential field: expanded, never written in the file without a warning; null when absent or empty. */
    private String awsSecret(Section p, String name, String variable) throws ConfigException {
        Scalar raw = p.scalar(name);
        if (raw == null) {
            return null;
        }
        String path = p.pathOf(name);
        int line = p.lineOf(name);
        String value = expand(raw.text(), path, line).strip();
        if (value.isEmpty()) {
            return null;
        }
        if (hasLineBreak(value) || !value.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw error(path, line, "must be printable ASCII without spaces");
        }
        if (!EnvExpander.hasReference(raw.text())) {
            warn(path, line, "an AWS credential is written in the config file; prefer an environment reference"
                    + " such as ${" + variable + "}");
        }
        return value;
    }

    /**
     * A bedrock provider's base URL: {@code https://bedrock-runtime.<region>.amazonaws.com}, or {@code base_url},
     * which replaces only the scheme, host and port (the request paths are Bedrock's own).
     */
    private URI bedrockBaseUrl(Section p) throws ConfigException {
        if (p.field("base_url") == null) {
            String region = p.requiredString("region").strip();
            if (!AWS_REGION.matcher(region).matches()) {
                throw error(p.pathOf("region"), p.lineOf("region"), "is not an AWS region name such as us-east-1");
            }
            return URI.create(BedrockSettings.defaultEndpoint(region));
        }
        URI uri = baseUrl(p, ProviderType.BEDROCK);
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
            throw error(p.pathOf("base_url"), p.lineOf("base_url"), "for type bedrock give only the scheme, host"
                    + " and port (the paths are Bedrock's own: /model/<id>/invoke, …)");
        }
        return uri;
    }

    private Map<String, String> headers(Section p) throws ConfigException {
        Section h = p.section("headers");
        if (h == null) {
            return Map.of();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        Map<String, String> seen = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (Field f : h.node.fields().values()) {
            String path = h.pathOf(f.key());
            if (!HEADER_NAME.matcher(f.key()).matches()) {
                throw error(path, f.line(), "not a valid header name");
            }
            if (MANAGED_HEADERS.contains(f.key().toLowerCase(Locale.ROOT))) {
                throw error(path, f.line(), "the gateway sets this header itself");
            }
            if (seen.putIfAbsent(f.key(), f.key()) != null) {
                throw error(path, f.line(), "the same header as " + h.pathOf(seen.get(f.key()))
                        + " (header names ignore case)");
            }
            String value = text(f.value(), path, f.line());
            if (hasLineBreak(value)) {
                throw error(path, f.line(), "must not contain line breaks");
            }
            headers.put(f.key(), value);
        }
        return headers;
    }

    private SimulatorSettings simulator(Section p, ProviderType type) throws ConfigException {
        Section s = p.section("simulator");
        if (s == null) {
            return SimulatorSettings.DEFAULT;
        }
        if (type != ProviderType.SIMULATOR) {
            throw error(p.pathOf("simulator"), p.lineOf("simulator"), "only allowed for type simulator");
        }
        s.allowOnly(SIMULATOR_FIELDS);
        long ttftMs = s.integer("ttft_ms", 0, 0, 3_600_000);
        double tokensPerSecond = s.decimal("tokens_per_second", 0, 0, 1_000_000);
        Integer outputTokens =
                s.field("output_tokens") == null ? null : (int) s.integer("output_tokens", 1, 1, 10_000_000);
        String fault = s.string("fault");
        try {
            return new SimulatorSettings(ttftMs, tokensPerSecond, outputTokens, fault);
        } catch (IllegalArgumentException e) {
            // SimulatorSettings names the field first ("fault: ...", "ttft_ms must ..."): point at it.
            String message = e.getMessage() == null ? "invalid" : e.getMessage();
            for (String name : SIMULATOR_FIELDS) {
                if (message.startsWith(name + ": ") || message.startsWith(name + " ")) {
                    String rest = message.substring(name.length() + (message.startsWith(name + ": ") ? 2 : 1));
                    throw error(s.pathOf(name), s.lineOf(name), rest);
                }
            }
            throw error(p.pathOf("simulator"), p.lineOf("simulator"), message);
        }
    }
}
