package io.modelgateway.core.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.core.config.ConfigReader.Section;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * The {@code vertex} and {@code gemini} provider fields of {@code providers} (issue 18): {@code project},
 * {@code location} and {@code credentials_file} (vertex), {@code api_key} (gemini), and the cloud's own endpoint
 * when no {@code base_url} replaces its scheme, host and port. Kept apart from {@link ProvidersSection} so the other
 * clouds' blocks stay apart too.
 */
final class GoogleProviders {
    /** What a project id or a location may hold: it goes into the request path and the host name. */
    private static final Pattern PATH_SAFE = Pattern.compile("[a-z0-9][a-z0-9-]*");
    private static final String GEMINI_ENDPOINT = "https://generativelanguage.googleapis.com";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ProvidersSection reader;

    GoogleProviders(ProvidersSection reader) {
        this.reader = reader;
    }

    static boolean isGoogle(ProviderType type) {
        return type == ProviderType.VERTEX || type == ProviderType.GEMINI;
    }

    static String apiKeyVariable(ProviderType type) {
        return type == ProviderType.GEMINI ? "GEMINI_API_KEY" : "VERTEX_API_KEY";
    }

    /** Other types name none of the Google fields. */
    static void refuseGoogleFields(ConfigReader reader, Section p, ProviderType type) throws ConfigException {
        for (String name : new String[] {"project", "location", "credentials_file"}) {
            if (p.field(name) != null) {
                throw reader.error(p.pathOf(name), p.lineOf(name), "only used by type vertex");
            }
        }
    }

    GoogleSettings settings(Section p, ProviderType type, String apiKey) throws ConfigException {
        if (type == ProviderType.GEMINI) {
            for (String name : new String[] {"project", "location", "credentials_file"}) {
                if (p.field(name) != null) {
                    throw reader.error(p.pathOf(name), p.lineOf(name), "only used by type vertex (type gemini "
                            + "takes an api_key)");
                }
            }
            if (apiKey == null) {
                throw reader.error(p.pathOf("api_key"), p.lineOf("api_key"),
                        "is required for type gemini (an environment reference such as ${GEMINI_API_KEY})");
            }
            return GoogleSettings.GEMINI;
        }
        if (p.field("api_key") != null) {
            throw reader.error(p.pathOf("api_key"), p.lineOf("api_key"), "not used by type vertex, which signs "
                    + "in with credentials_file (a service-account key)");
        }
        String project = pathSafe(p, "project");
        String location = pathSafe(p, "location");
        return new GoogleSettings(project, location, account(p));
    }

    /**
     * The base URL: the configured one (its path must be empty: the paths stay the cloud's), else the cloud's own
     * ({@code https://generativelanguage.googleapis.com}, {@code https://<location>-aiplatform.googleapis.com}, or
     * {@code https://aiplatform.googleapis.com} for the {@code global} location).
     */
    URI baseUrl(Section p, ProviderType type, URI configured, GoogleSettings google) throws ConfigException {
        if (configured != null) {
            String path = configured.getRawPath();
            if (path != null && !path.isEmpty()) {
                throw reader.error(p.pathOf("base_url"), p.lineOf("base_url"), "for type " + type.configName()
                        + " give only the scheme, host and port: the paths are the cloud's own");
            }
            return configured;
        }
        if (type == ProviderType.GEMINI) {
            return URI.create(GEMINI_ENDPOINT);
        }
        return URI.create("global".equals(google.location()) ? "https://aiplatform.googleapis.com"
                : "https://" + google.location() + "-aiplatform.googleapis.com");
    }

    private String pathSafe(Section p, String name) throws ConfigException {
        String value = p.requiredString(name).strip();
        if (!PATH_SAFE.matcher(value).matches()) {
            throw reader.error(p.pathOf(name), p.lineOf(name),
                    "must be lower-case letters, digits and '-' (got '" + value + "')");
        }
        return value;
    }

    /**
     * {@code credentials_file}: the path of a service-account JSON key (as the Cloud console downloads it), or, from
     * an {@code ${ENV}} reference, the JSON itself. Read now, so a bad key stops the load; its {@code token_uri} is
     * where tokens are asked for. Messages name the field, never the key's content.
     */
    private GoogleSettings.ServiceAccount account(Section p) throws ConfigException {
        String value = p.requiredString("credentials_file").strip();
        String path = p.pathOf("credentials_file");
        int line = p.lineOf("credentials_file");
        byte[] json;
        if (value.startsWith("{")) {
            json = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        } else {
            try {
                json = Files.readAllBytes(Path.of(value));
            } catch (InvalidPathException e) {
                throw reader.error(path, line, "is not a valid file path");
            } catch (NoSuchFileException e) {
                throw reader.error(path, line, "'" + value + "' does not exist");
            } catch (IOException e) {
                throw reader.error(path, line, "'" + value + "' cannot be read (" + e.getClass().getSimpleName()
                        + ")");
            }
        }
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw reader.error(path, line, "is not a service-account JSON key (not JSON)");
        }
        if (root == null || !root.isObject()) {
            throw reader.error(path, line, "is not a service-account JSON key (not a JSON object)");
        }
        JsonNode kind = root.get("type");
        if (kind != null && !"service_account".equals(kind.asText())) {
            throw reader.error(path, line, "holds a key of type '" + kind.asText() + "'; a service_account key is "
                    + "needed");
        }
        String email = member(root, "client_email", path, line);
        String pem = member(root, "private_key", path, line);
        JsonNode tokenUriNode = root.get("token_uri");
        String tokenUri = tokenUriNode != null && tokenUriNode.isTextual() ? tokenUriNode.asText()
                : "https://oauth2.googleapis.com/token";
        URI uri;
        try {
            uri = URI.create(tokenUri);
        } catch (IllegalArgumentException e) {
            throw reader.error(path, line, "has a token_uri that is not a URL");
        }
        if (uri.getHost() == null || !("https".equals(uri.getScheme()) || "http".equals(uri.getScheme()))) {
            throw reader.error(path, line, "has a token_uri that is not an http(s) URL");
        }
        JsonNode keyId = root.get("private_key_id");
        return new GoogleSettings.ServiceAccount(email, privateKey(pem, path, line), keyId != null && keyId.isTextual()
                ? keyId.asText() : null, tokenUri);
    }

    private String member(JsonNode root, String name, String path, int line) throws ConfigException {
        JsonNode n = root.get(name);
        if (n == null || !n.isTextual() || n.asText().isBlank()) {
            throw reader.error(path, line, "is not a service-account JSON key (no " + name + ")");
        }
        return n.asText();
    }

    /** The PKCS#8 PEM private key of the JSON key (RSA, as Google issues them). */
    private PrivateKey privateKey(String pem, String path, int line) throws ConfigException {
        String body = pem.replace("-----BEGIN PRIVATE KEY-----", "").replace("-----END PRIVATE KEY-----", "")
                .replaceAll("\\s", "");
        try {
            byte[] der = Base64.getDecoder().decode(body);
            return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw reader.error(path, line, "has a private_key that is not a PKCS#8 RSA key in PEM");
        }
    }
}
