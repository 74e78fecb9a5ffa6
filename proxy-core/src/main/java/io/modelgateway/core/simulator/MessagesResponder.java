package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.ApiStyle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Answers {@code POST /v1/messages} like Anthropic: reads the request (contract 5.2–5.7, 5.11),
 * generates one {@link Turn} and writes the message (5.9) or the typed event stream (5.10).
 * Blocks come in the order thinking, text, tool_use; a tool turn carries no text.
 */
final class MessagesResponder {

    static final String DEFAULT_VERSION = "2023-06-01";
    /** The first API version that accepts {@code role: "system"} inside {@code messages}. */
    static final String SYSTEM_ROLE_VERSION = "2026-10-21";

    private static final byte[] PING = ascii("event: ping\ndata: {\"type\":\"ping\"}\n\n");
    private static final byte[] MESSAGE_STOP = ascii("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");


    private final ObjectMapper mapper;

    MessagesResponder(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    SimulatedResponse answer(JsonNode root, RequestPlan plan, String versionHeader) {
        RequestReader r = new RequestReader(ApiStyle.ANTHROPIC);
        String version = versionHeader == null ? DEFAULT_VERSION : versionHeader.trim();
        if (!isDate(version)) {
            throw SimRequestException.invalid("anthropic-version: '" + version + "' is not a valid version",
                    null, null);
        }
        boolean systemRoleAllowed = version.compareTo(SYSTEM_ROLE_VERSION) >= 0;

        String model = r.requireString(root, "model", "model");
        Integer maxTokensField = r.optInt(root, "max_tokens", "max_tokens", 1, Integer.MAX_VALUE);
        if (maxTokensField == null) {
            throw r.missing("max_tokens");
        }
        int maxTokens = maxTokensField;
        JsonNode messages = r.requireNonEmptyArray(root, "messages", "messages");
        long inputBytes = 0;
        boolean afterToolResult = false;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            String path = r.index("messages", i);
            if (!m.isObject()) {
                throw r.type(path, "an object");
            }
            String role = r.requireString(m, "role", path + ".role");
            if ("system".equals(role) && !systemRoleAllowed) {
                throw r.value(path + ".role", "'system' is accepted from anthropic-version " + SYSTEM_ROLE_VERSION
                        + "; use the top-level 'system' parameter");
            }
            if (!"user".equals(role) && !"assistant".equals(role) && !"system".equals(role)) {
                throw r.value(path + ".role", "Input should be 'user' or 'assistant'");
            }
            JsonNode content = RequestReader.get(m, "content");
            if (content == null) {
                throw r.missing(path + ".content");
            }
            if (!content.isTextual() && !content.isArray()) {
                throw r.type(path + ".content", "a string or an array of content blocks");
            }
            inputBytes += RequestReader.textBytes(content);
            afterToolResult = "user".equals(role) && hasToolResult(content);
        }
        JsonNode system = RequestReader.get(root, "system");
        if (system != null && !system.isTextual() && !system.isArray()) {
            throw r.type("system", "a string or an array of text blocks");
        }
        inputBytes += RequestReader.textBytes(system);

        boolean stream = r.optBool(root, "stream", "stream", false);
        List<String> stops = stopSequences(r, root);
        List<Turn.ToolDef> toolCalls = toolCalls(r, root, afterToolResult);

        boolean thinking = false;
        boolean thinkingShown = true;
        int budget = Integer.MAX_VALUE;
        JsonNode thinkingField = r.optObject(root, "thinking", "thinking");
        if (thinkingField != null) {
            String type = r.requireString(thinkingField, "type", "thinking.type");
            switch (type) {
                case "enabled" -> {
                    Integer b = r.optInt(thinkingField, "budget_tokens", "thinking.budget_tokens", 1024, Integer.MAX_VALUE);
                    if (b == null) {
                        throw r.missing("thinking.budget_tokens");
                    }
                    if (b >= maxTokens) {
                        throw r.value("max_tokens", "must be greater than thinking.budget_tokens");
                    }
                    thinking = true;
                    budget = b;
                }
                case "adaptive" -> thinking = true;
                case "disabled" -> thinking = false;
                default -> throw r.value("thinking.type", "Input should be 'enabled', 'adaptive' or 'disabled'");
            }
            thinkingShown = !"omitted".equals(thinkingField.path("display").asText());
        }

        long h = Prng.hash(Prng.hashStart(), system);
        h = Prng.hash(h, messages);
        long seed = Prng.mix(Prng.hash(h, RequestReader.get(root, "tools")));
        Turn turn = Turn.generate(new Turn.Spec(seed, plan.outputTokens(), maxTokens, stops, toolCalls, "toolu_",
                Turn.Format.TEXT, null, thinking, budget, thinkingShown), mapper);
        int inputTokens = RequestReader.tokensFor(inputBytes);

        String id = "msg_" + new Prng(ThreadLocalRandom.current().nextLong()).base62(24);
        Map<String, String> headers = SimErrors.idHeaders(ApiStyle.ANTHROPIC, SimErrors.requestId());
        if (stream) {
            return stream(id, model, turn, inputTokens, plan).build(plan, headers);
        }
        return plan.nonStream(ApiStyle.ANTHROPIC, headers, body(id, model, turn, inputTokens, plan));
    }

    /**
     * {@code POST /v1/messages/count_tokens}: {@code {"input_tokens": N}}, every input token the same body would
     * report in a messages answer (uncached, and the cache reads and writes asked for). No generation, no pacing.
     */
    SimulatedResponse countTokens(JsonNode root, RequestPlan plan) {
        RequestReader r = new RequestReader(ApiStyle.ANTHROPIC);
        r.requireString(root, "model", "model");
        JsonNode messages = r.requireNonEmptyArray(root, "messages", "messages");
        long inputBytes = 0;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            if (!m.isObject()) {
                throw r.type(r.index("messages", i), "an object");
            }
            inputBytes += RequestReader.textBytes(RequestReader.get(m, "content"));
        }
        inputBytes += RequestReader.textBytes(RequestReader.get(root, "system"));
        long tokens = RequestReader.tokensFor(inputBytes) + plan.cachedTokens() + plan.cacheWriteTokens();
        byte[] body = new JsonBytes(32).raw("{\"input_tokens\":").num(tokens).raw("}").toBytes();
        return SimulatedResponse.full(200, SimErrors.idHeaders(ApiStyle.ANTHROPIC, SimErrors.requestId()), 0, body);
    }

    private static boolean hasToolResult(JsonNode content) {
        if (content.isArray()) {
            for (JsonNode block : content) {
                if ("tool_result".equals(block.path("type").asText())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** YYYY-MM-DD, digits only; later dates sort later as strings. */
    private static boolean isDate(String v) {
        if (v.length() != 10 || v.charAt(4) != '-' || v.charAt(7) != '-') {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (i != 4 && i != 7 && (v.charAt(i) < '0' || v.charAt(i) > '9')) {
                return false;
            }
        }
        return true;
    }

    private static List<String> stopSequences(RequestReader r, JsonNode root) {
        JsonNode stops = r.optArray(root, "stop_sequences", "stop_sequences");
        if (stops == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(stops.size());
        for (int i = 0; i < stops.size(); i++) {
            JsonNode s = stops.get(i);
            if (!s.isTextual()) {
                throw r.type(r.index("stop_sequences", i), "a valid string");
            }
            if (s.textValue().isBlank()) {
                throw r.value(r.index("stop_sequences", i), "each stop sequence must contain non-whitespace");
            }
            out.add(s.textValue());
        }
        return out;
    }

    /**
     * The tools this turn calls ({@link ToolChoice}), from Anthropic's custom tools and {@code tool_choice} (contract
     * 5.6): {@code any} is required, {@code tool} the named one, {@code disable_parallel_tool_use} turns parallel
     * calls off; a tool result in the last user message is what makes auto call none.
     */
    private static List<Turn.ToolDef> toolCalls(RequestReader r, JsonNode root, boolean afterToolResult) {
        List<Turn.ToolDef> defs = ToolChoice.offered(r, root, (t, path) -> {
            String type = r.optString(t, "type", path + ".type");
            if (type != null && !"custom".equals(type)) {
                return null; // server tools (web_search_…): run by the provider, never called here
            }
            String name = r.requireString(t, "name", path + ".name");
            JsonNode schema = r.optObject(t, "input_schema", path + ".input_schema");
            if (schema == null) {
                throw r.missing(path + ".input_schema");
            }
            return new Turn.ToolDef(name, schema);
        });
        ToolChoice.Mode choice = ToolChoice.Mode.AUTO;
        List<Turn.ToolDef> candidates = defs;
        boolean parallel = true;
        JsonNode tc = r.optObject(root, "tool_choice", "tool_choice");
        if (tc != null) {
            String type = r.requireString(tc, "type", "tool_choice.type");
            choice = switch (type) {
                case "auto" -> ToolChoice.Mode.AUTO;
                case "any" -> ToolChoice.Mode.REQUIRED;
                case "tool" -> ToolChoice.Mode.NAMED;
                case "none" -> ToolChoice.Mode.NONE;
                default -> throw r.value("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'");
            };
            if (choice == ToolChoice.Mode.NAMED) {
                String name = r.requireString(tc, "name", "tool_choice.name");
                candidates = defs.stream().filter(d -> d.name().equals(name)).toList();
                if (candidates.isEmpty()) {
                    throw r.value("tool_choice.name", "no tool named '" + name + "' in tools");
                }
            }
            parallel = !r.optBool(tc, "disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use", false);
        }
        return ToolChoice.calls(candidates, choice, parallel, afterToolResult);
    }

    static String stopReason(Turn.Finish f) {
        return switch (f) {
            case END -> "end_turn";
            case LENGTH -> "max_tokens";
            case STOP_SEQUENCE -> "stop_sequence";
            case TOOL_USE -> "tool_use";
        };
    }

    private static byte[] body(String id, String model, Turn t, int inputTokens, RequestPlan plan) {
        JsonBytes b = new JsonBytes(512);
        b.raw("{\"id\":").str(id).raw(",\"type\":\"message\",\"role\":\"assistant\",\"model\":").str(model)
                .raw(",\"content\":[");
        boolean first = true;
        if (t.hasThinking()) {
            b.raw("{\"type\":\"thinking\",\"thinking\":").str(t.thinking).raw(",\"signature\":").str(t.signature).raw("}");
            first = false;
        }
        if (!t.text().isEmpty()) {
            b.raw(first ? "" : ",").raw("{\"type\":\"text\",\"text\":").str(t.text()).raw("}");
            first = false;
        }
        for (Turn.ToolCall c : t.toolCalls) {
            b.raw(first ? "" : ",").raw("{\"type\":\"tool_use\",\"id\":").str(c.id()).raw(",\"name\":").str(c.name())
                    .raw(",\"input\":").raw(c.arguments().getBytes(StandardCharsets.UTF_8)).raw("}");
            first = false;
        }
        b.raw("],\"stop_reason\":").str(stopReason(t.finish)).raw(",\"stop_sequence\":").str(t.stopSequence)
                .raw(",\"usage\":{\"input_tokens\":").num(inputTokens)
                .raw(",\"cache_creation_input_tokens\":").num(plan.cacheWriteTokens())
                .raw(",\"cache_read_input_tokens\":").num(plan.cachedTokens())
                .raw(",\"output_tokens\":").num(t.outputTokens);
        thinkingTokens(b, t, plan);
        return b.raw("}}").toBytes();
    }

    /**
     * {@code output_tokens_details.thinking_tokens} when reasoning tokens were asked for ({@link RequestPlan}):
     * Anthropic's own breakdown of {@code output_tokens} (contract 8.8).
     */
    private static void thinkingTokens(JsonBytes b, Turn t, RequestPlan plan) {
        if (plan.reasoningTokens() >= 0) {
            b.raw(",\"output_tokens_details\":{\"thinking_tokens\":")
                    .num(plan.reasoningOf(t.outputTokens, 0)).raw("}");
        }
    }

    private static StreamDraft stream(String id, String model, Turn t, int inputTokens, RequestPlan plan) {
        StreamDraft d = new StreamDraft(ApiStyle.ANTHROPIC);
        JsonBytes b = new JsonBytes(512);
        d.add(b.raw("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":").str(id)
                .raw(",\"type\":\"message\",\"role\":\"assistant\",\"model\":").str(model)
                .raw(",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":")
                .num(inputTokens).raw(",\"cache_creation_input_tokens\":").num(plan.cacheWriteTokens())
                .raw(",\"cache_read_input_tokens\":").num(plan.cachedTokens()).raw(",\"output_tokens\":")
                .num(Math.min(1, t.outputTokens)).raw("}}}\n\n").toBytes(), false);
        d.add(PING, false);
        int index = 0;
        if (t.hasThinking()) {
            d.add(blockStart(b, index, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}"), false);
            SimEvents.TokenFrame frame = deltaFrame(b, index, "thinking_delta", "thinking");
            for (String piece : t.thinkingPieces) {
                d.addToken(frame, piece);
            }
            d.add(delta(b, index, "signature_delta", "signature", t.signature), false);
            d.add(blockStop(b, index++), false);
        }
        if (!t.textPieces.isEmpty()) {
            d.add(blockStart(b, index, "{\"type\":\"text\",\"text\":\"\"}"), false);
            SimEvents.TokenFrame frame = deltaFrame(b, index, "text_delta", "text");
            for (String piece : t.textPieces) {
                d.addToken(frame, piece);
            }
            d.add(blockStop(b, index++), false);
        }
        for (Turn.ToolCall c : t.toolCalls) {
            b.reset().raw("{\"type\":\"tool_use\",\"id\":").str(c.id()).raw(",\"name\":").str(c.name()).raw(",\"input\":{}}");
            String block = new String(b.toBytes(), StandardCharsets.UTF_8);
            d.add(blockStart(b, index, block), false);
            d.add(delta(b, index, "input_json_delta", "partial_json", ""), false);
            for (String fragment : c.fragments()) {
                d.add(delta(b, index, "input_json_delta", "partial_json", fragment), true);
            }
            d.add(blockStop(b, index++), false);
        }
        b.reset().raw("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":")
                .str(stopReason(t.finish)).raw(",\"stop_sequence\":").str(t.stopSequence)
                .raw("},\"usage\":{\"output_tokens\":").num(t.outputTokens);
        thinkingTokens(b, t, plan);
        d.add(b.raw("}}\n\n").toBytes(), false);
        d.add(MESSAGE_STOP, false);
        return d;
    }

    private static byte[] blockStart(JsonBytes b, int index, String blockJson) {
        return b.reset().raw("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":").num(index)
                .raw(",\"content_block\":").raw(blockJson.getBytes(StandardCharsets.UTF_8)).raw("}\n\n").toBytes();
    }

    private static byte[] delta(JsonBytes b, int index, String type, String field, String value) {
        return deltaPrefix(b, index, type, field).raw(Vocabulary.quoted(value)).raw(DELTA_END).toBytes();
    }

    /** What a token's {@code content_block_delta} of block {@code index} goes between: one for all of the block's. */
    private static SimEvents.TokenFrame deltaFrame(JsonBytes b, int index, String type, String field) {
        return new SimEvents.TokenFrame(new byte[][] {deltaPrefix(b, index, type, field).toBytes()},
                new byte[][] {DELTA_END});
    }

    private static JsonBytes deltaPrefix(JsonBytes b, int index, String type, String field) {
        return b.reset().raw("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":").num(index)
                .raw(",\"delta\":{\"type\":\"").raw(type).raw("\",\"").raw(field).raw("\":");
    }

    private static final byte[] DELTA_END = "}}\n\n".getBytes(StandardCharsets.US_ASCII);

    private static byte[] blockStop(JsonBytes b, int index) {
        return b.reset().raw("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":").num(index)
                .raw("}\n\n").toBytes();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
