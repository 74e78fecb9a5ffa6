package io.modelgateway.core.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.ApiStyle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Answers {@code POST /v1/responses} like OpenAI's Responses API (contract 12.1), statelessly: reads {@code input}
 * (a string or items: messages, {@code function_call}, {@code function_call_output}, {@code reasoning}),
 * {@code instructions}, function {@code tools}, {@code tool_choice}, {@code parallel_tool_calls},
 * {@code max_output_tokens}, {@code reasoning.effort} and {@code text.format}; generates one {@link Turn} and writes
 * the {@code response} object or the typed event stream, every event numbered by {@code sequence_number}. Usage:
 * {@code input_tokens} counts the cache reads asked for ({@code x-sim-cached-tokens}) in
 * {@code input_tokens_details.cached_tokens}, reasoning is {@code output_tokens_details.reasoning_tokens}. A request
 * that continues a stored response ({@code previous_response_id}) is a 400: the simulator keeps nothing.
 */
final class ResponsesResponder {

    private final ObjectMapper mapper;

    ResponsesResponder(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    SimulatedResponse answer(JsonNode root, RequestPlan plan) {
        RequestReader r = new RequestReader(ApiStyle.OPENAI);
        String model = r.requireString(root, "model", "model");
        if (RequestReader.get(root, "previous_response_id") != null) {
            throw SimRequestException.invalid("Previous response not found: the simulator stores no responses.",
                    "previous_response_id", "previous_response_not_found");
        }
        Input input = input(r, root);
        String instructions = r.optString(root, "instructions", "instructions");
        Integer maxTokens = r.optInt(root, "max_output_tokens", "max_output_tokens", 16, Integer.MAX_VALUE);
        boolean stream = r.optBool(root, "stream", "stream", false);
        List<Turn.ToolDef> toolCalls = toolCalls(r, root, input.afterToolResult);

        Turn.Format format = Turn.Format.TEXT;
        JsonNode schema = null;
        JsonNode text = r.optObject(root, "text", "text");
        JsonNode formatNode = text == null ? null : r.optObject(text, "format", "text.format");
        if (formatNode != null) {
            String type = r.requireString(formatNode, "type", "text.format.type");
            switch (type) {
                case "text" -> format = Turn.Format.TEXT;
                case "json_object" -> format = Turn.Format.JSON_OBJECT;
                case "json_schema" -> {
                    r.requireString(formatNode, "name", "text.format.name");
                    schema = r.optObject(formatNode, "schema", "text.format.schema");
                    if (schema == null) {
                        throw r.missing("text.format.schema");
                    }
                    format = Turn.Format.JSON_SCHEMA;
                }
                default -> throw r.value("text.format.type", "'" + type + "' is not one of text, json_object, json_schema");
            }
        }
        JsonNode reasoningNode = r.optObject(root, "reasoning", "reasoning");
        String effort = reasoningNode == null ? null : r.optString(reasoningNode, "effort", "reasoning.effort");
        boolean reasoning = effort != null && !"none".equals(effort) && !"minimal".equals(effort);

        long seed = Prng.mix(Prng.hash(Prng.hash(Prng.hashStart(), RequestReader.get(root, "input")),
                RequestReader.get(root, "tools")));
        Turn turn = Turn.generate(new Turn.Spec(seed, plan.outputTokens(),
                maxTokens == null ? Integer.MAX_VALUE : maxTokens, List.of(), toolCalls, "call_", format, schema,
                reasoning, Integer.MAX_VALUE, true), mapper);
        long inputBytes = input.bytes + (instructions == null ? 0 : Vocabulary.utf8Length(instructions));
        int inputTokens = RequestReader.tokensFor(inputBytes);

        Prng ids = new Prng(ThreadLocalRandom.current().nextLong());
        Answer a = new Answer("resp_" + ids.base62(24), System.currentTimeMillis() / 1000, model, turn, inputTokens,
                plan, ids, instructions, maxTokens);
        Map<String, String> headers = SimErrors.idHeaders(ApiStyle.OPENAI, SimErrors.requestId());
        if (stream) {
            return a.stream().build(plan, headers);
        }
        return plan.nonStream(ApiStyle.OPENAI, headers, a.response(a.finalStatus(), true).toBytes());
    }

    /**
     * {@code POST /v1/responses/input_tokens}: {@code {"object":"response.input_tokens","input_tokens":N}}, the input
     * count the same body would report in a response (cache reads included). No generation, no pacing.
     */
    SimulatedResponse inputTokens(JsonNode root, RequestPlan plan) {
        RequestReader r = new RequestReader(ApiStyle.OPENAI);
        Input input = input(r, root);
        String instructions = r.optString(root, "instructions", "instructions");
        long tokens = RequestReader.tokensFor(input.bytes + (instructions == null ? 0
                : Vocabulary.utf8Length(instructions))) + plan.cachedTokens();
        byte[] body = new JsonBytes(64).raw("{\"object\":\"response.input_tokens\",\"input_tokens\":").num(tokens)
                .raw("}").toBytes();
        return SimulatedResponse.full(200, SimErrors.idHeaders(ApiStyle.OPENAI, SimErrors.requestId()), 0, body);
    }

    private record Input(long bytes, boolean afterToolResult) {
    }

    /** The input's text size, and whether it ends with a tool's output (then {@code auto} calls no tool). */
    private static Input input(RequestReader r, JsonNode root) {
        JsonNode input = RequestReader.get(root, "input");
        if (input == null) {
            throw r.missing("input");
        }
        if (input.isTextual()) {
            return new Input(Vocabulary.utf8Length(input.textValue()), false);
        }
        if (!input.isArray()) {
            throw r.type("input", "a string or an array of input items");
        }
        long bytes = 0;
        boolean afterToolResult = false;
        for (int i = 0; i < input.size(); i++) {
            JsonNode item = input.get(i);
            String path = r.index("input", i);
            if (!item.isObject()) {
                throw r.type(path, "an object");
            }
            String type = r.optString(item, "type", path + ".type");
            if (type == null || type.equals("message")) {
                String role = r.requireString(item, "role", path + ".role");
                if (!role.equals("user") && !role.equals("assistant") && !role.equals("system")
                        && !role.equals("developer")) {
                    throw r.value(path + ".role", "'" + role + "' is not one of user, assistant, system, developer");
                }
                JsonNode content = RequestReader.get(item, "content");
                if (content == null) {
                    throw r.missing(path + ".content");
                }
                bytes += RequestReader.textBytes(content);
                afterToolResult = false;
            } else if (type.equals("function_call")) {
                r.requireString(item, "call_id", path + ".call_id");
                bytes += RequestReader.stringBytes(item.get("name")) + RequestReader.stringBytes(item.get("arguments"));
                afterToolResult = false;
            } else if (type.equals("function_call_output")) {
                r.requireString(item, "call_id", path + ".call_id");
                JsonNode output = RequestReader.get(item, "output");
                bytes += output != null && output.isTextual() ? RequestReader.stringBytes(output)
                        : RequestReader.textBytes(output);
                afterToolResult = true;
            } else if (type.equals("reasoning")) {
                bytes += RequestReader.textBytes(RequestReader.get(item, "summary"));
            } else {
                throw r.value(path + ".type", "'" + type + "' is not an input item the simulator knows");
            }
        }
        return new Input(bytes, afterToolResult);
    }

    /** As chat (contract 3.5) with the Responses API's flat function tools and {@code tool_choice}. */
    private static List<Turn.ToolDef> toolCalls(RequestReader r, JsonNode root, boolean afterToolResult) {
        List<Turn.ToolDef> defs = ToolChoice.offered(r, root, (t, path) -> {
            if (!"function".equals(r.requireString(t, "type", path + ".type"))) {
                return null; // hosted tools: accepted, never called by the simulator
            }
            String name = r.requireString(t, "name", path + ".name");
            return new Turn.ToolDef(name, r.optObject(t, "parameters", path + ".parameters"));
        });
        ToolChoice.Mode choice = ToolChoice.Mode.AUTO;
        List<Turn.ToolDef> candidates = defs;
        JsonNode tc = RequestReader.get(root, "tool_choice");
        if (tc != null && tc.isTextual()) {
            choice = ToolChoice.of(r, tc.textValue());
        } else if (tc != null && tc.isObject()) {
            String type = r.requireString(tc, "type", "tool_choice.type");
            if (!"function".equals(type)) {
                throw r.value("tool_choice.type", "'" + type + "' is not function");
            }
            String name = r.requireString(tc, "name", "tool_choice.name");
            Turn.ToolDef found = null;
            for (Turn.ToolDef d : defs) {
                if (d.name().equals(name)) {
                    found = d;
                }
            }
            if (found == null) {
                throw SimRequestException.invalid("Invalid value for 'tool_choice': no function named '" + name
                        + "' in 'tools'.", "tool_choice", "invalid_value");
            }
            candidates = List.of(found);
            choice = ToolChoice.Mode.NAMED;
        } else if (tc != null) {
            throw r.type("tool_choice", "a string or an object");
        }
        boolean parallel = r.optBool(root, "parallel_tool_calls", "parallel_tool_calls", true);
        return ToolChoice.calls(candidates, choice, parallel, afterToolResult);
    }

    /** One answer: its output items, written whole (the response, the done events) or as events. */
    private static final class Answer {
        private final String id;
        private final long createdAt;
        private final String model;
        private final Turn turn;
        private final int inputTokens;
        private final RequestPlan plan;
        private final String instructions;
        private final Integer maxTokens;
        private final String reasoningId;
        private final String messageId;
        private final List<String> callItemIds = new ArrayList<>();
        private int sequence;

        Answer(String id, long createdAt, String model, Turn turn, int inputTokens, RequestPlan plan, Prng ids,
                String instructions, Integer maxTokens) {
            this.id = id;
            this.createdAt = createdAt;
            this.model = model;
            this.turn = turn;
            this.inputTokens = inputTokens;
            this.plan = plan;
            this.instructions = instructions;
            this.maxTokens = maxTokens;
            this.reasoningId = "rs_" + ids.base62(24);
            this.messageId = "msg_" + ids.base62(24);
            for (int k = 0; k < turn.toolCalls.size(); k++) {
                callItemIds.add("fc_" + ids.base62(24));
            }
        }

        boolean hasReasoning() {
            return turn.hasThinking() && !turn.thinking.isEmpty();
        }

        boolean hasMessage() {
            return turn.toolCalls.isEmpty();
        }

        String finalStatus() {
            return turn.finish == Turn.Finish.LENGTH ? "incomplete" : "completed";
        }

        String messageStatus() {
            return turn.finish == Turn.Finish.LENGTH ? "incomplete" : "completed";
        }

        /** The {@code response} object; {@code whole}: with its output and usage (else as it starts). */
        JsonBytes response(String status, boolean whole) {
            JsonBytes b = new JsonBytes(1024);
            b.raw("{\"id\":").str(id).raw(",\"object\":\"response\",\"created_at\":").num(createdAt)
                    .raw(",\"status\":").str(status).raw(",\"error\":null,\"incomplete_details\":");
            if (whole && "incomplete".equals(status)) {
                b.raw("{\"reason\":\"max_output_tokens\"}");
            } else {
                b.raw("null");
            }
            b.raw(",\"instructions\":").str(instructions).raw(",\"max_output_tokens\":");
            if (maxTokens == null) {
                b.raw("null");
            } else {
                b.num(maxTokens);
            }
            b.raw(",\"model\":").str(model).raw(",\"output\":[");
            if (whole) {
                int index = 0;
                if (hasReasoning()) {
                    reasoningItem(b, true);
                    index++;
                }
                if (hasMessage()) {
                    if (index > 0) {
                        b.raw(",");
                    }
                    messageItem(b, messageStatus(), turn.text());
                } else {
                    for (int k = 0; k < turn.toolCalls.size(); k++) {
                        if (index++ > 0) {
                            b.raw(",");
                        }
                        callItem(b, k, "completed", turn.toolCalls.get(k).arguments());
                    }
                }
            }
            b.raw("],\"parallel_tool_calls\":true,\"previous_response_id\":null,\"store\":false,\"temperature\":1.0,"
                    + "\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\",\"tools\":[],\"top_p\":1.0,"
                    + "\"truncation\":\"disabled\",\"usage\":");
            if (whole) {
                usage(b);
            } else {
                b.raw("null");
            }
            return b.raw(",\"metadata\":{}}");
        }

        private void usage(JsonBytes b) {
            long input = inputTokens + plan.cachedTokens();
            long output = turn.outputTokens;
            b.raw("{\"input_tokens\":").num(input).raw(",\"input_tokens_details\":{\"cached_tokens\":")
                    .num(plan.cachedTokens()).raw("},\"output_tokens\":").num(output)
                    .raw(",\"output_tokens_details\":{\"reasoning_tokens\":")
                    .num(plan.reasoningOf(output, turn.thinkingTokens)).raw("},\"total_tokens\":").num(input + output)
                    .raw("}");
        }

        private void reasoningItem(JsonBytes b, boolean done) {
            b.raw("{\"id\":").str(reasoningId).raw(",\"type\":\"reasoning\",\"summary\":[");
            if (done) {
                b.raw("{\"type\":\"summary_text\",\"text\":").str(turn.thinking).raw("}");
            }
            b.raw("]}");
        }

        private void messageItem(JsonBytes b, String status, String text) {
            b.raw("{\"id\":").str(messageId).raw(",\"type\":\"message\",\"status\":").str(status)
                    .raw(",\"content\":[");
            if (text != null) {
                outputText(b, text);
            }
            b.raw("],\"role\":\"assistant\"}");
        }

        private static void outputText(JsonBytes b, String text) {
            b.raw("{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":").str(text).raw("}");
        }

        private void callItem(JsonBytes b, int k, String status, String arguments) {
            Turn.ToolCall c = turn.toolCalls.get(k);
            b.raw("{\"id\":").str(callItemIds.get(k)).raw(",\"type\":\"function_call\",\"status\":").str(status)
                    .raw(",\"arguments\":").str(arguments).raw(",\"call_id\":").str(c.id()).raw(",\"name\":")
                    .str(c.name()).raw("}");
        }

        /** {@code event: <type>\ndata: {"type":…,"sequence_number":n,<fields>}\n\n}. */
        private JsonBytes event(String type) {
            return new JsonBytes(256).raw("event: ").raw(type).raw("\ndata: {\"type\":\"").raw(type)
                    .raw("\",\"sequence_number\":").num(sequence++);
        }

        private static byte[] end(JsonBytes b) {
            return b.raw("}\n\n").toBytes();
        }

        StreamDraft stream() {
            StreamDraft d = new StreamDraft(ApiStyle.OPENAI).errorEvent((seq, message) -> new JsonBytes(256)
                    .raw("event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":").str(message)
                    .raw(",\"param\":null,\"sequence_number\":").num(seq).raw("}\n\n").toBytes());
            d.add(end(event("response.created").raw(",\"response\":").raw(response("in_progress", false).toBytes())),
                    false);
            d.add(end(event("response.in_progress").raw(",\"response\":")
                    .raw(response("in_progress", false).toBytes())), false);
            int index = 0;
            if (hasReasoning()) {
                JsonBytes item = new JsonBytes(128);
                reasoningItem(item, false);
                d.add(end(event("response.output_item.added").raw(",\"output_index\":").num(index).raw(",\"item\":")
                        .raw(item.toBytes())), false);
                String at = ",\"item_id\":\"" + reasoningId + "\",\"output_index\":" + index + ",\"summary_index\":0";
                d.add(end(event("response.reasoning_summary_part.added").raw(at)
                        .raw(",\"part\":{\"type\":\"summary_text\",\"text\":\"\"}")), false);
                for (String piece : turn.thinkingPieces) {
                    d.add(end(event("response.reasoning_summary_text.delta").raw(at).raw(",\"delta\":").str(piece)),
                            true);
                }
                d.add(end(event("response.reasoning_summary_text.done").raw(at).raw(",\"text\":").str(turn.thinking)),
                        false);
                d.add(end(event("response.reasoning_summary_part.done").raw(at)
                        .raw(",\"part\":{\"type\":\"summary_text\",\"text\":").str(turn.thinking).raw("}")), false);
                JsonBytes done = new JsonBytes(256);
                reasoningItem(done, true);
                d.add(end(event("response.output_item.done").raw(",\"output_index\":").num(index).raw(",\"item\":")
                        .raw(done.toBytes())), false);
                index++;
            }
            if (hasMessage()) {
                JsonBytes item = new JsonBytes(128);
                messageItem(item, "in_progress", null);
                d.add(end(event("response.output_item.added").raw(",\"output_index\":").num(index).raw(",\"item\":")
                        .raw(item.toBytes())), false);
                String at = ",\"item_id\":\"" + messageId + "\",\"output_index\":" + index + ",\"content_index\":0";
                d.add(end(event("response.content_part.added").raw(at)
                        .raw(",\"part\":{\"type\":\"output_text\",\"annotations\":[],\"logprobs\":[],\"text\":\"\"}")),
                        false);
                for (String piece : turn.textPieces) {
                    d.add(end(event("response.output_text.delta").raw(at).raw(",\"delta\":").str(piece)
                            .raw(",\"logprobs\":[]")), true);
                }
                d.add(end(event("response.output_text.done").raw(at).raw(",\"text\":").str(turn.text())
                        .raw(",\"logprobs\":[]")), false);
                JsonBytes part = new JsonBytes(256);
                outputText(part, turn.text());
                d.add(end(event("response.content_part.done").raw(at).raw(",\"part\":").raw(part.toBytes())), false);
                JsonBytes done = new JsonBytes(256);
                messageItem(done, messageStatus(), turn.text());
                d.add(end(event("response.output_item.done").raw(",\"output_index\":").num(index).raw(",\"item\":")
                        .raw(done.toBytes())), false);
            } else {
                for (int k = 0; k < turn.toolCalls.size(); k++, index++) {
                    Turn.ToolCall c = turn.toolCalls.get(k);
                    JsonBytes item = new JsonBytes(128);
                    callItem(item, k, "in_progress", "");
                    d.add(end(event("response.output_item.added").raw(",\"output_index\":").num(index)
                            .raw(",\"item\":").raw(item.toBytes())), false);
                    String at = ",\"item_id\":\"" + callItemIds.get(k) + "\",\"output_index\":" + index;
                    for (String fragment : c.fragments()) {
                        d.add(end(event("response.function_call_arguments.delta").raw(at).raw(",\"delta\":")
                                .str(fragment)), true);
                    }
                    d.add(end(event("response.function_call_arguments.done").raw(at).raw(",\"name\":").str(c.name())
                            .raw(",\"arguments\":").str(c.arguments())), false);
                    JsonBytes done = new JsonBytes(256);
                    callItem(done, k, "completed", c.arguments());
                    d.add(end(event("response.output_item.done").raw(",\"output_index\":").num(index)
                            .raw(",\"item\":").raw(done.toBytes())), false);
                }
            }
            String status = finalStatus();
            d.add(end(event("response." + status).raw(",\"response\":").raw(response(status, true).toBytes())),
                    false);
            return d;
        }
    }
}
