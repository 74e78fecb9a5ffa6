package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.ApiStyle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Answers {@code POST /v1/chat/completions} like OpenAI: reads the request (contract 3.1–3.8),
 * generates one {@link Turn} per choice and writes the non-stream body (3.9) or the chunk stream
 * (3.11). Stream chunks are assembled from a prefix and suffix computed once per response around
 * pre-quoted tokens.
 */
final class ChatResponder {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    private static final int MAX_CHOICES = 128;


    private final ObjectMapper mapper;

    ChatResponder(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    SimulatedResponse answer(JsonNode root, RequestPlan plan) {
        RequestReader r = new RequestReader(ApiStyle.OPENAI);
        String model = r.requireString(root, "model", "model");
        JsonNode messages = r.requireNonEmptyArray(root, "messages", "messages");
        long inputBytes = 0;
        String lastRole = null;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            String path = r.index("messages", i);
            if (!m.isObject()) {
                throw r.type(path, "an object");
            }
            String role = r.requireString(m, "role", path + ".role");
            if (!ROLES.contains(role)) {
                throw r.value(path + ".role", "'" + role + "' is not one of system, developer, user, assistant, tool");
            }
            inputBytes += RequestReader.textBytes(m.get("content"));
            JsonNode calls = RequestReader.get(m, "tool_calls");
            if (calls != null && calls.isArray()) {
                for (JsonNode call : calls) {
                    inputBytes += RequestReader.stringBytes(call.path("function").get("name"))
                            + RequestReader.stringBytes(call.path("function").get("arguments"));
                }
            }
            lastRole = role;
        }

        boolean stream = r.optBool(root, "stream", "stream", false);
        JsonNode streamOptions = r.optObject(root, "stream_options", "stream_options");
        if (streamOptions != null && !stream) {
            throw SimRequestException.invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                    "stream_options", "invalid_value");
        }
        boolean includeUsage = streamOptions != null
                && r.optBool(streamOptions, "include_usage", "stream_options.include_usage", false);
        Integer maxTokens = r.optInt(root, "max_completion_tokens", "max_completion_tokens", 1, Integer.MAX_VALUE);
        if (maxTokens == null) {
            maxTokens = r.optInt(root, "max_tokens", "max_tokens", 1, Integer.MAX_VALUE);
        }
        Integer nField = r.optInt(root, "n", "n", 1, MAX_CHOICES);
        int n = nField == null ? 1 : nField;
        List<String> stops = stops(r, root);
        List<Turn.ToolDef> toolCalls = toolCalls(r, root, "tool".equals(lastRole));

        Turn.Format format = Turn.Format.TEXT;
        JsonNode schema = null;
        JsonNode responseFormat = r.optObject(root, "response_format", "response_format");
        if (responseFormat != null) {
            String type = r.requireString(responseFormat, "type", "response_format.type");
            switch (type) {
                case "text" -> format = Turn.Format.TEXT;
                case "json_object" -> format = Turn.Format.JSON_OBJECT;
                case "json_schema" -> {
                    JsonNode js = r.optObject(responseFormat, "json_schema", "response_format.json_schema");
                    if (js == null) {
                        throw r.missing("response_format.json_schema");
                    }
                    schema = r.optObject(js, "schema", "response_format.json_schema.schema");
                    format = schema == null ? Turn.Format.JSON_OBJECT : Turn.Format.JSON_SCHEMA;
                }
                default -> throw r.value("response_format.type", "'" + type + "' is not one of text, json_object, json_schema");
            }
        }

        // Reasoning (contract 3.7): the OpenRouter object wins over reasoning_effort.
        boolean reasoning;
        boolean reasoningShown = true;
        int reasoningBudget = Integer.MAX_VALUE;
        JsonNode reasoningObject = r.optObject(root, "reasoning", "reasoning");
        if (reasoningObject != null) {
            String effort = r.optString(reasoningObject, "effort", "reasoning.effort");
            reasoning = r.optBool(reasoningObject, "enabled", "reasoning.enabled", true) && !effortOff(effort);
            reasoningShown = !r.optBool(reasoningObject, "exclude", "reasoning.exclude", false);
            Integer budget = r.optInt(reasoningObject, "max_tokens", "reasoning.max_tokens", 1, Integer.MAX_VALUE);
            if (budget != null) {
                reasoningBudget = budget;
            }
        } else {
            String effort = r.optString(root, "reasoning_effort", "reasoning_effort");
            reasoning = effort != null && !effortOff(effort);
        }

        long seed = Prng.mix(Prng.hash(Prng.hash(Prng.hashStart(), messages), RequestReader.get(root, "tools")));
        List<Turn> turns = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            turns.add(Turn.generate(new Turn.Spec(seed + i, plan.outputTokens(),
                    maxTokens == null ? Integer.MAX_VALUE : maxTokens, stops, toolCalls, "call_", format, schema,
                    reasoning, reasoningBudget, reasoningShown), mapper));
        }
        int promptTokens = RequestReader.tokensFor(inputBytes);

        String id = "chatcmpl-" + new Prng(ThreadLocalRandom.current().nextLong()).base62(24);
        long created = System.currentTimeMillis() / 1000;
        Map<String, String> headers = SimErrors.idHeaders(ApiStyle.OPENAI, SimErrors.requestId());
        if (stream) {
            return stream(id, created, model, turns, promptTokens, includeUsage, plan).build(plan, headers);
        }
        return plan.nonStream(ApiStyle.OPENAI, headers, body(id, created, model, turns, promptTokens, plan));
    }

    private static boolean effortOff(String effort) {
        return "none".equals(effort) || "minimal".equals(effort);
    }

    private static List<String> stops(RequestReader r, JsonNode root) {
        JsonNode stop = RequestReader.get(root, "stop");
        if (stop == null) {
            return List.of();
        }
        if (stop.isTextual()) {
            return List.of(stop.textValue());
        }
        if (!stop.isArray()) {
            throw r.type("stop", "a string or an array of strings");
        }
        if (stop.size() > 4) {
            throw r.value("stop", "at most 4 stop sequences are allowed");
        }
        List<String> out = new ArrayList<>(stop.size());
        for (int i = 0; i < stop.size(); i++) {
            if (!stop.get(i).isTextual()) {
                throw r.type(r.index("stop", i), "a string");
            }
            out.add(stop.get(i).textValue());
        }
        return out;
    }

    /**
     * The tools this turn calls ({@link ToolChoice}), from chat's function tools, {@code tool_choice} (a mode, a
     * named function, or {@code allowed_tools}) and {@code parallel_tool_calls} (contract 3.5).
     */
    private static List<Turn.ToolDef> toolCalls(RequestReader r, JsonNode root, boolean afterToolResult) {
        List<Turn.ToolDef> defs = ToolChoice.offered(r, root, (t, path) -> {
            String type = r.optString(t, "type", path + ".type");
            if (type != null && !"function".equals(type)) {
                return null; // custom tools: accepted, never called by the simulator
            }
            JsonNode fn = r.optObject(t, "function", path + ".function");
            if (fn == null) {
                throw r.missing(path + ".function");
            }
            String name = r.requireString(fn, "name", path + ".function.name");
            return new Turn.ToolDef(name, r.optObject(fn, "parameters", path + ".function.parameters"));
        });
        ToolChoice.Mode choice = ToolChoice.Mode.AUTO;
        List<Turn.ToolDef> candidates = defs;
        JsonNode tc = RequestReader.get(root, "tool_choice");
        if (tc != null && tc.isTextual()) {
            choice = ToolChoice.of(r, tc.textValue());
        } else if (tc != null && tc.isObject()) {
            String type = r.requireString(tc, "type", "tool_choice.type");
            if ("function".equals(type)) {
                String name = tc.path("function").path("name").asText(null);
                if (name == null) {
                    throw r.missing("tool_choice.function.name");
                }
                candidates = List.of(find(r, defs, name));
                choice = ToolChoice.Mode.NAMED;
            } else if ("allowed_tools".equals(type)) {
                JsonNode allowed = tc.path("allowed_tools");
                choice = "required".equals(allowed.path("mode").asText("auto")) ? ToolChoice.Mode.REQUIRED
                        : ToolChoice.Mode.AUTO;
                candidates = new ArrayList<>();
                for (JsonNode ref : allowed.path("tools")) {
                    String name = ref.path("function").path("name").asText(ref.path("name").asText(null));
                    if (name != null) {
                        candidates.add(find(r, defs, name));
                    }
                }
            } else {
                throw r.value("tool_choice.type", "'" + type + "' is not one of function, allowed_tools");
            }
        } else if (tc != null) {
            throw r.type("tool_choice", "a string or an object");
        }
        boolean parallel = r.optBool(root, "parallel_tool_calls", "parallel_tool_calls", true);
        return ToolChoice.calls(candidates, choice, parallel, afterToolResult);
    }

    private static Turn.ToolDef find(RequestReader r, List<Turn.ToolDef> defs, String name) {
        for (Turn.ToolDef d : defs) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw SimRequestException.invalid("Invalid value for 'tool_choice': no function named '" + name
                + "' in 'tools'.", "tool_choice", "invalid_value");
    }

    static String finishReason(Turn.Finish f) {
        return switch (f) {
            case END, STOP_SEQUENCE -> "stop";
            case LENGTH -> "length";
            case TOOL_USE -> "tool_calls";
        };
    }

    private static byte[] body(String id, long created, String model, List<Turn> turns, int promptTokens,
            RequestPlan plan) {
        JsonBytes b = new JsonBytes(512);
        b.raw("{\"id\":").str(id).raw(",\"object\":\"chat.completion\",\"created\":").num(created)
                .raw(",\"model\":").str(model).raw(",\"system_fingerprint\":null,\"choices\":[");
        for (int i = 0; i < turns.size(); i++) {
            Turn t = turns.get(i);
            if (i > 0) {
                b.raw(",");
            }
            b.raw("{\"index\":").num(i).raw(",\"message\":{\"role\":\"assistant\",\"content\":");
            if (t.toolCalls.isEmpty()) {
                b.str(t.text());
            } else {
                b.raw("null");
            }
            b.raw(",\"refusal\":null");
            if (t.hasThinking() && !t.thinking.isEmpty()) {
                b.raw(",\"reasoning\":").str(t.thinking);
            }
            if (!t.toolCalls.isEmpty()) {
                b.raw(",\"tool_calls\":[");
                for (int k = 0; k < t.toolCalls.size(); k++) {
                    Turn.ToolCall c = t.toolCalls.get(k);
                    b.raw(k > 0 ? ",{\"id\":" : "{\"id\":").str(c.id()).raw(",\"type\":\"function\",\"function\":{\"name\":")
                            .str(c.name()).raw(",\"arguments\":").str(c.arguments()).raw("}}");
                }
                b.raw("]");
            }
            b.raw("},\"logprobs\":null,\"finish_reason\":").str(finishReason(t.finish)).raw("}");
        }
        b.raw("],\"usage\":");
        usage(b, turns, promptTokens, plan);
        return b.raw("}").toBytes();
    }

    /**
     * {@code prompt_tokens} includes the cache reads and writes asked for ({@link RequestPlan}), with the reads in
     * {@code prompt_tokens_details.cached_tokens} and the writes in {@code cache_write_tokens} (contract 8.8).
     */
    private static void usage(JsonBytes b, List<Turn> turns, int promptTokens, RequestPlan plan) {
        long completion = 0;
        long thinking = 0;
        for (Turn t : turns) {
            completion += t.outputTokens;
            thinking += t.thinkingTokens;
        }
        long prompt = promptTokens + plan.cachedTokens() + plan.cacheWriteTokens();
        b.raw("{\"prompt_tokens\":").num(prompt).raw(",\"completion_tokens\":").num(completion)
                .raw(",\"total_tokens\":").num(prompt + completion)
                .raw(",\"prompt_tokens_details\":{\"cached_tokens\":").num(plan.cachedTokens());
        if (plan.cacheWriteTokens() > 0) {
            b.raw(",\"cache_write_tokens\":").num(plan.cacheWriteTokens());
        }
        b.raw("},\"completion_tokens_details\":{\"reasoning_tokens\":").num(plan.reasoningOf(completion, thinking))
                .raw("}}");
    }

    private static StreamDraft stream(String id, long created, String model, List<Turn> turns, int promptTokens,
                                      boolean includeUsage, RequestPlan plan) {
        JsonBytes b = new JsonBytes(512); // the stream's one scratch: each event is copied out of it
        byte[] head = b.raw("data: {\"id\":").str(id).raw(",\"object\":\"chat.completion.chunk\",\"created\":")
                .num(created).raw(",\"model\":").str(model).raw(",\"system_fingerprint\":null,\"choices\":[").toBytes();
        ChunkWriter w = new ChunkWriter(b, head, includeUsage ? TAIL_WITH_USAGE : TAIL);

        List<StreamDraft> perChoice = new ArrayList<>(turns.size());
        for (int i = 0; i < turns.size(); i++) {
            Turn t = turns.get(i);
            int tools = 0;
            for (Turn.ToolCall c : t.toolCalls) {
                tools += 1 + c.fragments().size();
            }
            // the role and finish deltas, the tokens, the tool calls, and room for the usage chunk and [DONE]
            StreamDraft events = new StreamDraft(ApiStyle.OPENAI,
                    4 + (t.hasThinking() ? t.thinkingPieces.size() : 0) + t.textPieces.size() + tools);
            events.add(w.delta(i, "{\"role\":\"assistant\",\"content\":\"\"}", null), false);
            if (t.hasThinking()) {
                SimEvents.TokenFrame frame = w.frame(i, "reasoning");
                for (String piece : t.thinkingPieces) {
                    events.addToken(frame, piece);
                }
            }
            SimEvents.TokenFrame text = w.frame(i, "content");
            for (String piece : t.textPieces) {
                events.addToken(text, piece);
            }
            for (int k = 0; k < t.toolCalls.size(); k++) {
                Turn.ToolCall c = t.toolCalls.get(k);
                events.add(w.toolCallStart(i, k, c), true);
                for (String fragment : c.fragments()) {
                    events.add(w.toolCallFragment(i, k, fragment), true);
                }
            }
            events.add(w.delta(i, "{}", finishReason(t.finish)), false);
            perChoice.add(events);
        }

        // With n > 1 the choices interleave round by round, as OpenAI streams them; one choice is the stream.
        StreamDraft draft = perChoice.get(0);
        if (perChoice.size() > 1) {
            draft = new StreamDraft(ApiStyle.OPENAI);
            draft.interleave(perChoice);
        }
        if (includeUsage) {
            usage(b.reset().raw("],\"usage\":"), turns, promptTokens, plan);
            draft.add(new byte[][] {head, b.raw("}\n\n").toBytes()}, false);
        }
        draft.add(DONE, false);
        return draft;
    }

    /** The last event of every chat stream. */
    private static final byte[] DONE = ascii("data: [DONE]\n\n");
    /** The end of every chunk event, with and without the {@code "usage":null} a stream asking for usage carries. */
    private static final byte[] TAIL = ascii("}\n\n");
    private static final byte[] TAIL_WITH_USAGE = ascii(",\"usage\":null}\n\n");
    /** What follows a token in its chunk. */
    private static final byte[] PIECE_CLOSE = ascii("},\"logprobs\":null,\"finish_reason\":null}]");
    /** What comes before a token, {@code {"index":i,"delta":{"field":}, for the first choices of both fields. */
    private static final int SHARED_CHOICES = 8;
    private static final byte[][] CONTENT_OPEN = pieceOpens("content");
    private static final byte[][] REASONING_OPEN = pieceOpens("reasoning");

    private static byte[][] pieceOpens(String field) {
        byte[][] opens = new byte[SHARED_CHOICES][];
        for (int i = 0; i < SHARED_CHOICES; i++) {
            opens[i] = pieceOpen(i, field);
        }
        return opens;
    }

    private static byte[] pieceOpen(int choice, String field) {
        return ascii("{\"index\":" + choice + ",\"delta\":{\"" + field + "\":");
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Builds chunk events from the per-response prefix ({@code data: {"id":…,"choices":[}) and suffix. A token's
     * event is made of shared parts (the prefix, the JSON around the token, the token's quoted bytes from the
     * vocabulary, the suffix): the stream keeps the token and one {@link SimEvents.TokenFrame frame} of the rest,
     * and its event is put together when due ({@link SimEvents}).
     */
    private static final class ChunkWriter {
        private final byte[] head;
        private final byte[] tail;
        private final JsonBytes b;

        ChunkWriter(JsonBytes scratch, byte[] head, byte[] tail) {
            this.b = scratch;
            this.head = head;
            this.tail = tail;
        }

        /** A delta event, its per-stream prefix shared (the rest is the event's own). */
        byte[][] delta(int choice, String deltaJson, String finishReason) {
            b.reset().raw("{\"index\":").num(choice).raw(",\"delta\":").raw(deltaJson)
                    .raw(",\"logprobs\":null,\"finish_reason\":").str(finishReason);
            return new byte[][] {head, b.raw("}]").raw(tail).toBytes()};
        }

        /** What a token of {@code field} of choice {@code choice} goes between, for every such token of the stream. */
        SimEvents.TokenFrame frame(int choice, String field) {
            byte[][] opens = field.equals("content") ? CONTENT_OPEN : field.equals("reasoning") ? REASONING_OPEN : null;
            byte[] open = opens != null && choice < SHARED_CHOICES ? opens[choice] : pieceOpen(choice, field);
            return new SimEvents.TokenFrame(new byte[][] {head, open}, new byte[][] {PIECE_CLOSE, tail});
        }

        byte[] toolCallStart(int choice, int index, Turn.ToolCall c) {
            b.reset().raw(head).raw("{\"index\":").num(choice).raw(",\"delta\":{\"tool_calls\":[{\"index\":").num(index)
                    .raw(",\"id\":").str(c.id()).raw(",\"type\":\"function\",\"function\":{\"name\":").str(c.name())
                    .raw(",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]");
            return b.raw(tail).toBytes();
        }

        byte[] toolCallFragment(int choice, int index, String fragment) {
            b.reset().raw(head).raw("{\"index\":").num(choice).raw(",\"delta\":{\"tool_calls\":[{\"index\":").num(index)
                    .raw(",\"function\":{\"arguments\":").str(fragment).raw("}}]},\"logprobs\":null,\"finish_reason\":null}]");
            return b.raw(tail).toBytes();
        }
    }
}
