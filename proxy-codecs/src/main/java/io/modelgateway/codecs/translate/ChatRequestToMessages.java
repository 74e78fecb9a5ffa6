package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.TranslationException.invalid;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.json.DuplicateKeys;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Contract 8.2: an OpenAI-style chat completions request → the Anthropic messages request for the
 * model's upstream, plus the {@link ResponseTranslator} that turns the answer back (8.3, 8.4) with what this
 * request asked for ({@code stream_options.include_usage}, {@code reasoning.exclude}, the GD-14
 * {@code json_response} emulation).
 *
 * <p>Translation is not the pass-through hot path, so the body is read into a tree; the output is written
 * compact, straight into a new buffer. Validation errors are 400s with OpenAI {@code param} paths such as
 * {@code messages[2].content}. Fields without an Anthropic equivalent are dropped (GD-4).
 *
 * <p>Ownership: the chat body is borrowed (neither read nor released); the returned request's body is new
 * and owned by the caller.
 */
public final class ChatRequestToMessages {
    /**
     * Exact numbers (tool schemas and arguments pass through unchanged), no trailing garbage, and characters
     * outside the BMP (emoji) written as UTF-8 rather than as escaped surrogate pairs, as the providers do.
     */
    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false)
            .build();
    /**
     * Reads callers' request bodies (and tool-call arguments): as {@link #JSON}, and a key repeated in any object
     * fails the read. The check rides on the tree's own insert (a replaced value is the duplicate), so it costs
     * nothing on a request without one; {@link DuplicateKeys#find} then names the key for the 400.
     */
    static final ObjectReader REQUEST_READER = JSON.reader().with(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    /** GD-14: the forced tool that carries a {@code response_format} answer. */
    static final String JSON_RESPONSE_TOOL = "json_response";
    static final String JSON_RESPONSE_DESCRIPTION = "Respond with the final answer as JSON.";
    /** GD-12: output cap when the caller sets none. */
    static final int DEFAULT_MAX_TOKENS = 4096;
    /** Anthropic's smallest thinking budget. */
    static final int MIN_THINKING_BUDGET = 1024;
    /** Anthropic requires this top_p floor while thinking. */
    static final double THINKING_MIN_TOP_P = 0.95;

    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Set<String> IMAGE_TYPES = Set.of("image/jpeg", "image/png", "image/gif", "image/webp");
    private static final JsonNodeFactory NODES = JSON.getNodeFactory();

    private ChatRequestToMessages() {
    }

    /** Translates a chat request; {@code created} is now, the completion id a new {@code chatcmpl-} id. */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf chatBody, ChatRequestToMessagesOptions options)
            throws TranslationException {
        return translate(alloc, chatBody, options, Ids.withPrefix("chatcmpl-"), System.currentTimeMillis() / 1000);
    }

    /** As above with a given completion id and creation time (seconds), which tests fix. */
    static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf chatBody, ChatRequestToMessagesOptions options,
            String completionId, long created) throws TranslationException {
        Translation t = new Translation(parse(chatBody), options);
        ObjectNode out = t.run();
        ByteBuf body = write(alloc, out);
        return new TranslatedRequest(body, t.stream, new MessagesResponseToChat(completionId, created,
                options.upstreamModel(), t.includeUsage, t.excludeReasoning, t.jsonResponse));
    }

    /**
     * Contract 8.2 for a chat request already read as a tree (the Responses API translation makes one, 12.3): the
     * Anthropic request, and what its answer translator needs to know.
     *
     * @param body         the Anthropic request (write it with {@link #write})
     * @param stream       whether it streams
     * @param jsonResponse the GD-14 {@code json_response} tool stands in for a response format
     */
    record Prepared(ObjectNode body, boolean stream, boolean jsonResponse) {
    }

    static Prepared prepare(ObjectNode chat, ChatRequestToMessagesOptions options) throws TranslationException {
        Translation t = new Translation(chat, options);
        ObjectNode out = t.run();
        return new Prepared(out, t.stream, t.jsonResponse);
    }

    static ObjectNode parse(ByteBuf body) throws TranslationException {
        return parse(REQUEST_READER, body);
    }

    /**
     * A chat-style caller's body (chat or Responses) as an object tree read by {@code reader}, whose settings decide
     * the numbers it keeps; a 400 when it is not one JSON object or repeats a key ({@link DuplicateKeys}).
     */
    static ObjectNode parse(ObjectReader reader, ByteBuf body) throws TranslationException {
        JsonNode root;
        try (InputStream in = new ByteBufInputStream(body.duplicate())) {
            root = reader.readTree(in);
        } catch (MismatchedInputException e) {
            String duplicate = DuplicateKeys.find(body);
            throw duplicate != null ? new TranslationException(DuplicateKeys.error(duplicate))
                    : invalid("We could not parse the JSON body of your request.", null, "invalid_json");
        } catch (IOException | RuntimeException e) {
            throw invalid("We could not parse the JSON body of your request.", null, "invalid_json");
        }
        if (root == null || !root.isObject()) {
            throw invalid("The request body must be a JSON object.", null, "invalid_json");
        }
        return (ObjectNode) root;
    }

    static ByteBuf write(ByteBufAllocator alloc, ObjectNode out) {
        try {
            return JsonOut.write(alloc, 1024, JSON.getFactory(), g -> JSON.writeTree(g, out));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One request's translation; the fields after {@code run()} are what the answer translator needs. */
    static final class Translation {
        private final ObjectNode in;
        private final ChatRequestToMessagesOptions options;

        boolean stream;
        boolean includeUsage;
        boolean excludeReasoning;
        boolean jsonResponse;

        /** Thinking budget, 0 when thinking is off. */
        private int budget;
        private final ArrayNode system = NODES.arrayNode();
        private final List<Turn> turns = new ArrayList<>();
        /** GD-22: caller tool-call id → normalised id, and the normalised ids taken. */
        private final Map<String, String> ids = new HashMap<>();
        private final Set<String> idsTaken = new HashSet<>();
        /** 3.2: ids of every earlier tool call, and those of the last assistant message not yet answered. */
        private final Set<String> knownCalls = new HashSet<>();
        private final Set<String> unanswered = new LinkedHashSet<>();

        Translation(ObjectNode in, ChatRequestToMessagesOptions options) {
            this.in = in;
            this.options = options;
        }

        ObjectNode run() throws TranslationException {
            rejectUnsupported();
            stream = bool("stream");
            JsonNode streamOptions = field(in, "stream_options");
            if (streamOptions != null) {
                requireObject(streamOptions, "stream_options");
                includeUsage = bool(streamOptions, "include_usage", "stream_options.include_usage");
            }
            budget = thinkingBudget();
            int maxTokens = maxTokens();

            ObjectNode out = NODES.objectNode();
            out.put("model", options.upstreamModel());
            out.put("max_tokens", maxTokens);
            translateMessages();
            if (!system.isEmpty()) {
                out.set("system", system);
            }
            out.set("messages", writeTurns());
            translateTools(out);
            stopSequences(out);
            sampling(out);
            if (budget > 0) {
                out.putObject("thinking").put("type", "enabled").put("budget_tokens", budget);
            }
            String user = string(in, "user", "user");
            if (user == null) {
                user = string(in, "safety_identifier", "safety_identifier");
            }
            if (user != null && !user.isEmpty()) {
                out.putObject("metadata").put("user_id", user);
            }
            if (stream) {
                out.put("stream", true);
            }
            return out;
        }

        // ---- request-level fields ----

        private void rejectUnsupported() throws TranslationException {
            for (String name : new String[] {"functions", "function_call"}) {
                if (field(in, name) != null) {
                    throw invalid("Unsupported parameter: '" + name + "' is not supported with this model. Use "
                            + "'tools' and 'tool_choice' instead.", name, "unsupported_parameter");
                }
            }
            JsonNode n = field(in, "n");
            if (n != null) {
                if (!n.isIntegralNumber()) {
                    throw invalid("Invalid type for 'n': expected an integer.", "n", "invalid_type");
                }
                if (n.asLong() > 1) {
                    throw invalid("Unsupported value: 'n' must be 1 for this model (only one choice can be "
                            + "generated).", "n", "unsupported_value");
                }
                if (n.asLong() < 1) {
                    throw invalid("Invalid 'n': integer below minimum value. Expected a value >= 1.", "n",
                            "invalid_value");
                }
            }
        }

        /**
         * GD-15: {@code reasoning} (OpenRouter form) wins over {@code reasoning_effort}; a {@code reasoning}
         * object that neither enables nor sizes thinking leaves the decision to {@code reasoning_effort}.
         */
        private int thinkingBudget() throws TranslationException {
            JsonNode reasoning = field(in, "reasoning");
            if (reasoning != null) {
                requireObject(reasoning, "reasoning");
                excludeReasoning = bool(reasoning, "exclude", "reasoning.exclude");
                JsonNode enabled = field(reasoning, "enabled");
                if (enabled != null && !enabled.isBoolean()) {
                    throw invalidType("reasoning.enabled", "a boolean");
                }
                if (enabled != null && !enabled.booleanValue()) {
                    return 0;
                }
                JsonNode max = field(reasoning, "max_tokens");
                if (max != null) {
                    return Math.max(MIN_THINKING_BUDGET, positiveInt(max, "reasoning.max_tokens"));
                }
                String effort = string(reasoning, "effort", "reasoning.effort");
                if (effort != null) {
                    return effortBudget(effort, "reasoning.effort");
                }
                if (enabled != null) {
                    return 2048; // enabled: true alone → medium
                }
            }
            String effort = string(in, "reasoning_effort", "reasoning_effort");
            return effort == null ? 0 : effortBudget(effort, "reasoning_effort");
        }

        private static int effortBudget(String effort, String param) throws TranslationException {
            return switch (effort) {
                case "none", "minimal" -> 0;
                case "low" -> 1024;
                case "medium" -> 2048;
                case "high" -> 4096;
                case "xhigh" -> 8192;
                case "max" -> 16384;
                default -> throw invalid("Invalid value for '" + param + "': '" + effort + "'. Supported values "
                        + "are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'.", param, "invalid_value");
            };
        }

        /**
         * GD-12 and the thinking rule of 8.2: Anthropic needs {@code max_tokens > budget_tokens}, so a cap at or
         * below the budget becomes budget + the requested cap (or 4096). When that exceeds a known model limit
         * it is capped there and the budget shrunk (thinking dropped if no budget fits): the caller did not ask
         * for the excess, so it must not cause an upstream 400.
         */
        private int maxTokens() throws TranslationException {
            Integer requested = null;
            JsonNode mct = field(in, "max_completion_tokens");
            if (mct != null) {
                requested = positiveInt(mct, "max_completion_tokens");
            } else {
                JsonNode mt = field(in, "max_tokens");
                if (mt != null) {
                    requested = positiveInt(mt, "max_tokens");
                }
            }
            int modelMax = options.maxOutputTokens();
            int base = requested != null ? requested
                    : modelMax > 0 ? Math.min(DEFAULT_MAX_TOKENS, modelMax) : DEFAULT_MAX_TOKENS;
            if (budget == 0 || base > budget) {
                return base;
            }
            long raised = (long) budget + (requested != null ? requested : DEFAULT_MAX_TOKENS);
            int max = (int) Math.min(raised, Integer.MAX_VALUE);
            if (modelMax > 0 && max > modelMax) {
                max = modelMax;
                if (budget >= max) {
                    budget = Math.max(MIN_THINKING_BUDGET, max / 2);
                }
                if (budget >= max) {
                    budget = 0;
                    return requested != null ? requested : Math.min(DEFAULT_MAX_TOKENS, modelMax);
                }
            }
            return max;
        }

        private void sampling(ObjectNode out) throws TranslationException {
            JsonNode temperature = field(in, "temperature");
            if (temperature != null) {
                if (!temperature.isNumber()) {
                    throw invalidType("temperature", "a number");
                }
                // GD-19 drops it for models without one; Anthropic fixes it at 1 while thinking.
                if (!options.noTemperature() && budget == 0) {
                    double t = temperature.doubleValue();
                    if (t > 1) {
                        out.put("temperature", 1.0); // GD-13
                    } else if (t < 0) {
                        out.put("temperature", 0.0);
                    } else {
                        out.set("temperature", temperature);
                    }
                }
            }
            JsonNode topP = field(in, "top_p");
            if (topP != null) {
                if (!topP.isNumber()) {
                    throw invalidType("top_p", "a number");
                }
                if (budget > 0 && topP.doubleValue() < THINKING_MIN_TOP_P) {
                    out.put("top_p", THINKING_MIN_TOP_P);
                } else {
                    out.set("top_p", topP);
                }
            }
        }

        private void stopSequences(ObjectNode out) throws TranslationException {
            JsonNode stop = field(in, "stop");
            if (stop == null) {
                return;
            }
            ArrayNode seqs = NODES.arrayNode();
            if (stop.isTextual()) {
                addStop(seqs, stop.textValue());
            } else if (stop.isArray()) {
                for (int i = 0; i < stop.size(); i++) {
                    JsonNode s = stop.get(i);
                    if (!s.isTextual()) {
                        throw invalidType("stop[" + i + "]", "a string");
                    }
                    addStop(seqs, s.textValue());
                }
            } else {
                throw invalidType("stop", "a string or an array of strings");
            }
            if (!seqs.isEmpty()) {
                out.set("stop_sequences", seqs);
            }
        }

        private static void addStop(ArrayNode seqs, String s) {
            if (!s.isBlank()) { // Anthropic rejects whitespace-only stop sequences
                seqs.add(s);
            }
        }

        // ---- messages ----

        private void translateMessages() throws TranslationException {
            JsonNode messages = field(in, "messages");
            if (messages == null) {
                throw invalid("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
            }
            if (!messages.isArray()) {
                throw invalidType("messages", "an array");
            }
            if (messages.isEmpty()) {
                throw invalid("Invalid 'messages': empty array. Expected an array with minimum length 1.",
                        "messages", "invalid_value");
            }
            for (int i = 0; i < messages.size(); i++) {
                String path = "messages[" + i + "]";
                JsonNode m = messages.get(i);
                requireObject(m, path);
                String role = string(m, "role", path + ".role");
                if (role == null) {
                    throw invalid("Missing required parameter: '" + path + ".role'.", path + ".role",
                            "missing_required_parameter");
                }
                switch (role) {
                    case "system", "developer" -> systemMessage(m, path);
                    case "user" -> {
                        requireAnswered();
                        userMessage(m, path);
                    }
                    case "assistant" -> {
                        requireAnswered();
                        assistantMessage(m, path);
                    }
                    case "tool" -> toolMessage(m, path);
                    case "function" -> throw invalid("Unsupported value: messages with role 'function' are not "
                            + "supported with this model. Use 'tool' messages instead.", path + ".role",
                            "unsupported_value");
                    default -> throw invalid("Invalid value: '" + role + "'. Supported values are: 'system', "
                            + "'developer', 'user', 'assistant' and 'tool'.", path + ".role", "invalid_value");
                }
            }
            if (turns.isEmpty()) {
                throw invalid("Invalid 'messages': at least one user or assistant message is required.", "messages",
                        "invalid_value");
            }
        }

        /** 3.2: every tool call must be answered before the next user or assistant message. */
        private void requireAnswered() throws TranslationException {
            if (!unanswered.isEmpty()) {
                throw invalid("An assistant message with 'tool_calls' must be followed by tool messages responding "
                        + "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                        + String.join(", ", unanswered), "messages", "invalid_value");
            }
        }

        /** Hoisted in order: a string → one text block, a text-part array → one block per part. */
        private void systemMessage(JsonNode m, String path) throws TranslationException {
            JsonNode content = field(m, "content");
            String cpath = path + ".content";
            if (content == null) {
                throw missing(cpath);
            }
            if (content.isTextual()) {
                if (!content.textValue().isEmpty()) {
                    system.add(textBlock(content.textValue()));
                }
            } else if (content.isArray()) {
                for (int j = 0; j < content.size(); j++) {
                    String text = textPart(content.get(j), cpath + "[" + j + "]");
                    if (!text.isEmpty()) {
                        system.add(textBlock(text));
                    }
                }
            } else {
                throw invalidType(cpath, "a string or an array of text parts");
            }
        }

        private void userMessage(JsonNode m, String path) throws TranslationException {
            JsonNode content = field(m, "content");
            String cpath = path + ".content";
            if (content == null) {
                throw missing(cpath);
            }
            Turn turn = turn("user");
            if (content.isTextual()) {
                if (content.textValue().isEmpty()) {
                    throw emptyUser(cpath);
                }
                turn.addString(content.textValue());
                return;
            }
            if (!content.isArray()) {
                throw invalidType(cpath, "a string or an array of content parts");
            }
            List<ObjectNode> blocks = new ArrayList<>(content.size());
            for (int j = 0; j < content.size(); j++) {
                ObjectNode block = contentPart(content.get(j), cpath + "[" + j + "]");
                if (block != null) {
                    blocks.add(block);
                }
            }
            if (blocks.isEmpty()) {
                throw emptyUser(cpath);
            }
            turn.addBlocks(blocks);
        }

        private static TranslationException emptyUser(String cpath) {
            return invalid("Invalid '" + cpath + "': a user message must have non-empty content.", cpath,
                    "invalid_value");
        }

        /** Blocks in order: thinking (from reasoning_details), text, tool_use; omitted when none is left. */
        private void assistantMessage(JsonNode m, String path) throws TranslationException {
            List<ObjectNode> blocks = new ArrayList<>();
            reasoningDetails(m, path, blocks);
            JsonNode content = field(m, "content");
            String cpath = path + ".content";
            if (content != null) {
                if (content.isTextual()) {
                    if (!content.textValue().isEmpty()) {
                        blocks.add(textBlock(content.textValue()));
                    }
                } else if (content.isArray()) {
                    for (int j = 0; j < content.size(); j++) {
                        String text = assistantPart(content.get(j), cpath + "[" + j + "]");
                        if (!text.isEmpty()) {
                            blocks.add(textBlock(text));
                        }
                    }
                } else {
                    throw invalidType(cpath, "a string, an array of content parts or null");
                }
            }
            String refusal = string(m, "refusal", path + ".refusal");
            if (refusal != null && !refusal.isEmpty()) {
                blocks.add(textBlock(refusal));
            }
            JsonNode calls = field(m, "tool_calls");
            if (calls != null) {
                if (!calls.isArray()) {
                    throw invalidType(path + ".tool_calls", "an array");
                }
                for (int j = 0; j < calls.size(); j++) {
                    blocks.add(toolUse(calls.get(j), path + ".tool_calls[" + j + "]"));
                }
            }
            if (!blocks.isEmpty()) { // Anthropic rejects empty assistant turns: omit them
                turn("assistant").addBlocks(blocks);
            }
        }

        /**
         * 8.3 in reverse: {@code reasoning.text} entries with a signature → thinking blocks, {@code
         * reasoning.encrypted} → redacted_thinking. Consecutive entries with the same {@code index} are one
         * block (a streamed message sent back unmerged: text fragments, then the signature). Unsigned thinking
         * is dropped (8.1: Anthropic rejects it); summaries and unknown types have no block.
         */
        private void reasoningDetails(JsonNode m, String path, List<ObjectNode> blocks) throws TranslationException {
            JsonNode details = field(m, "reasoning_details");
            if (details == null) {
                return;
            }
            String dpath = path + ".reasoning_details";
            if (!details.isArray()) {
                throw invalidType(dpath, "an array");
            }
            List<ObjectNode> all = new ArrayList<>();
            ObjectNode current = null;
            JsonNode currentIndex = null;
            StringBuilder text = null;
            for (int k = 0; k < details.size(); k++) {
                JsonNode d = details.get(k);
                requireObject(d, dpath + "[" + k + "]");
                String type = string(d, "type", dpath + "[" + k + "].type");
                if ("reasoning.text".equals(type)) {
                    JsonNode index = field(d, "index");
                    String t = string(d, "text", dpath + "[" + k + "].text");
                    String sig = string(d, "signature", dpath + "[" + k + "].signature");
                    if (current == null || index == null || !index.equals(currentIndex)) {
                        finishThinking(current, text);
                        current = NODES.objectNode().put("type", "thinking");
                        text = new StringBuilder();
                        currentIndex = index;
                        all.add(current);
                    }
                    if (t != null) {
                        text.append(t);
                    }
                    if (sig != null && !sig.isEmpty()) {
                        current.put("signature", sig);
                    }
                } else {
                    finishThinking(current, text);
                    current = null;
                    if ("reasoning.encrypted".equals(type)) {
                        String data = string(d, "data", dpath + "[" + k + "].data");
                        if (data != null && !data.isEmpty()) {
                            all.add(NODES.objectNode().put("type", "redacted_thinking").put("data", data));
                        }
                    }
                }
            }
            finishThinking(current, text);
            for (ObjectNode b : all) {
                if (!"thinking".equals(b.get("type").textValue()) || b.hasNonNull("signature")) {
                    blocks.add(b);
                }
            }
        }

        /** Puts the accumulated text in, with Anthropic's field order (thinking, then signature). */
        private static void finishThinking(ObjectNode block, StringBuilder text) {
            if (block == null) {
                return;
            }
            JsonNode sig = block.remove("signature");
            block.put("thinking", text.toString());
            if (sig != null) {
                block.set("signature", sig);
            }
        }

        private ObjectNode toolUse(JsonNode call, String path) throws TranslationException {
            requireObject(call, path);
            String type = string(call, "type", path + ".type");
            if (type != null && !"function".equals(type)) {
                if ("custom".equals(type)) {
                    throw invalid("Unsupported value: custom tool calls are not supported with this model.",
                            path + ".type", "unsupported_value");
                }
                throw invalid("Invalid value: '" + type + "'. Supported values are: 'function'.", path + ".type",
                        "invalid_value");
            }
            String id = string(call, "id", path + ".id");
            if (id == null || id.isEmpty()) {
                throw missing(path + ".id");
            }
            JsonNode fn = field(call, "function");
            if (fn == null) {
                throw missing(path + ".function");
            }
            requireObject(fn, path + ".function");
            String name = string(fn, "name", path + ".function.name");
            if (name == null) {
                throw missing(path + ".function.name");
            }
            ObjectNode input = arguments(field(fn, "arguments"), path + ".function.arguments");
            knownCalls.add(id);
            unanswered.add(id);
            ObjectNode block = NODES.objectNode();
            block.put("type", "tool_use").put("id", normalisedId(id)).put("name", name).set("input", input);
            return block;
        }

        /** GD-23: {@code arguments} must hold a JSON object after trimming; empty means {@code {}}. */
        private static ObjectNode arguments(JsonNode args, String path) throws TranslationException {
            if (args == null) {
                return NODES.objectNode();
            }
            if (args.isObject()) {
                return (ObjectNode) args; // some clients send the object itself
            }
            if (!args.isTextual()) {
                throw invalidType(path, "a string");
            }
            String s = args.textValue().strip();
            if (s.isEmpty()) {
                return NODES.objectNode();
            }
            JsonNode parsed;
            try {
                parsed = REQUEST_READER.readTree(s);
            } catch (MismatchedInputException e) {
                String duplicate = DuplicateKeys.find(s);
                if (duplicate != null) {
                    throw new TranslationException(DuplicateKeys.error(path + "." + duplicate));
                }
                parsed = null;
            } catch (IOException | RuntimeException e) {
                parsed = null;
            }
            if (parsed == null || !parsed.isObject()) {
                throw invalid("Invalid '" + path + "': the arguments must be a JSON object.", path, "invalid_value");
            }
            return (ObjectNode) parsed;
        }

        /** A {@code tool_result} block, at the front of the (merged) user turn. */
        private void toolMessage(JsonNode m, String path) throws TranslationException {
            String id = string(m, "tool_call_id", path + ".tool_call_id");
            if (id == null) {
                throw missing(path + ".tool_call_id");
            }
            if (!knownCalls.contains(id)) {
                throw invalid("Invalid parameter: messages with role 'tool' must be a response to a preceding "
                        + "message with 'tool_calls' (unknown tool_call_id '" + id + "').", "messages",
                        "invalid_value");
            }
            unanswered.remove(id);
            ObjectNode result = NODES.objectNode();
            result.put("type", "tool_result").put("tool_use_id", normalisedId(id));
            JsonNode content = field(m, "content");
            String cpath = path + ".content";
            if (content != null) {
                if (content.isTextual()) {
                    if (!content.textValue().isEmpty()) {
                        result.put("content", content.textValue());
                    }
                } else if (content.isArray()) {
                    ArrayNode blocks = NODES.arrayNode();
                    for (int j = 0; j < content.size(); j++) {
                        ObjectNode block = contentPart(content.get(j), cpath + "[" + j + "]");
                        if (block != null) {
                            blocks.add(block);
                        }
                    }
                    if (!blocks.isEmpty()) {
                        result.set("content", blocks);
                    }
                } else {
                    throw invalidType(cpath, "a string or an array of text parts");
                }
            }
            turn("user").addToolResult(result);
        }

        /** GD-22: characters outside {@code [A-Za-z0-9_-]} become {@code _}; the same id maps the same way. */
        private String normalisedId(String id) {
            String known = ids.get(id);
            if (known != null) {
                return known;
            }
            StringBuilder sb = new StringBuilder(id.length());
            for (int i = 0; i < id.length(); i++) {
                char c = id.charAt(i);
                boolean ok = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
                        || c == '-';
                sb.append(ok ? c : '_');
            }
            String n = sb.toString();
            // Two different ids may normalise alike ("a.1", "a:1"): keep them apart.
            for (int k = 2; idsTaken.contains(n); k++) {
                n = sb + "_" + k;
            }
            ids.put(id, n);
            idsTaken.add(n);
            return n;
        }

        // ---- content parts ----

        /** A user (or tool result) part → an Anthropic block, or null when it is dropped (empty text). */
        private static ObjectNode contentPart(JsonNode part, String path) throws TranslationException {
            requireObject(part, path);
            String type = string(part, "type", path + ".type");
            if (type == null) {
                throw missing(path + ".type");
            }
            switch (type) {
                case "text" -> {
                    String text = string(part, "text", path + ".text");
                    if (text == null) {
                        throw missing(path + ".text");
                    }
                    return text.isEmpty() ? null : textBlock(text);
                }
                case "image_url" -> {
                    return image(part, path);
                }
                case "input_audio", "file" -> throw invalid("Unsupported value: '" + type + "' content parts are "
                        + "not supported with this model.", path + ".type", "unsupported_value");
                default -> throw invalid("Invalid value: '" + type + "'. Supported values are: 'text', "
                        + "'image_url', 'input_audio' and 'file'.", path + ".type", "invalid_value");
            }
        }

        /** A {@code data:} URI → a base64 image (jpeg/png/gif/webp only); an http(s) URL → a url image. */
        private static ObjectNode image(JsonNode part, String path) throws TranslationException {
            JsonNode iu = field(part, "image_url");
            String url;
            String upath = path + ".image_url.url";
            if (iu == null) {
                throw missing(path + ".image_url");
            } else if (iu.isTextual()) {
                url = iu.textValue();
            } else {
                requireObject(iu, path + ".image_url");
                url = string(iu, "url", upath);
                if (url == null) {
                    throw missing(upath);
                }
            }
            ObjectNode block = NODES.objectNode().put("type", "image");
            ObjectNode source = block.putObject("source");
            String lower = url.length() > 16 ? url.substring(0, 16).toLowerCase(Locale.ROOT) : url.toLowerCase(Locale.ROOT);
            if (lower.startsWith("data:")) {
                int comma = url.indexOf(',');
                if (comma < 0) {
                    throw invalid("Invalid '" + upath + "': malformed data URI.", upath, "invalid_value");
                }
                String[] meta = url.substring(5, comma).split(";");
                String mediaType = meta[0].strip().toLowerCase(Locale.ROOT);
                if (mediaType.equals("image/jpg")) {
                    mediaType = "image/jpeg";
                }
                boolean base64 = false;
                for (int k = 1; k < meta.length; k++) {
                    base64 |= meta[k].strip().equalsIgnoreCase("base64");
                }
                if (!IMAGE_TYPES.contains(mediaType)) {
                    throw invalid("Invalid '" + upath + "': unsupported image media type '" + mediaType
                            + "'. Supported types are image/jpeg, image/png, image/gif and image/webp.", upath,
                            "invalid_value");
                }
                if (!base64 || comma == url.length() - 1) {
                    throw invalid("Invalid '" + upath + "': expected a base64 data URI with data.", upath,
                            "invalid_value");
                }
                source.put("type", "base64").put("media_type", mediaType).put("data", url.substring(comma + 1));
            } else if (lower.startsWith("http://") || lower.startsWith("https://")) {
                source.put("type", "url").put("url", url);
            } else {
                throw invalid("Invalid '" + upath + "': expected an http(s) URL or a base64 data URI.", upath,
                        "invalid_value");
            }
            return block;
        }

        private static String textPart(JsonNode part, String path) throws TranslationException {
            requireObject(part, path);
            String type = string(part, "type", path + ".type");
            if (!"text".equals(type)) {
                throw invalid("Invalid value: '" + type + "'. Supported values are: 'text'.", path + ".type",
                        "invalid_value");
            }
            String text = string(part, "text", path + ".text");
            if (text == null) {
                throw missing(path + ".text");
            }
            return text;
        }

        /** Assistant parts: text, and refusal (kept as text). */
        private static String assistantPart(JsonNode part, String path) throws TranslationException {
            requireObject(part, path);
            String type = string(part, "type", path + ".type");
            if ("refusal".equals(type)) {
                String r = string(part, "refusal", path + ".refusal");
                if (r == null) {
                    throw missing(path + ".refusal");
                }
                return r;
            }
            return textPart(part, path);
        }

        // ---- turns ----

        /** The open turn of that role, or a new one: consecutive same-role messages merge. */
        private Turn turn(String role) {
            Turn last = turns.isEmpty() ? null : turns.get(turns.size() - 1);
            if (last != null && last.role.equals(role)) {
                return last;
            }
            Turn t = new Turn(role);
            turns.add(t);
            return t;
        }

        private ArrayNode writeTurns() {
            ArrayNode out = NODES.arrayNode();
            for (Turn t : turns) {
                out.add(t.toMessage());
            }
            return out;
        }

        // ---- tools ----

        private void translateTools(ObjectNode out) throws TranslationException {
            Map<String, ObjectNode> tools = tools();
            ObjectNode choice = toolChoice(tools);
            if (tools.isEmpty() && choice != null) {
                String type = choice.get("type").textValue();
                if (type.equals("any") || type.equals("tool")) {
                    throw invalid("Invalid value for 'tool_choice': a tool must be called but no 'tools' were "
                            + "given.", "tool_choice", "invalid_value");
                }
                choice = null; // "none" / "auto" without tools mean nothing
            }
            ObjectNode schema = responseFormatSchema();
            if (schema != null) {
                jsonResponse = true;
                if (tools.containsKey(JSON_RESPONSE_TOOL)) {
                    throw invalid("Invalid 'tools': the tool name 'json_response' is reserved when 'response_format' "
                            + "is set.", "tools", "invalid_value");
                }
                if (choice != null && choice.get("type").textValue().equals("none")) {
                    tools.clear(); // the caller's tools may not be called: only the answer tool is left
                }
                ObjectNode tool = NODES.objectNode().put("name", JSON_RESPONSE_TOOL)
                        .put("description", JSON_RESPONSE_DESCRIPTION);
                tool.set("input_schema", schema);
                boolean callerTools = !tools.isEmpty();
                tools.put(JSON_RESPONSE_TOOL, tool);
                if (budget > 0) {
                    choice = choice("auto"); // forced tool use is not allowed with thinking
                } else if (!callerTools) {
                    choice = choice("tool").put("name", JSON_RESPONSE_TOOL);
                } else if (choice == null || !choice.get("type").textValue().equals("tool")) {
                    choice = choice("any"); // a caller's tool or the answer tool
                }
            } else if (budget > 0 && choice != null && isForced(choice)) {
                choice = choice("auto"); // Anthropic refuses forced tool use while thinking
            }
            if (tools.isEmpty()) {
                return;
            }
            JsonNode parallel = field(in, "parallel_tool_calls");
            if (parallel != null && !parallel.isBoolean()) {
                throw invalidType("parallel_tool_calls", "a boolean");
            }
            if (parallel != null && !parallel.booleanValue()
                    && (choice == null || !choice.get("type").textValue().equals("none"))) {
                if (choice == null) {
                    choice = choice("auto");
                }
                choice.put("disable_parallel_tool_use", true);
            }
            ArrayNode list = out.putArray("tools");
            tools.values().forEach(list::add);
            if (choice != null) {
                out.set("tool_choice", choice);
            }
        }

        private static boolean isForced(ObjectNode choice) {
            String type = choice.get("type").textValue();
            return type.equals("any") || type.equals("tool");
        }

        private static ObjectNode choice(String type) {
            return NODES.objectNode().put("type", type);
        }

        /** {@code tools[].function} → {@code name}, {@code description}, {@code input_schema}, by name in order. */
        private Map<String, ObjectNode> tools() throws TranslationException {
            Map<String, ObjectNode> tools = new LinkedHashMap<>();
            JsonNode list = field(in, "tools");
            if (list == null) {
                return tools;
            }
            if (!list.isArray()) {
                throw invalidType("tools", "an array");
            }
            for (int k = 0; k < list.size(); k++) {
                String path = "tools[" + k + "]";
                JsonNode t = list.get(k);
                requireObject(t, path);
                String type = string(t, "type", path + ".type");
                if ("custom".equals(type)) {
                    throw invalid("Unsupported value: custom tools are not supported with this model.", path + ".type",
                            "unsupported_value");
                }
                if (type != null && !type.equals("function")) {
                    throw invalid("Invalid value: '" + type + "'. Supported values are: 'function'.", path + ".type",
                            "invalid_value");
                }
                JsonNode fn = field(t, "function");
                if (fn == null) {
                    throw missing(path + ".function");
                }
                requireObject(fn, path + ".function");
                String name = string(fn, "name", path + ".function.name");
                if (name == null) {
                    throw missing(path + ".function.name");
                }
                if (!TOOL_NAME.matcher(name).matches()) {
                    throw invalid("Invalid '" + path + ".function.name': string does not match pattern. Expected a "
                            + "string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", path + ".function.name",
                            "invalid_value");
                }
                if (tools.containsKey(name)) {
                    throw invalid("Invalid 'tools': duplicate tool name '" + name + "'.", path + ".function.name",
                            "invalid_value");
                }
                ObjectNode tool = NODES.objectNode().put("name", name);
                String description = string(fn, "description", path + ".function.description");
                if (description != null && !description.isEmpty()) {
                    tool.put("description", description);
                }
                JsonNode params = field(fn, "parameters");
                if (params != null && !params.isObject()) {
                    throw invalidType(path + ".function.parameters", "an object");
                }
                tool.set("input_schema", schema((ObjectNode) params));
                tools.put(name, tool);
            }
            return tools;
        }

        /** Anthropic requires {@code input_schema.type: "object"}; a schema without a type gets it. */
        private static ObjectNode schema(ObjectNode params) {
            if (params == null) {
                ObjectNode s = NODES.objectNode().put("type", "object");
                s.putObject("properties");
                return s;
            }
            if (params.has("type")) {
                return params;
            }
            ObjectNode s = NODES.objectNode().put("type", "object");
            s.setAll(params);
            return s;
        }

        /** {@code tool_choice} in Anthropic's form (null when absent); {@code allowed_tools} filters {@code tools}. */
        private ObjectNode toolChoice(Map<String, ObjectNode> tools) throws TranslationException {
            JsonNode tc = field(in, "tool_choice");
            if (tc == null) {
                return null;
            }
            if (tc.isTextual()) {
                return switch (tc.textValue()) {
                    case "auto" -> choice("auto");
                    case "none" -> choice("none");
                    case "required" -> choice("any");
                    default -> throw invalid("Invalid value: '" + tc.textValue() + "'. Supported values are: 'none', "
                            + "'auto' and 'required'.", "tool_choice", "invalid_value");
                };
            }
            requireObject(tc, "tool_choice");
            String type = string(tc, "type", "tool_choice.type");
            if ("function".equals(type)) {
                JsonNode fn = field(tc, "function");
                if (fn == null) {
                    throw missing("tool_choice.function");
                }
                requireObject(fn, "tool_choice.function");
                String name = string(fn, "name", "tool_choice.function.name");
                if (name == null) {
                    throw missing("tool_choice.function.name");
                }
                if (!tools.containsKey(name)) {
                    throw invalid("Invalid value for 'tool_choice': no function named '" + name + "' was specified "
                            + "in the 'tools' parameter.", "tool_choice", "invalid_value");
                }
                return choice("tool").put("name", name);
            }
            if ("allowed_tools".equals(type)) {
                return allowedTools(tc, tools);
            }
            if ("custom".equals(type)) {
                throw invalid("Unsupported value: custom tools are not supported with this model.", "tool_choice.type",
                        "unsupported_value");
            }
            throw invalid("Invalid value: '" + type + "'. Supported values are: 'function' and 'allowed_tools'.",
                    "tool_choice.type", "invalid_value");
        }

        private ObjectNode allowedTools(JsonNode tc, Map<String, ObjectNode> tools) throws TranslationException {
            JsonNode allowed = field(tc, "allowed_tools");
            if (allowed == null) {
                throw missing("tool_choice.allowed_tools");
            }
            requireObject(allowed, "tool_choice.allowed_tools");
            String mode = string(allowed, "mode", "tool_choice.allowed_tools.mode");
            ObjectNode choice;
            if (mode == null || mode.equals("auto")) {
                choice = choice("auto");
            } else if (mode.equals("required")) {
                choice = choice("any");
            } else {
                throw invalid("Invalid value: '" + mode + "'. Supported values are: 'auto' and 'required'.",
                        "tool_choice.allowed_tools.mode", "invalid_value");
            }
            JsonNode list = field(allowed, "tools");
            if (list == null) {
                throw missing("tool_choice.allowed_tools.tools");
            }
            if (!list.isArray()) {
                throw invalidType("tool_choice.allowed_tools.tools", "an array");
            }
            Set<String> names = new HashSet<>();
            for (int k = 0; k < list.size(); k++) {
                String path = "tool_choice.allowed_tools.tools[" + k + "]";
                JsonNode t = list.get(k);
                requireObject(t, path);
                String type = string(t, "type", path + ".type");
                if (type != null && !type.equals("function")) {
                    throw invalid("Unsupported value: '" + type + "' tools are not supported with this model.",
                            path + ".type", "unsupported_value");
                }
                JsonNode fn = field(t, "function");
                String name = fn != null && fn.isObject() ? string(fn, "name", path + ".function.name")
                        : string(t, "name", path + ".name");
                if (name == null) {
                    throw missing(path + ".function.name");
                }
                if (!tools.containsKey(name)) {
                    throw invalid("Invalid value for 'tool_choice': no function named '" + name + "' was specified "
                            + "in the 'tools' parameter.", path, "invalid_value");
                }
                names.add(name);
            }
            if (names.isEmpty()) {
                throw invalid("Invalid 'tool_choice.allowed_tools.tools': empty array.", "tool_choice.allowed_tools.tools",
                        "invalid_value");
            }
            tools.keySet().retainAll(names);
            return choice;
        }

        /** GD-14: the {@code json_response} tool's schema, or null when no JSON output was asked for. */
        ObjectNode responseFormatSchema() throws TranslationException {
            JsonNode rf = field(in, "response_format");
            if (rf == null) {
                return null;
            }
            requireObject(rf, "response_format");
            String type = string(rf, "type", "response_format.type");
            if (type == null) {
                throw missing("response_format.type");
            }
            switch (type) {
                case "text" -> {
                    return null;
                }
                case "json_object" -> {
                    return NODES.objectNode().put("type", "object");
                }
                case "json_schema" -> {
                    JsonNode js = field(rf, "json_schema");
                    if (js == null) {
                        throw missing("response_format.json_schema");
                    }
                    requireObject(js, "response_format.json_schema");
                    JsonNode schema = field(js, "schema");
                    if (schema == null) {
                        return NODES.objectNode().put("type", "object");
                    }
                    requireObject(schema, "response_format.json_schema.schema");
                    return schema((ObjectNode) schema);
                }
                default -> throw invalid("Invalid value: '" + type + "'. Supported values are: 'text', 'json_object' "
                        + "and 'json_schema'.", "response_format.type", "invalid_value");
            }
        }

        // ---- field access ----

        private boolean bool(String name) throws TranslationException {
            return bool(in, name, name);
        }

        private static boolean bool(JsonNode o, String name, String path) throws TranslationException {
            JsonNode n = field(o, name);
            if (n == null) {
                return false;
            }
            if (!n.isBoolean()) {
                throw invalidType(path, "a boolean");
            }
            return n.booleanValue();
        }

        private static int positiveInt(JsonNode n, String path) throws TranslationException {
            if (!n.isIntegralNumber()) {
                throw invalidType(path, "an integer");
            }
            if (!n.canConvertToInt() || n.intValue() < 1) {
                throw invalid("Invalid '" + path + "': expected an integer between 1 and " + Integer.MAX_VALUE + ".",
                        path, "invalid_value");
            }
            return n.intValue();
        }
    }

    /** One Anthropic message being assembled from one or more consecutive chat messages of its side. */
    private static final class Turn {
        final String role;
        private final List<ObjectNode> toolResults = new ArrayList<>();
        private final List<ObjectNode> blocks = new ArrayList<>();
        /** A lone user message's string content, kept a string unless something merges into the turn. */
        private String onlyString;
        private int sources;

        Turn(String role) {
            this.role = role;
        }

        void addString(String s) {
            if (sources == 0) {
                onlyString = s;
            } else {
                unString();
                blocks.add(textBlock(s));
            }
            sources++;
        }

        void addBlocks(List<ObjectNode> more) {
            unString();
            blocks.addAll(more);
            sources++;
        }

        void addToolResult(ObjectNode result) {
            unString();
            toolResults.add(result);
            sources++;
        }

        private void unString() {
            if (onlyString != null) {
                blocks.add(0, textBlock(onlyString));
                onlyString = null;
            }
        }

        ObjectNode toMessage() {
            ObjectNode m = NODES.objectNode().put("role", role);
            if (onlyString != null) {
                m.put("content", onlyString);
                return m;
            }
            ArrayNode content = m.putArray("content");
            // Anthropic: tool_result blocks lead a user message; thinking blocks lead an assistant message.
            toolResults.forEach(content::add);
            for (ObjectNode b : blocks) {
                if (isThinking(b)) {
                    content.add(b);
                }
            }
            for (ObjectNode b : blocks) {
                if (!isThinking(b)) {
                    content.add(b);
                }
            }
            return m;
        }

        private static boolean isThinking(ObjectNode b) {
            String type = b.get("type").textValue();
            return type.equals("thinking") || type.equals("redacted_thinking");
        }
    }

    // ---- shared helpers ----

    private static ObjectNode textBlock(String text) {
        return NODES.objectNode().put("type", "text").put("text", text);
    }

    /** A field's value, null when absent or JSON null (1.3: an optional null is absent). */
    static JsonNode field(JsonNode o, String name) {
        JsonNode n = o.get(name);
        return n == null || n.isNull() ? null : n;
    }

    private static String string(JsonNode o, String name, String path) throws TranslationException {
        JsonNode n = field(o, name);
        if (n == null) {
            return null;
        }
        if (!n.isTextual()) {
            throw invalidType(path, "a string");
        }
        return n.textValue();
    }

    static void requireObject(JsonNode n, String path) throws TranslationException {
        if (!n.isObject()) {
            throw invalidType(path, "an object");
        }
    }

    /** The chat styles' 400 of a field of another type (OpenAI's wording, which the SDKs show). */
    static TranslationException invalidType(String path, String expected) {
        return invalid("Invalid type for '" + path + "': expected " + expected + ".", path, "invalid_type");
    }

    static TranslationException missing(String path) {
        return invalid("Missing required parameter: '" + path + "'.", path, "missing_required_parameter");
    }
}
