package io.modelgateway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An in-process fake of Google's generative endpoints, in their wire format: the Gemini API
 * ({@code /v1beta/models/{model}:generateContent}, {@code :streamGenerateContent?alt=sse}, {@code x-goog-api-key}),
 * Vertex AI ({@code /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:…} with an OAuth2 bearer
 * token) and the OAuth2 token endpoint of a service account ({@code /token}: the signed-JWT grant, whose RS256
 * signature it verifies with the public half of the key pair it generated, and whose claims it checks).
 *
 * <p>Its answers: a text naming the last user text ({@code "Gemini says: …"}), or, when the request declares
 * functions and its last turn is not a function response, a {@code functionCall} of the first one; the stream cuts
 * the text into three chunks, the last with the finish reason and the usage. Errors are Google's error objects.
 * The fake is checked by Google's own SDK and auth library ({@code GoogleFakeTest}), never by the gateway's code.
 */
public final class GoogleFake implements AutoCloseable {
    public static final String API_KEY = "AIza-test-gemini-key-0123456789";
    public static final String PROJECT = "test-project";
    public static final String LOCATION = "us-east5";
    public static final String CLIENT_EMAIL = "gateway@test-project.iam.gserviceaccount.com";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The audience Google's token endpoint takes in a grant's JWT, wherever the grant is posted. */
    public static final String AUDIENCE = "https://oauth2.googleapis.com/token";
    private static final Pattern GEMINI_PATH = Pattern.compile("/v1(?:beta)?/models/([^/:]+):(generateContent|streamGenerateContent)");
    private static final Pattern VERTEX_PATH = Pattern.compile(
            "/v1(?:beta1)?/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):(generateContent|streamGenerateContent)");

    /** Embeddings: the Gemini API's batchEmbedContents and Vertex AI's predict of a publisher model. */
    private static final Pattern GEMINI_EMBED_PATH = Pattern.compile("/v1(?:beta)?/models/([^/:]+):batchEmbedContents");
    private static final Pattern VERTEX_EMBED_PATH = Pattern.compile(
            "/v1(?:beta1)?/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/:]+):predict");
    /** Dimensions of the fake's vectors when the request names none. */
    public static final int DEFAULT_DIMENSIONS = 16;

    private static final Pattern CLAUDE_PATH = Pattern.compile(
            "/v1(?:beta1)?/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)");

    /** One request the generative endpoints got. */
    public record Seen(String path, String query, String apiKey, String authorization, JsonNode body) {
    }

    private final HttpServer server;
    private final KeyPair keys;
    private final Map<String, Long> issued = new ConcurrentHashMap<>();
    private final AtomicInteger tokenRequests = new AtomicInteger();
    private final AtomicInteger tokenCounter = new AtomicInteger();
    public final Queue<Seen> seen = new ConcurrentLinkedQueue<>();
    /** Seconds each issued token lives ({@code expires_in}). */
    public volatile long tokenSeconds = 3600;
    /** The next generative answers' status and Google error status instead of an answer (0: none). */
    public volatile int failNext;
    public volatile int failCount;

    private GoogleFake() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        keys = g.generateKeyPair();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.setExecutor(Executors.newFixedThreadPool(8, r -> {
            Thread t = new Thread(r, "google-fake");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::handle);
        server.start();
    }

    public static GoogleFake start() throws Exception {
        return new GoogleFake();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public String tokenUri() {
        return url() + "/token";
    }

    public RSAPublicKey publicKey() {
        return (RSAPublicKey) keys.getPublic();
    }

    /** Token grants asked for so far. */
    public int tokenRequests() {
        return tokenRequests.get();
    }

    /** A service-account JSON key for this fake (its token_uri is the fake's), written to {@code dir}. */
    public Path writeServiceAccount(Path dir) throws IOException {
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(keys.getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        ObjectNode sa = JSON.createObjectNode();
        sa.put("type", "service_account");
        sa.put("project_id", PROJECT);
        sa.put("private_key_id", "0123456789abcdef");
        sa.put("private_key", pem);
        sa.put("client_email", CLIENT_EMAIL);
        sa.put("client_id", "1234567890");
        sa.put("token_uri", tokenUri());
        Path file = dir.resolve("service-account.json");
        Files.writeString(file, JSON.writeValueAsString(sa));
        return file;
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath();
            byte[] body = ex.getRequestBody().readAllBytes();
            if (path.equals("/token")) {
                token(ex, new String(body, StandardCharsets.UTF_8));
                return;
            }
            Matcher cm = CLAUDE_PATH.matcher(path);
            if (cm.matches()) {
                claude(ex, cm, body);
                return;
            }
            Matcher ge = GEMINI_EMBED_PATH.matcher(path);
            Matcher ve = VERTEX_EMBED_PATH.matcher(path);
            if (ge.matches() || ve.matches()) {
                embeddings(ex, ge.matches() ? ge : null, ve.matches() ? ve : null, body);
                return;
            }
            Matcher gm = GEMINI_PATH.matcher(path);
            Matcher vm = VERTEX_PATH.matcher(path);
            boolean gemini = gm.matches();
            boolean vertex = !gemini && vm.matches();
            if (!gemini && !vertex) {
                System.err.println("google-fake: no such path " + path);
                error(ex, 404, "NOT_FOUND", "Requested entity was not found.");
                return;
            }
            String query = ex.getRequestURI().getRawQuery();
            String apiKey = ex.getRequestHeaders().getFirst("x-goog-api-key");
            String auth = ex.getRequestHeaders().getFirst("Authorization");
            JsonNode req;
            try {
                req = JSON.readTree(body);
            } catch (IOException e) {
                error(ex, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
                return;
            }
            seen.add(new Seen(path, query, apiKey, auth, req));
            if (gemini && !API_KEY.equals(apiKey)) {
                error(ex, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.");
                return;
            }
            if (vertex) {
                if (!vm.group(1).equals(PROJECT) || !vm.group(2).equals(LOCATION)) {
                    error(ex, 403, "PERMISSION_DENIED", "Permission denied on resource project.");
                    return;
                }
                Long exp = auth != null && auth.startsWith("Bearer ") ? issued.get(auth.substring(7)) : null;
                if (exp == null || exp < System.currentTimeMillis()) {
                    error(ex, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected "
                            + "OAuth 2 access token, login cookie or other valid authentication credential.");
                    return;
                }
            }
            if (failCount > 0) {
                failCount--;
                int status = failNext;
                error(ex, status, status == 429 ? "RESOURCE_EXHAUSTED" : status == 503 ? "UNAVAILABLE" : "INTERNAL",
                        status == 429 ? "Resource has been exhausted (e.g. check quota)." : "The service is "
                                + "currently unavailable.");
                return;
            }
            JsonNode contents = req == null ? null : req.get("contents");
            if (contents == null || !contents.isArray() || contents.isEmpty()) {
                error(ex, 400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified");
                return;
            }
            String model = gemini ? gm.group(1) : vm.group(3);
            boolean stream = (gemini ? gm.group(2) : vm.group(4)).equals("streamGenerateContent");
            if (stream && (query == null || !query.contains("alt=sse"))) {
                error(ex, 400, "INVALID_ARGUMENT", "this fake streams SSE only (alt=sse)");
                return;
            }
            answer(ex, req, model, stream);
        } catch (RuntimeException e) {
            error(ex, 500, "INTERNAL", "fake failed: " + e);
        }
    }

    private void answer(HttpExchange ex, JsonNode req, String model, boolean stream) throws IOException {
        JsonNode contents = req.get("contents");
        JsonNode last = contents.get(contents.size() - 1);
        String lastText = "";
        boolean functionResponse = false;
        for (JsonNode part : last.path("parts")) {
            if (part.has("text")) {
                lastText = part.get("text").asText();
            }
            functionResponse |= part.has("functionResponse");
        }
        String function = null;
        for (JsonNode tool : req.path("tools")) {
            for (JsonNode f : tool.path("functionDeclarations")) {
                if (function == null) {
                    function = f.path("name").asText(null);
                }
            }
        }
        if ("NONE".equals(req.path("toolConfig").path("functionCallingConfig").path("mode").asText())) {
            function = null;
        }
        boolean call = function != null && !functionResponse;
        String text = functionResponse ? "The tool said: " + functionResponseText(last) : "Gemini says: " + lastText;
        List<String> pieces = List.of(text.substring(0, Math.min(6, text.length())),
                text.substring(Math.min(6, text.length()), Math.min(12, text.length())),
                text.substring(Math.min(12, text.length())));
        if (!stream) {
            ObjectNode r = response(model, call ? null : text, call ? function : null, true);
            byte[] out = JSON.writeValueAsBytes(r);
            ex.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "text/event-stream");
        ex.sendResponseHeaders(200, 0);
        OutputStream os = ex.getResponseBody();
        if (call) {
            sse(os, response(model, null, function, true));
            return;
        }
        for (int i = 0; i < pieces.size(); i++) {
            sse(os, response(model, pieces.get(i), null, i == pieces.size() - 1));
        }
    }

    /**
     * Claude on Vertex AI: Anthropic's messages body with {@code anthropic_version: vertex-2023-10-16} and no
     * {@code model} (it is in the path), a bearer token; Anthropic's message or SSE back.
     */
    private void claude(HttpExchange ex, Matcher m, byte[] raw) throws IOException {
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        JsonNode req;
        try {
            req = JSON.readTree(raw);
        } catch (IOException e) {
            error(ex, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
            return;
        }
        seen.add(new Seen(ex.getRequestURI().getRawPath(), ex.getRequestURI().getRawQuery(),
                ex.getRequestHeaders().getFirst("x-goog-api-key"), auth, req));
        Long exp = auth != null && auth.startsWith("Bearer ") ? issued.get(auth.substring(7)) : null;
        if (exp == null || exp < System.currentTimeMillis()) {
            error(ex, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
            return;
        }
        if (!"vertex-2023-10-16".equals(req.path("anthropic_version").asText()) || req.has("model")) {
            anthropicError(ex, 400, "invalid_request_error", req.has("model") ? "model: Extra inputs are not "
                    + "permitted" : "anthropic_version: vertex-2023-10-16 is required");
            return;
        }
        String model = m.group(3);
        boolean stream = m.group(4).equals("streamRawPredict");
        if (stream != req.path("stream").asBoolean(false)) {
            anthropicError(ex, 400, "invalid_request_error", "stream must match the method");
            return;
        }
        String lastText = "";
        for (JsonNode msg : req.path("messages")) {
            JsonNode c = msg.path("content");
            if (c.isTextual()) {
                lastText = c.asText();
            } else {
                for (JsonNode b : c) {
                    if (b.has("text")) {
                        lastText = b.get("text").asText();
                    }
                }
            }
        }
        String text = "Claude on Vertex says: " + lastText;
        String id = "msg_vrtx_" + Long.toHexString(System.nanoTime());
        if (!stream) {
            ObjectNode r = JSON.createObjectNode();
            r.put("id", id);
            r.put("type", "message");
            r.put("role", "assistant");
            r.put("model", model);
            r.putArray("content").addObject().put("type", "text").put("text", text);
            r.put("stop_reason", "end_turn");
            r.putNull("stop_sequence");
            ObjectNode u = r.putObject("usage");
            u.put("input_tokens", 11);
            u.put("cache_creation_input_tokens", 0);
            u.put("cache_read_input_tokens", 4);
            u.put("output_tokens", 9);
            byte[] out = JSON.writeValueAsBytes(r);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.sendResponseHeaders(200, 0);
        OutputStream os = ex.getResponseBody();
        String[] events = {
            "message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"" + id + "\",\"type\":\"message\","
                    + "\"role\":\"assistant\",\"model\":\"" + model + "\",\"content\":[],\"stop_reason\":null,"
                    + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":11,\"cache_creation_input_tokens\":0,"
                    + "\"cache_read_input_tokens\":4,\"output_tokens\":1}}}",
            "content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
                    + "\"text\",\"text\":\"\"}}",
            "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                    + "\"text_delta\",\"text\":" + JSON.writeValueAsString(text.substring(0, 10)) + "}}",
            "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
                    + "\"text_delta\",\"text\":" + JSON.writeValueAsString(text.substring(10)) + "}}",
            "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}",
            "message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
                    + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}",
            "message_stop", "{\"type\":\"message_stop\"}"};
        for (int i = 0; i < events.length; i += 2) {
            os.write(("event: " + events[i] + "\ndata: " + events[i + 1] + "\n\n").getBytes(StandardCharsets.UTF_8));
            os.flush();
        }
    }

    /**
     * The vector the fake answers for {@code text}: {@code dimensions} float32 values in (-1, 1) made from the text's
     * hash, so a test can tell which input a vector belongs to.
     */
    public static float[] vector(String text, int dimensions) {
        float[] v = new float[dimensions];
        long h = text.hashCode() & 0xffffffffL;
        for (int i = 0; i < dimensions; i++) {
            h = h * 6364136223846793005L + 1442695040888963407L;
            v[i] = (int) ((h >>> 33) % 2001 - 1000) / 1024f;
        }
        return v;
    }

    /** The tokens the fake's Vertex AI reports for an input: its words. */
    public static int tokenCount(String text) {
        String t = text.strip();
        return t.isEmpty() ? 0 : t.split("\\s+").length;
    }

    /**
     * Embeddings, as documented: Vertex AI's {@code :predict} ({@code instances[].content},
     * {@code parameters.outputDimensionality}; {@code predictions[].embeddings} with {@code values} and
     * {@code statistics.token_count}; at most 250 instances, one for gemini-embedding-001), and the Gemini API's
     * {@code :batchEmbedContents} ({@code requests[]} of {@code model}, {@code content.parts[].text},
     * {@code outputDimensionality}; {@code embeddings[].values}; at most 100 requests, each naming the path's model).
     */
    private void embeddings(HttpExchange ex, Matcher gemini, Matcher vertex, byte[] raw) throws IOException {
        String apiKey = ex.getRequestHeaders().getFirst("x-goog-api-key");
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        JsonNode req;
        try {
            req = JSON.readTree(raw);
        } catch (IOException e) {
            error(ex, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
            return;
        }
        seen.add(new Seen(ex.getRequestURI().getRawPath(), ex.getRequestURI().getRawQuery(), apiKey, auth, req));
        if (gemini != null && !API_KEY.equals(apiKey)) {
            error(ex, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.");
            return;
        }
        if (vertex != null) {
            Long exp = auth != null && auth.startsWith("Bearer ") ? issued.get(auth.substring(7)) : null;
            if (exp == null || exp < System.currentTimeMillis()) {
                error(ex, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
                return;
            }
        }
        if (failCount > 0) {
            failCount--;
            int status = failNext;
            error(ex, status, status == 429 ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE", status == 429
                    ? "Resource has been exhausted (e.g. check quota)." : "The service is currently unavailable.");
            return;
        }
        ObjectNode out = JSON.createObjectNode();
        if (vertex != null) {
            String model = vertex.group(3);
            JsonNode instances = req.path("instances");
            if (!instances.isArray() || instances.isEmpty()) {
                error(ex, 400, "INVALID_ARGUMENT", "instances must be a non-empty list");
                return;
            }
            int max = model.startsWith("gemini-embedding-001") ? 1 : 250;
            if (instances.size() > max) {
                error(ex, 400, "INVALID_ARGUMENT", "Unable to submit request because the model supports up to "
                        + max + " instances per request, but the request has " + instances.size() + ".");
                return;
            }
            int dims = req.path("parameters").path("outputDimensionality").asInt(DEFAULT_DIMENSIONS);
            ArrayNode predictions = out.putArray("predictions");
            long chars = 0;
            for (JsonNode instance : instances) {
                JsonNode content = instance.get("content");
                if (content == null || !content.isTextual()) {
                    error(ex, 400, "INVALID_ARGUMENT", "instances[].content must be a string");
                    return;
                }
                String text = content.asText();
                chars += text.length();
                ObjectNode e = predictions.addObject().putObject("embeddings");
                ObjectNode stats = e.putObject("statistics");
                stats.put("truncated", false);
                stats.put("token_count", tokenCount(text));
                ArrayNode values = e.putArray("values");
                for (float f : vector(text, dims)) {
                    values.add(f);
                }
            }
            out.putObject("metadata").put("billableCharacterCount", chars);
        } else {
            String model = gemini.group(1);
            JsonNode requests = req.path("requests");
            if (!requests.isArray() || requests.isEmpty() || requests.size() > 100) {
                error(ex, 400, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.requests: at most 100 requests can "
                        + "be in one batch");
                return;
            }
            ArrayNode embeddings = out.putArray("embeddings");
            for (JsonNode r : requests) {
                if (!("models/" + model).equals(r.path("model").asText())) {
                    error(ex, 400, "INVALID_ARGUMENT", "* BatchEmbedContentsRequest.model: the model in each "
                            + "request must match the batch's (models/" + model + ")");
                    return;
                }
                StringBuilder text = new StringBuilder();
                for (JsonNode part : r.path("content").path("parts")) {
                    text.append(part.path("text").asText(""));
                }
                int dims = r.path("outputDimensionality").asInt(DEFAULT_DIMENSIONS);
                ArrayNode values = embeddings.addObject().putArray("values");
                for (float f : vector(text.toString(), dims)) {
                    values.add(f);
                }
            }
        }
        byte[] body = JSON.writeValueAsBytes(out);
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
        ex.sendResponseHeaders(200, body.length);
        ex.getResponseBody().write(body);
    }

    private static void anthropicError(HttpExchange ex, int status, String type, String message) throws IOException {
        byte[] out = ("{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":"
                + JSON.writeValueAsString(message) + "}}").getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, out.length);
        ex.getResponseBody().write(out);
    }

    private static String functionResponseText(JsonNode content) {
        for (JsonNode part : content.path("parts")) {
            JsonNode r = part.path("functionResponse").path("response");
            if (!r.isMissingNode()) {
                return r.toString();
            }
        }
        return "";
    }

    private static void sse(OutputStream os, ObjectNode event) throws IOException {
        os.write(("data: " + JSON.writeValueAsString(event) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        os.flush();
    }

    /** One GenerateContentResponse: a text or a function call; the last one with finishReason and full usage. */
    private static ObjectNode response(String model, String text, String function, boolean last) {
        ObjectNode r = JSON.createObjectNode();
        ObjectNode candidate = r.putArray("candidates").addObject();
        ObjectNode content = candidate.putObject("content");
        content.put("role", "model");
        ArrayNode parts = content.putArray("parts");
        if (text != null) {
            parts.addObject().put("text", text);
        } else {
            ObjectNode fc = parts.addObject().putObject("functionCall");
            fc.put("name", function);
            fc.putObject("args").put("city", "Paris");
        }
        if (last) {
            candidate.put("finishReason", "STOP");
        }
        candidate.put("index", 0);
        ObjectNode usage = r.putObject("usageMetadata");
        usage.put("promptTokenCount", 21);
        if (last) {
            usage.put("candidatesTokenCount", 7);
            usage.put("totalTokenCount", 33);
            usage.put("cachedContentTokenCount", 8);
            usage.put("thoughtsTokenCount", 5);
        } else {
            usage.put("totalTokenCount", 21);
        }
        r.put("modelVersion", model);
        r.put("responseId", "fake-" + Long.toHexString(System.nanoTime()));
        return r;
    }

    private void token(HttpExchange ex, String form) throws IOException {
        tokenRequests.incrementAndGet();
        Map<String, String> params = new HashMap<>();
        for (String kv : form.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                params.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        String problem = checkAssertion(params);
        if (problem != null) {
            System.err.println("google-fake: grant refused: " + problem);
            byte[] out = ("{\"error\":\"invalid_grant\",\"error_description\":\"" + problem + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(400, out.length);
            ex.getResponseBody().write(out);
            return;
        }
        String token = "ya29.fake-" + tokenCounter.incrementAndGet() + "-" + Long.toHexString(System.nanoTime());
        long seconds = tokenSeconds;
        issued.put(token, System.currentTimeMillis() + seconds * 1000);
        byte[] out = ("{\"access_token\":\"" + token + "\",\"expires_in\":" + seconds + ",\"token_type\":\"Bearer\"}")
                .getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        ex.sendResponseHeaders(200, out.length);
        ex.getResponseBody().write(out);
    }

    /** What is wrong with the grant (RFC 7523 as Google takes it), or null. */
    private String checkAssertion(Map<String, String> params) {
        if (!"urn:ietf:params:oauth:grant-type:jwt-bearer".equals(params.get("grant_type"))) {
            return "Invalid grant_type";
        }
        String jwt = params.get("assertion");
        String[] parts = jwt == null ? new String[0] : jwt.split("\\.", -1);
        if (parts.length != 3) {
            return "Invalid JWT";
        }
        try {
            Base64.Decoder d = Base64.getUrlDecoder();
            JsonNode header = JSON.readTree(d.decode(parts[0]));
            JsonNode claims = JSON.readTree(d.decode(parts[1]));
            if (!"RS256".equals(header.path("alg").asText())) {
                return "Invalid JWT: alg";
            }
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initVerify(keys.getPublic());
            rsa.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            if (!rsa.verify(d.decode(parts[2]))) {
                return "Invalid JWT Signature.";
            }
            if (!CLIENT_EMAIL.equals(claims.path("iss").asText())) {
                return "Invalid JWT: iss";
            }
            if (!AUDIENCE.equals(claims.path("aud").asText())) {
                return "Invalid JWT: aud " + claims.path("aud").asText();
            }
            if (!claims.path("scope").asText().contains("https://www.googleapis.com/auth/cloud-platform")) {
                return "Invalid JWT: scope";
            }
            long now = System.currentTimeMillis() / 1000;
            long iat = claims.path("iat").asLong(-1);
            long exp = claims.path("exp").asLong(-1);
            if (iat < now - 300 || iat > now + 300 || exp <= now || exp - iat > 3600) {
                return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.";
            }
            return null;
        } catch (Exception e) {
            return "Invalid JWT: " + e.getClass().getSimpleName();
        }
    }

    private static void error(HttpExchange ex, int status, String googleStatus, String message) throws IOException {
        ObjectNode r = JSON.createObjectNode();
        ObjectNode e = r.putObject("error");
        e.put("code", status);
        e.put("message", message);
        e.put("status", googleStatus);
        byte[] out = JSON.writeValueAsBytes(r);
        ex.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
        if (status == 429) {
            ex.getResponseHeaders().set("Retry-After", "7");
        }
        ex.sendResponseHeaders(status, out.length);
        ex.getResponseBody().write(out);
    }
}
