package io.modelgateway.core.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.core.testing.ScriptedUpstream.Received;
import io.modelgateway.core.testing.ScriptedUpstream.Script;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An in-process Azure OpenAI resource endpoint, answering as Azure documents its data-plane inference API: chat
 * completions and embeddings under the deployment paths ({@code /openai/deployments/{deployment}/chat/completions
 * ?api-version=…}) and the v1 paths ({@code /openai/v1/chat/completions}, the deployment in the body's {@code model}),
 * authenticated by the {@code api-key} header or a Microsoft Entra bearer token (on v1 also the key as a bearer, as
 * the plain OpenAI client sends it): {@link #ENTRA_TOKEN}, or one an {@link EntraFake} it {@link #trust}s issued. Answers carry Azure's additions: {@code prompt_filter_results} (in a stream, a
 * first chunk with no choices and empty {@code id} and {@code model}) and per-choice {@code content_filter_results}.
 *
 * <p>It refuses what Azure refuses, with Azure's bodies: a missing or wrong credential (401), an unknown path or API
 * version (404 "Resource not found"), an unknown deployment (404 {@code DeploymentNotFound}), a chat deployment asked
 * for embeddings (400 {@code OperationNotSupported}). Words in the prompt steer it: {@code FILTER_PROMPT} → the 400
 * {@code content_filter} answer with its {@code innererror}; {@code FILTER_COMPLETION} → a completion stopped by the
 * filter ({@code finish_reason: "content_filter"}, no message in a whole answer; the text so far, then the filtered
 * finish chunk, in a stream). {@code CACHED_PROMPT} → usage with {@link #CACHED_TOKENS} cache reads in
 * {@code prompt_tokens_details.cached_tokens} and {@link #REASONING_TOKENS} in
 * {@code completion_tokens_details.reasoning_tokens}. {@link #throttleNext} makes the next answers Azure's 429 with
 * {@code retry-after}.
 *
 * <p>Nothing here is the gateway's: the official {@code openai} SDK's {@code AzureOpenAI} client talks to this fake
 * directly in {@code azure.test.mjs}, which checks that it is what that client expects.
 */
public final class AzureOpenAiFake implements AutoCloseable {
    /** A resource key (Azure's are 32 hexadecimal characters). */
    public static final String API_KEY = "5c1f0e9a7b3d4e2f8a6c0b1d9e7f3a2c";
    /** A Microsoft Entra access token (a JWT in shape; the fake compares it as a string). */
    public static final String ENTRA_TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9"
            + ".eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.ZmFrZS1zaWduYXR1cmU";
    /** The API versions this resource serves on the deployment paths. */
    public static final Set<String> API_VERSIONS = Set.of("2024-10-21", "2025-04-01-preview");
    public static final String CHAT_DEPLOYMENT = "gpt-4o-prod";
    public static final String EMBEDDING_DEPLOYMENT = "embed-3-small";
    /** The model behind each deployment, as Azure reports it in answers. */
    private static final Map<String, String> MODELS = Map.of(CHAT_DEPLOYMENT, "gpt-4o-2024-11-20",
            EMBEDDING_DEPLOYMENT, "text-embedding-3-small");

    /** With {@code CACHED_PROMPT} in the prompt: the prompt tokens read from the cache, and the reasoning tokens. */
    public static final int CACHED_TOKENS = 1024;
    public static final int REASONING_TOKENS = 2;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern DEPLOYMENT_PATH =
            Pattern.compile("/openai/deployments/([^/?]+)/(chat/completions|embeddings)");
    private static final Pattern V1_PATH = Pattern.compile("/openai/v1/(chat/completions|embeddings)");
    private static final String[] CATEGORIES = {"hate", "self_harm", "sexual", "violence"};

    private final ScriptedUpstream server;
    /** The Entra access tokens this resource takes, besides {@link #ENTRA_TOKEN}: none unless {@link #trust} says. */
    private volatile EntraFake entra;
    private final AtomicInteger throttle = new AtomicInteger();
    private final AtomicInteger ids = new AtomicInteger();

    public AzureOpenAiFake() throws InterruptedException {
        server = new ScriptedUpstream(this::answer);
    }

    /** {@code https://my-resource.openai.azure.com} in tests: the resource endpoint, no path. */
    public String endpoint() {
        return server.baseUrl();
    }

    /** Every request received, in order. */
    public List<Received> received() {
        return server.received;
    }

    /** Connections the fake accepted. */
    public int connections() {
        return server.connections.get();
    }

    /**
     * Takes the tokens {@code issuer} issued for Azure OpenAI's audience ({@code https://cognitiveservices.azure.com})
     * and not yet expired, as Azure takes the tokens of the tenant's Entra ID.
     */
    public void trust(EntraFake issuer) {
        entra = issuer;
    }

    /** The next {@code n} requests get Azure's 429 (rate limit) with {@code retry-after: 1}. */
    public void throttleNext(int n) {
        throttle.set(n);
    }

    @Override
    public void close() {
        server.close();
    }

    // ------------------------------------------------------------------ routing and checks

    private Script answer(Received r) {
        if (!r.method().equals("POST")) {
            return error(405, "405", "Method not allowed");
        }
        String path = r.uri();
        String query = "";
        int q = path.indexOf('?');
        if (q >= 0) {
            query = path.substring(q + 1);
            path = path.substring(0, q);
        }
        Matcher deployment = DEPLOYMENT_PATH.matcher(path);
        Matcher v1 = V1_PATH.matcher(path);
        boolean v1Form = v1.matches();
        if (!deployment.matches() && !v1Form) {
            return error(404, "404", "Resource not found");
        }
        Map<String, String> params = query(query);
        if (!v1Form && (params.size() != 1 || !API_VERSIONS.contains(params.get("api-version")))) {
            return error(404, "404", "Resource not found"); // a missing or unknown api-version
        }
        if (v1Form && !params.isEmpty() && !Set.of("preview", "latest").contains(params.get("api-version"))) {
            return error(400, "BadRequest", "API version not supported");
        }
        Script refused = unauthorized(r, v1Form);
        if (refused != null) {
            return refused;
        }
        if (!"application/json".equals(r.headers().get("content-type"))) {
            return error(415, "UnsupportedMediaType", "Content-Type must be application/json.");
        }
        JsonNode body;
        try {
            body = JSON.readTree(r.body());
        } catch (Exception e) {
            return error(400, "BadRequest", "The request body is not valid JSON.");
        }
        if (body == null || !body.isObject()) {
            return error(400, "BadRequest", "The request body must be a JSON object.");
        }
        String name = v1Form ? body.path("model").asText(null) : decode(deployment.group(1));
        String operation = v1Form ? v1.group(1) : deployment.group(2);
        if (name == null || !MODELS.containsKey(name)) {
            return error(404, "DeploymentNotFound", "The API deployment for this resource does not exist. If you "
                    + "created the deployment within the last 5 minutes, please wait a moment and try again.");
        }
        if (throttle.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return new Script(429, Map.of("content-type", "application/json", "retry-after", "1",
                    "x-ratelimit-remaining-requests", "0"), List.of(bytes(errorBody("429", "Requests to the "
                    + "ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token "
                    + "rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second."))), 0, -1);
        }
        boolean embeddingDeployment = name.equals(EMBEDDING_DEPLOYMENT);
        if (operation.equals("embeddings") != embeddingDeployment) {
            return error(400, "OperationNotSupported", "The " + (embeddingDeployment ? "chatCompletion" : "embeddings")
                    + " operation does not work with the specified model, " + MODELS.get(name)
                    + ". Please choose different model and try again.");
        }
        return embeddingDeployment ? embeddings(name, body) : chat(name, body);
    }

    /** Azure's 401s: the key on {@code api-key} (either form) or a bearer token (the key too, on v1). */
    private Script unauthorized(Received r, boolean v1Form) {
        List<String> keys = r.all("api-key");
        List<String> authorizations = r.all("authorization");
        if (keys.size() + authorizations.size() != 1) {
            return error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure "
                    + "to provide a valid key for an active subscription and use a correct regional API endpoint for "
                    + "your resource.");
        }
        if (!keys.isEmpty()) {
            return keys.get(0).equals(API_KEY) ? null : error(401, "401", "Access denied due to invalid subscription "
                    + "key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use "
                    + "a correct regional API endpoint for your resource.");
        }
        String a = authorizations.get(0);
        EntraFake issuer = entra;
        if (a.equals("Bearer " + ENTRA_TOKEN) || v1Form && a.equals("Bearer " + API_KEY)
                || issuer != null && a.startsWith("Bearer ") && issuer.accepts(a.substring(7), EntraFake.AUDIENCE)) {
            return null;
        }
        return error(401, "401", "Unauthorized. Access token is missing, invalid, audience is incorrect "
                + "(https://cognitiveservices.azure.com), or have expired.");
    }

    // ------------------------------------------------------------------ chat completions

    private Script chat(String deployment, JsonNode body) {
        String prompt = promptText(body.path("messages"));
        if (prompt.contains("FILTER_PROMPT")) {
            return contentFilterError();
        }
        boolean filtered = prompt.contains("FILTER_COMPLETION");
        boolean stream = body.path("stream").asBoolean(false);
        boolean usageChunk = body.path("stream_options").path("include_usage").asBoolean(false);
        int limit = body.has("max_completion_tokens") ? body.get("max_completion_tokens").asInt()
                : body.has("max_tokens") ? body.get("max_tokens").asInt() : Integer.MAX_VALUE;
        List<String> words = new ArrayList<>(List.of("Hello", " from", " Azure", " deployment", " " + deployment + "."));
        String finish = "stop";
        if (words.size() > limit) {
            words = words.subList(0, Math.max(0, limit));
            finish = "length";
        }
        if (filtered) {
            words = words.subList(0, Math.min(2, words.size()));
            finish = "content_filter";
        }
        JsonNode tool = body.path("tools").path(0);
        boolean toolCall = !filtered && tool.isObject() && lastRole(body).equals("user");
        // CACHED_PROMPT: a prompt whose first 1024 tokens came from the cache, with 2 reasoning tokens in the output.
        boolean cached = prompt.contains("CACHED_PROMPT");
        int promptTokens = Math.max(1, prompt.length() / 4) + (cached ? CACHED_TOKENS : 0);
        int completionTokens = (toolCall ? 12 : words.size()) + (cached ? REASONING_TOKENS : 0);
        String id = "chatcmpl-AzFake" + ids.incrementAndGet();
        String model = MODELS.get(deployment);
        ObjectNode usage = usage(promptTokens, completionTokens, cached ? CACHED_TOKENS : 0,
                cached ? REASONING_TOKENS : 0);
        if (!stream) {
            ObjectNode choice = JSON.createObjectNode();
            choice.set("content_filter_results", filterResults(filtered));
            choice.put("finish_reason", toolCall ? "tool_calls" : finish);
            choice.put("index", 0);
            choice.putNull("logprobs");
            if (!filtered) { // a completion the filter withheld comes without a message
                ObjectNode message = choice.putObject("message");
                message.putArray("annotations");
                if (toolCall) {
                    message.putNull("content");
                    message.putArray("tool_calls").add(toolCallNode(tool, true));
                } else {
                    message.put("content", String.join("", words));
                }
                message.putNull("refusal");
                message.put("role", "assistant");
            }
            ObjectNode answer = JSON.createObjectNode();
            answer.putArray("choices").add(choice);
            answer.put("created", 1787300000);
            answer.put("id", id);
            answer.put("model", model);
            answer.put("object", "chat.completion");
            answer.set("prompt_filter_results", promptFilterResults());
            answer.put("system_fingerprint", "fp_ee1d74bde0");
            answer.set("usage", usage);
            return Script.json(200, answer.toString());
        }
        List<String> events = new ArrayList<>();
        ObjectNode first = JSON.createObjectNode();
        first.putArray("choices");
        first.put("created", 0);
        first.put("id", "");
        first.put("model", "");
        first.put("object", "");
        first.set("prompt_filter_results", promptFilterResults());
        events.add(event(first));
        ObjectNode role = JSON.createObjectNode();
        role.put("content", "");
        role.putNull("refusal");
        role.put("role", "assistant");
        events.add(event(chunk(id, model, JSON.createObjectNode(), role, null)));
        if (toolCall) {
            ObjectNode start = JSON.createObjectNode();
            start.putArray("tool_calls").add(toolCallNode(tool, false));
            events.add(event(chunk(id, model, filterResults(false), start, null)));
            ObjectNode args = JSON.createObjectNode();
            ObjectNode fragment = args.putArray("tool_calls").addObject();
            fragment.put("index", 0);
            fragment.putObject("function").put("arguments", arguments(tool));
            events.add(event(chunk(id, model, filterResults(false), args, null)));
            finish = "tool_calls";
        } else {
            for (String w : words) {
                events.add(event(chunk(id, model, filterResults(false), JSON.createObjectNode().put("content", w), null)));
            }
        }
        events.add(event(chunk(id, model, filterResults(filtered), JSON.createObjectNode(), finish)));
        if (usageChunk) {
            ObjectNode last = JSON.createObjectNode();
            last.putArray("choices");
            last.put("created", 1787300000);
            last.put("id", id);
            last.put("model", model);
            last.put("object", "chat.completion.chunk");
            last.put("system_fingerprint", "fp_ee1d74bde0");
            last.set("usage", usage);
            events.add(event(last));
        }
        events.add("data: [DONE]\n\n");
        return Script.sse(0, events.toArray(String[]::new));
    }

    private static ObjectNode chunk(String id, String model, ObjectNode filter, ObjectNode delta, String finish) {
        ObjectNode choice = JSON.createObjectNode();
        choice.set("content_filter_results", filter);
        choice.set("delta", delta);
        if (finish == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finish);
        }
        choice.put("index", 0);
        choice.putNull("logprobs");
        ObjectNode c = JSON.createObjectNode();
        c.putArray("choices").add(choice);
        c.put("created", 1787300000);
        c.put("id", id);
        c.put("model", model);
        c.put("object", "chat.completion.chunk");
        c.put("system_fingerprint", "fp_ee1d74bde0");
        c.putNull("usage");
        return c;
    }

    /** A call of the request's first tool, its required string properties filled with "Oslo". */
    private static ObjectNode toolCallNode(JsonNode tool, boolean whole) {
        ObjectNode call = JSON.createObjectNode();
        if (!whole) {
            call.put("index", 0);
        }
        call.put("id", "call_AzFake1");
        call.put("type", "function");
        ObjectNode fn = call.putObject("function");
        fn.put("name", tool.path("function").path("name").asText());
        fn.put("arguments", whole ? arguments(tool) : "");
        return call;
    }

    private static String arguments(JsonNode tool) {
        ObjectNode args = JSON.createObjectNode();
        for (JsonNode required : tool.path("function").path("parameters").path("required")) {
            args.put(required.asText(), "Oslo");
        }
        return args.toString();
    }

    /** The 400 Azure answers when the prompt itself is filtered. */
    private static Script contentFilterError() {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", "The response was filtered due to the prompt triggering Azure OpenAI's content "
                + "management policy. Please modify your prompt and retry. To learn more about our content filtering "
                + "policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766");
        error.putNull("type");
        error.put("param", "prompt");
        error.put("code", "content_filter");
        error.put("status", 400);
        ObjectNode inner = error.putObject("innererror");
        inner.put("code", "ResponsibleAIPolicyViolation");
        inner.set("content_filter_result", filterResults(true));
        return Script.json(400, root.toString());
    }

    private static ArrayNode promptFilterResults() {
        ArrayNode results = JSON.createArrayNode();
        ObjectNode r = results.addObject();
        r.put("prompt_index", 0);
        r.set("content_filter_results", filterResults(false));
        return results;
    }

    /** The four categories, all safe, or violence filtered at medium severity. */
    private static ObjectNode filterResults(boolean filtered) {
        ObjectNode results = JSON.createObjectNode();
        for (String category : CATEGORIES) {
            boolean hit = filtered && category.equals("violence");
            results.putObject(category).put("filtered", hit).put("severity", hit ? "medium" : "safe");
        }
        return results;
    }

    private static ObjectNode usage(int prompt, int completion, int cachedTokens, int reasoningTokens) {
        ObjectNode u = JSON.createObjectNode();
        u.put("completion_tokens", completion);
        ObjectNode cd = u.putObject("completion_tokens_details");
        cd.put("accepted_prediction_tokens", 0);
        cd.put("audio_tokens", 0);
        cd.put("reasoning_tokens", reasoningTokens);
        cd.put("rejected_prediction_tokens", 0);
        u.put("prompt_tokens", prompt);
        ObjectNode pd = u.putObject("prompt_tokens_details");
        pd.put("audio_tokens", 0);
        pd.put("cached_tokens", cachedTokens);
        u.put("total_tokens", prompt + completion);
        return u;
    }

    private static String promptText(JsonNode messages) {
        StringBuilder text = new StringBuilder();
        for (JsonNode m : messages) {
            JsonNode content = m.path("content");
            if (content.isTextual()) {
                text.append(content.asText()).append('\n');
            } else {
                for (JsonNode part : content) {
                    text.append(part.path("text").asText("")).append('\n');
                }
            }
        }
        return text.toString();
    }

    private static String lastRole(JsonNode body) {
        JsonNode messages = body.path("messages");
        return messages.size() == 0 ? "" : messages.get(messages.size() - 1).path("role").asText("");
    }

    // ------------------------------------------------------------------ embeddings

    private static Script embeddings(String deployment, JsonNode body) {
        JsonNode input = body.path("input");
        List<String> texts = new ArrayList<>();
        if (input.isTextual()) {
            texts.add(input.asText());
        } else {
            for (JsonNode i : input) {
                texts.add(i.toString());
            }
        }
        if (texts.isEmpty()) {
            return error(400, "BadRequest", "'input' is a required property");
        }
        int dimensions = body.path("dimensions").asInt(8);
        boolean base64 = "base64".equals(body.path("encoding_format").asText(null));
        ObjectNode answer = JSON.createObjectNode();
        answer.put("object", "list");
        ArrayNode data = answer.putArray("data");
        int tokens = 0;
        for (int i = 0; i < texts.size(); i++) {
            ObjectNode e = data.addObject();
            e.put("object", "embedding");
            e.put("index", i);
            float[] v = vector(texts.get(i), dimensions);
            if (base64) {
                ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
                for (float f : v) {
                    b.putFloat(f);
                }
                e.put("embedding", Base64.getEncoder().encodeToString(b.array()));
            } else {
                ArrayNode values = e.putArray("embedding");
                for (float f : v) {
                    values.add(f);
                }
            }
            tokens += Math.max(1, texts.get(i).length() / 4);
        }
        answer.put("model", MODELS.get(deployment));
        answer.putObject("usage").put("prompt_tokens", tokens).put("total_tokens", tokens);
        return Script.json(200, answer.toString());
    }

    /** A deterministic vector for {@code text}: the same text always gets the same values. */
    public static float[] vector(String text, int dimensions) {
        float[] v = new float[dimensions];
        int h = text.hashCode();
        for (int i = 0; i < dimensions; i++) {
            h = h * 31 + i;
            v[i] = (h % 1000) / 1000f;
        }
        return v;
    }

    // ------------------------------------------------------------------ helpers

    private static Script error(int status, String code, String message) {
        return Script.json(status, errorBody(code, message));
    }

    private static String errorBody(String code, String message) {
        ObjectNode root = JSON.createObjectNode();
        root.putObject("error").put("code", code).put("message", message);
        return root.toString();
    }

    private static String event(JsonNode data) {
        return "data: " + data + "\n\n";
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Map<String, String> query(String query) {
        Map<String, String> params = new LinkedHashMap<>();
        if (query.isEmpty()) {
            return params;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            params.put(decode(eq < 0 ? pair : pair.substring(0, eq)), eq < 0 ? "" : decode(pair.substring(eq + 1)));
        }
        return params;
    }

    private static String decode(String s) {
        return java.net.URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
