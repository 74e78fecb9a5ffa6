package io.modelgateway.core.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;

/**
 * An in-process Microsoft Entra ID (the Microsoft identity platform's v2.0 endpoints) with one tenant and one
 * confidential application, for the client-credentials grant as Microsoft documents it:
 * <ul>
 *   <li>{@code POST /{tenant}/oauth2/v2.0/token}, a form with {@code grant_type=client_credentials}, {@code client_id},
 *       {@code client_secret} and {@code scope} (one resource's {@code /.default}; other parameters, such as those
 *       Microsoft's own library adds, are ignored): {@code {"token_type":"Bearer","expires_in":…,"ext_expires_in":…,
 *       "access_token":…}}, the token a JWT-shaped string naming the resource as its {@code aud};</li>
 *   <li>refusals with Entra's error body ({@code error}, {@code error_description} starting with the AADSTS code,
 *       {@code error_codes}, {@code timestamp}, {@code trace_id}, {@code correlation_id}) and its statuses: 401
 *       {@code invalid_client} for a wrong or missing secret (AADSTS7000215, AADSTS7000218), 400 for the rest — an
 *       unknown tenant (AADSTS90002), application (AADSTS700016) or resource (AADSTS500011), a scope without
 *       {@code /.default} (AADSTS1002012), another grant type (AADSTS70003), a missing parameter (AADSTS900144);</li>
 *   <li>{@code GET /{tenant}/v2.0/.well-known/openid-configuration}, the metadata MSAL reads before its first token
 *       request (its {@code token_endpoint} on the listener that was asked).</li>
 * </ul>
 * It listens on plain HTTP (for the gateway, whose {@code token_url} may be a loopback http URL) and, when started with
 * a test certificate authority, also on HTTPS (Microsoft's library takes only an https authority). The tokens it issued
 * are remembered, so {@link AzureOpenAiFake} accepts exactly those, for their audience and until they expire.
 *
 * <p>Nothing here is the gateway's: {@code entra.test.mjs} has the {@code ClientSecretCredential} of Microsoft's
 * {@code @azure/identity} obtain tokens from it, and the openai SDK's {@code AzureOpenAI} client use them.
 */
public final class EntraFake implements AutoCloseable {
    public static final String TENANT_ID = "5e3c7a91-0b2d-4f6e-8a1c-9d7b3e5f2a40";
    public static final String CLIENT_ID = "b1a2c3d4-e5f6-4789-9abc-def012345678";
    /** In the shape of an Entra client secret value (40 characters with its {@code ~}). */
    public static final String CLIENT_SECRET = "Xy8Q~fakeEntraSecret.Value_0123456789abcd";
    /** Azure OpenAI's resource, the audience of the tokens the gateway asks for. */
    public static final String AUDIENCE = "https://cognitiveservices.azure.com";
    public static final String SCOPE = AUDIENCE + "/.default";
    /** The resources this tenant knows (a scope for any other is refused as Entra refuses it). */
    private static final List<String> RESOURCES = List.of(AUDIENCE, "https://graph.microsoft.com");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern TOKEN_PATH = Pattern.compile("/([^/]+)/oauth2/v2\\.0/token");
    private static final Pattern METADATA_PATH = Pattern.compile("/([^/]+)/v2\\.0/\\.well-known/openid-configuration");

    /** A token it issued: its audience, and when it expires. */
    private record Issued(String audience, long expiresAtMillis) {
    }

    private final ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
        Thread t = new Thread(r, "entra-fake");
        t.setDaemon(true);
        return t;
    });
    private final HttpServer http;
    private final HttpsServer https;
    private final Map<String, Issued> issued = new ConcurrentHashMap<>();
    private final AtomicInteger counter = new AtomicInteger();
    private final SecureRandom random = new SecureRandom();
    /** The form of every token request, in order (names to values; the fake's own secret is in them). */
    public final List<Map<String, String>> tokenRequests = new CopyOnWriteArrayList<>();
    /** The path of every request, token endpoint or metadata, in order. */
    public final List<String> paths = new CopyOnWriteArrayList<>();
    /** {@code expires_in} of the tokens it issues from now on. */
    public volatile long tokenSeconds = 3599;
    /** While set, a token request is recorded and then waits for it, unanswered: a slow token endpoint. */
    private volatile CountDownLatch held;

    private EntraFake(TestCertificates tls) throws Exception {
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        http.setExecutor(executor);
        http.createContext("/", ex -> handle(ex, baseUrl(http, "http")));
        http.start();
        if (tls == null) {
            https = null;
            return;
        }
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(tls.issueServer("login.fake.test").toKeyManagerFactory().getKeyManagers(), null, null);
        https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        https.setHttpsConfigurator(new HttpsConfigurator(ssl));
        https.setExecutor(executor);
        https.createContext("/", ex -> handle(ex, baseUrl(https, "https")));
        https.start();
    }

    /** Plain HTTP only. */
    public static EntraFake start() throws Exception {
        return new EntraFake(null);
    }

    /** Plain HTTP and HTTPS, the latter with a server certificate for 127.0.0.1 issued by {@code authority}. */
    public static EntraFake startWithTls(TestCertificates authority) throws Exception {
        return new EntraFake(authority);
    }

    private static String baseUrl(HttpServer server, String scheme) {
        return scheme + "://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The plain-HTTP token endpoint of the tenant: a gateway's {@code token_url}. */
    public String tokenUrl() {
        return baseUrl(http, "http") + "/" + TENANT_ID + "/oauth2/v2.0/token";
    }

    /** The HTTPS origin, as Microsoft's library takes an authority host ({@code https://login.microsoftonline.com}). */
    public String httpsAuthorityHost() {
        if (https == null) {
            throw new IllegalStateException("started without TLS");
        }
        return baseUrl(https, "https");
    }

    /** Whether {@code token} is one it issued for {@code audience} and not yet expired. */
    public boolean accepts(String token, String audience) {
        Issued i = issued.get(token);
        return i != null && i.audience().equals(audience) && i.expiresAtMillis() > System.currentTimeMillis();
    }

    /** Token requests from now on wait, unanswered, until {@link #release}. */
    public void hold() {
        held = new CountDownLatch(1);
    }

    /** Answers the token requests held since {@link #hold}, and the next ones at once. */
    public void release() {
        CountDownLatch h = held;
        held = null;
        if (h != null) {
            h.countDown();
        }
    }

    /** Tokens it issued so far. */
    public int issuedCount() {
        return counter.get();
    }

    @Override
    public void close() {
        http.stop(0);
        if (https != null) {
            https.stop(0);
        }
        executor.shutdownNow();
    }

    private void handle(HttpExchange ex, String base) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath();
            paths.add(path);
            byte[] body = ex.getRequestBody().readNBytes(1 << 20);
            Matcher token = TOKEN_PATH.matcher(path);
            Matcher metadata = METADATA_PATH.matcher(path);
            if (metadata.matches() && ex.getRequestMethod().equals("GET")) {
                if (!metadata.group(1).equals(TENANT_ID)) {
                    refuse(ex, 400, "invalid_tenant", 90002, tenantNotFound(metadata.group(1)));
                    return;
                }
                send(ex, 200, openIdConfiguration(base));
                return;
            }
            if (!token.matches()) {
                send(ex, 404, JSON.createObjectNode().put("error", "not_found"));
                return;
            }
            if (!ex.getRequestMethod().equals("POST")) {
                refuse(ex, 400, "invalid_request", 900561, "The endpoint only accepts POST, OPTIONS requests. "
                        + "Received a " + ex.getRequestMethod() + " request.");
                return;
            }
            String contentType = String.valueOf(ex.getRequestHeaders().getFirst("Content-Type"));
            Map<String, String> form = contentType.startsWith("application/x-www-form-urlencoded")
                    ? form(new String(body, StandardCharsets.UTF_8)) : Map.of();
            tokenRequests.add(form);
            CountDownLatch h = held;
            if (h != null && !h.await(30, TimeUnit.SECONDS)) {
                throw new IOException("held for 30 s and never released");
            }
            grant(ex, token.group(1), form);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The client-credentials grant: Entra's checks, in Entra's order, then a token. */
    private void grant(HttpExchange ex, String tenant, Map<String, String> form) throws IOException {
        if (!tenant.equals(TENANT_ID)) {
            refuse(ex, 400, "invalid_request", 90002, tenantNotFound(tenant));
            return;
        }
        for (String name : List.of("grant_type", "client_id", "scope")) {
            if (!form.containsKey(name)) {
                refuse(ex, 400, "invalid_request", 900144, "The request body must contain the following parameter: '"
                        + name + "'.");
                return;
            }
        }
        if (!form.get("grant_type").equals("client_credentials")) {
            refuse(ex, 400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type '"
                    + form.get("grant_type") + "'.");
            return;
        }
        if (!form.get("client_id").equals(CLIENT_ID)) {
            refuse(ex, 400, "unauthorized_client", 700016, "Application with identifier '" + form.get("client_id")
                    + "' was not found in the directory '" + TENANT_ID + "'. This can happen if the application has "
                    + "not been installed by the administrator of the tenant or consented to by any user in the "
                    + "tenant. You may have sent your authentication request to the wrong tenant.");
            return;
        }
        String scope = form.get("scope");
        if (!scope.endsWith("/.default") || scope.contains(" ")) {
            refuse(ex, 400, "invalid_scope", 1002012, "The provided value for scope " + scope + " is not valid. "
                    + "Client credential flows must have a scope value with /.default suffixed to the resource "
                    + "identifier (application ID URI).");
            return;
        }
        String resource = scope.substring(0, scope.length() - "/.default".length());
        if (!RESOURCES.contains(resource)) {
            refuse(ex, 400, "invalid_resource", 500011, "The resource principal named " + resource + " was not "
                    + "found in the tenant named " + TENANT_ID + ". This can happen if the application has not been "
                    + "installed by the administrator of the tenant or consented to by any user in the tenant. You "
                    + "might have sent your authentication request to the wrong tenant.");
            return;
        }
        String secret = form.get("client_secret");
        if (secret == null && !form.containsKey("client_assertion")) {
            refuse(ex, 401, "invalid_client", 7000218, "The request body must contain the following parameter: "
                    + "'client_assertion' or 'client_secret'.");
            return;
        }
        if (!CLIENT_SECRET.equals(secret)) {
            refuse(ex, 401, "invalid_client", 7000215, "Invalid client secret provided. Ensure the secret being sent "
                    + "in the request is the client secret value, not the client secret ID, for a secret added to app '"
                    + CLIENT_ID + "'.");
            return;
        }
        long seconds = tokenSeconds;
        String accessToken = accessToken(resource, seconds);
        issued.put(accessToken, new Issued(resource, System.currentTimeMillis() + seconds * 1000));
        ObjectNode answer = JSON.createObjectNode();
        answer.put("token_type", "Bearer");
        answer.put("expires_in", seconds);
        answer.put("ext_expires_in", seconds);
        answer.put("access_token", accessToken);
        ex.getResponseHeaders().set("Cache-Control", "no-store, no-cache");
        ex.getResponseHeaders().set("Pragma", "no-cache");
        send(ex, 200, answer);
    }

    /** A JWT in shape (Entra's v1.0 access token claims for an application); the signature is random bytes. */
    private String accessToken(String audience, long seconds) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        long now = System.currentTimeMillis() / 1000;
        ObjectNode header = JSON.createObjectNode().put("typ", "JWT").put("alg", "RS256").put("kid", "fake-key-1");
        ObjectNode claims = JSON.createObjectNode();
        claims.put("aud", audience);
        claims.put("iss", "https://sts.windows.net/" + TENANT_ID + "/");
        claims.put("iat", now);
        claims.put("nbf", now);
        claims.put("exp", now + seconds);
        claims.put("appid", CLIENT_ID);
        claims.put("tid", TENANT_ID);
        claims.put("ver", "1.0");
        claims.put("uti", "fake-" + counter.incrementAndGet());
        byte[] signature = new byte[64];
        random.nextBytes(signature);
        return b64.encodeToString(header.toString().getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(signature);
    }

    private static ObjectNode openIdConfiguration(String base) {
        ObjectNode c = JSON.createObjectNode();
        String tenantBase = base + "/" + TENANT_ID;
        c.put("token_endpoint", tenantBase + "/oauth2/v2.0/token");
        c.putArray("token_endpoint_auth_methods_supported").add("client_secret_post").add("private_key_jwt")
                .add("client_secret_basic");
        c.put("jwks_uri", base + "/" + TENANT_ID + "/discovery/v2.0/keys");
        c.putArray("response_modes_supported").add("query").add("fragment").add("form_post");
        c.putArray("subject_types_supported").add("pairwise");
        c.putArray("id_token_signing_alg_values_supported").add("RS256");
        c.putArray("response_types_supported").add("code").add("id_token").add("code id_token").add("id_token token");
        c.putArray("scopes_supported").add("openid").add("profile").add("email").add("offline_access");
        c.put("issuer", "https://login.microsoftonline.com/" + TENANT_ID + "/v2.0");
        c.put("request_uri_parameter_supported", false);
        c.put("userinfo_endpoint", "https://graph.microsoft.com/oidc/userinfo");
        c.put("authorization_endpoint", tenantBase + "/oauth2/v2.0/authorize");
        c.put("device_authorization_endpoint", tenantBase + "/oauth2/v2.0/devicecode");
        c.put("http_logout_supported", true);
        c.put("frontchannel_logout_supported", true);
        c.put("end_session_endpoint", tenantBase + "/oauth2/v2.0/logout");
        c.put("tenant_region_scope", "EU");
        c.put("cloud_instance_name", "microsoftonline.com");
        c.put("cloud_graph_host_name", "graph.windows.net");
        c.put("msgraph_host", "graph.microsoft.com");
        return c;
    }

    private static String tenantNotFound(String tenant) {
        return "Tenant '" + tenant + "' not found. Check to make sure you have the correct tenant ID and are signing "
                + "into the correct cloud. Check with your subscription administrator, this may happen if there are "
                + "no active subscriptions for the tenant.";
    }

    /** Entra's error body: the AADSTS code leads the description, which ends with the trace and correlation ids. */
    private static void refuse(HttpExchange ex, int status, String error, int code, String message)
            throws IOException {
        String traceId = UUID.randomUUID().toString();
        String correlationId = UUID.randomUUID().toString();
        String timestamp = DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.SECONDS));
        ObjectNode body = JSON.createObjectNode();
        body.put("error", error);
        body.put("error_description", "AADSTS" + code + ": " + message + " Trace ID: " + traceId
                + " Correlation ID: " + correlationId + " Timestamp: " + timestamp.replace('T', ' '));
        body.putArray("error_codes").add(code);
        body.put("timestamp", timestamp.replace('T', ' '));
        body.put("trace_id", traceId);
        body.put("correlation_id", correlationId);
        body.put("error_uri", "https://login.microsoftonline.com/error?code=" + code);
        send(ex, status, body);
    }

    private static void send(HttpExchange ex, int status, ObjectNode body) throws IOException {
        byte[] out = JSON.writeValueAsBytes(body);
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        ex.sendResponseHeaders(status, out.length);
        ex.getResponseBody().write(out);
    }

    private static Map<String, String> form(String body) {
        Map<String, String> params = new LinkedHashMap<>();
        for (String kv : body.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                params.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return params;
    }
}
