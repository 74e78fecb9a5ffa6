package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;
import static io.modelgateway.codecs.translate.TranslationException.invalid;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.json.DuplicateKeys;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An Anthropic-style {@code /messages} request → the OpenAI chat-completions request for an OpenAI-style
 * upstream (contract 8.5, 5.11), and the translator of what that upstream answers
 * ({@link ChatResponseToMessages}, {@link ChatStreamToMessages}).
 *
 * <p>The request is read as a tree (translation is not the pass-through hot path) and the upstream body is
 * written as compact JSON straight into a new buffer. The input buffer is borrowed and left untouched; the
 * returned {@link TranslatedRequest#body()} belongs to the caller. Fields without a chat equivalent are
 * dropped (GD-4); those that cannot be honoured (documents, server tools, {@code container},
 * {@code mcp_servers}, {@code context_management}) are a 400.
 */
public final class MessagesRequestToChat {
    /** Big-decimal floats keep numbers (tool inputs, temperature) as the caller wrote them. */
    static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Integer.MAX_VALUE) // a base64 image may be most of a 32 MiB body
                            .build())
                    .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                    .build())
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
            .build();

    /** Reads callers' bodies: as {@link #MAPPER}, and a key repeated in any object fails the read (see
     * {@link ChatRequestToMessages#REQUEST_READER}). */
    static final ObjectReader REQUEST_READER = MAPPER.reader().with(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    private static final int MAX_STOP = 4;

    private MessagesRequestToChat() {
    }

    /**
     * Translates one messages request.
     *
     * @param alloc        allocates the upstream body
     * @param messagesBody the caller's JSON body (borrowed: not released, reader index unchanged)
     * @param options      what the upstream accepts
     * @return the upstream chat body (owned by the caller), whether it streams, and the answer's translator
     * @throws TranslationException a 400 for the caller ({@code invalid_request_error}, field path in the message)
     */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf messagesBody,
            MessagesRequestToChatOptions options) throws TranslationException {
        JsonNode root = parse(messagesBody);
        ChatToolNames tools = new ChatToolNames();
        boolean stream = bool(root, "stream");
        ByteBuf out;
        try {
            out = JsonOut.write(alloc, Math.max(256, messagesBody.readableBytes() + 128), MAPPER,
                    g -> new Writer(root, options, tools, g).write(stream));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to a heap/direct buffer does not fail
        }
        return new TranslatedRequest(out, stream, new ChatResponseToMessages(options.upstreamModel(), tools));
    }

    /** One input block with where it came from (for error messages): {@code idx < 0} = string content. */
    private record Block(JsonNode node, String type, int msg, int idx) {
        String path() {
            return idx < 0 ? "messages[" + msg + "].content" : "messages[" + msg + "].content[" + idx + "]";
        }
    }

    /** Writes the chat body for one request; validation failures abort with a {@link TranslationException}. */
    private static final class Writer {
        private final JsonNode root;
        private final MessagesRequestToChatOptions options;
        private final ChatToolNames tools;
        private final JsonGenerator g;

        Writer(JsonNode root, MessagesRequestToChatOptions options, ChatToolNames tools, JsonGenerator g) {
            this.root = root;
            this.options = options;
            this.tools = tools;
            this.g = g;
        }

        void write(boolean stream) throws IOException, TranslationException {
            for (String field : new String[] {"container", "mcp_servers", "context_management"}) {
                if (present(root, field)) {
                    throw invalid(field + ": not supported by this model's provider.", field, "unsupported_parameter");
                }
            }
            g.writeStartObject();
            g.writeStringField("model", options.upstreamModel());
            writeMessages();
            writeLimits();
            boolean anyTools = writeTools();
            writeToolChoice(anyTools);
            writeUser();
            writeReasoningEffort();
            writeResponseFormat();
            if (stream) {
                g.writeBooleanField("stream", true);
                g.writeObjectFieldStart("stream_options");
                g.writeBooleanField("include_usage", true); // always: usage is needed for message_delta (8.1)
                g.writeEndObject();
            }
            g.writeEndObject();
        }

        // ---- messages -------------------------------------------------------------------------------------

        private void writeMessages() throws IOException, TranslationException {
            JsonNode messages = root.get("messages");
            if (messages == null || messages.isNull()) {
                throw invalid("messages: field required.", "messages", "missing_required_parameter");
            }
            if (!messages.isArray()) {
                throw invalid("messages: must be an array.", "messages", "invalid_type");
            }
            g.writeArrayFieldStart("messages");
            writeSystem();
            // Consecutive same-role messages are one turn (5.4): merge them so that tool results of a turn all
            // come first and every tool message directly follows its assistant message.
            List<Block> run = new ArrayList<>();
            String runRole = null;
            int runStart = 0;
            for (int i = 0; i < messages.size(); i++) {
                JsonNode m = messages.get(i);
                if (!m.isObject()) {
                    throw invalid("messages[" + i + "]: must be an object.", "messages[" + i + "]", "invalid_type");
                }
                String role = text(m.get("role"));
                // role system is only valid from anthropic-version 2026-10-21; the gateway checked the header.
                if (!"user".equals(role) && !"assistant".equals(role) && !"system".equals(role)) {
                    throw invalid("messages[" + i + "].role: must be one of `user`, `assistant`, `system`.",
                            "messages[" + i + "].role", "invalid_value");
                }
                if (!role.equals(runRole) || "system".equals(role)) {
                    flush(runRole, run, runStart);
                    run.clear();
                    runRole = role;
                    runStart = i;
                }
                if ("system".equals(role)) {
                    writeSystemMessage(m, i); // 5.11: in place
                    runRole = null;
                    continue;
                }
                collectBlocks(m, i, run);
            }
            flush(runRole, run, runStart);
            g.writeEndArray();
        }

        private void writeSystem() throws IOException, TranslationException {
            JsonNode system = root.get("system");
            if (system == null || system.isNull()) {
                return;
            }
            String text = systemText(system, "system");
            if (!text.isEmpty()) {
                g.writeStartObject();
                g.writeStringField("role", "system");
                g.writeStringField("content", text);
                g.writeEndObject();
            }
        }

        private void writeSystemMessage(JsonNode m, int i) throws IOException, TranslationException {
            String text = systemText(m.get("content"), "messages[" + i + "].content");
            g.writeStartObject();
            g.writeStringField("role", "system");
            g.writeStringField("content", text);
            g.writeEndObject();
        }

        /** A system string, or text blocks joined with a blank line. */
        private static String systemText(JsonNode content, String path) throws TranslationException {
            if (content == null || content.isNull()) {
                return "";
            }
            if (content.isTextual()) {
                return content.textValue();
            }
            return String.join("\n\n", textBlocks(content, path));
        }

        private static void collectBlocks(JsonNode m, int i, List<Block> run) throws TranslationException {
            JsonNode content = m.get("content");
            if (content != null && content.isTextual()) {
                ObjectNode text = MAPPER.createObjectNode().put("type", "text").put("text", content.textValue());
                run.add(new Block(text, "text", i, -1));
                return;
            }
            if (content == null || !content.isArray()) {
                String path = "messages[" + i + "].content";
                throw invalid(path + ": must be a string or an array of content blocks.", path, "invalid_type");
            }
            for (int j = 0; j < content.size(); j++) {
                JsonNode b = content.get(j);
                if (!b.isObject() || !b.path("type").isTextual()) {
                    String path = "messages[" + i + "].content[" + j + "]";
                    throw invalid(path + ": must be a content block with a `type`.", path, "invalid_type");
                }
                run.add(new Block(b, b.get("type").textValue(), i, j));
            }
        }

        private void flush(String role, List<Block> run, int first) throws IOException, TranslationException {
            if ("user".equals(role)) {
                if (run.isEmpty()) {
                    String path = "messages[" + first + "].content";
                    throw invalid(path + ": at least one content block is required.", path, "invalid_value");
                }
                writeUserTurn(run);
            } else if ("assistant".equals(role)) {
                writeAssistantTurn(run);
            }
        }

        /** tool_result blocks → tool messages first, then their images, then the rest as one user message. */
        private void writeUserTurn(List<Block> blocks) throws IOException, TranslationException {
            List<Block> rest = new ArrayList<>();
            List<JsonNode> resultImages = new ArrayList<>();
            for (Block b : blocks) {
                switch (b.type()) {
                    case "tool_result" -> writeToolMessage(b, resultImages);
                    case "text" -> {
                        requireText(b.node(), "text", b.path());
                        rest.add(b);
                    }
                    case "image" -> {
                        imageUrl(b.node(), b.path()); // validate now, write below
                        rest.add(b);
                    }
                    default -> throw unsupportedBlock(b.path(), b.type());
                }
            }
            // Chat tool messages carry text only. The images go in a user message right after the tool
            // messages: placed between them, it would break "tool messages follow their assistant message".
            if (!resultImages.isEmpty()) {
                g.writeStartObject();
                g.writeStringField("role", "user");
                g.writeArrayFieldStart("content");
                for (JsonNode image : resultImages) {
                    writeImagePart(imageUrl(image, null));
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            if (rest.isEmpty()) {
                return; // only tool results
            }
            g.writeStartObject();
            g.writeStringField("role", "user");
            // A lone text block as a plain string: the most widely accepted form among compatible servers.
            if (rest.size() == 1 && "text".equals(rest.get(0).type())) {
                g.writeStringField("content", rest.get(0).node().get("text").textValue());
            } else {
                g.writeArrayFieldStart("content");
                for (Block b : rest) {
                    if ("text".equals(b.type())) {
                        JsonOut.textBlock(g, b.node().get("text").textValue());
                    } else {
                        writeImagePart(imageUrl(b.node(), b.path()));
                    }
                }
                g.writeEndArray();
            }
            g.writeEndObject();
        }

        private void writeToolMessage(Block b, List<JsonNode> images) throws IOException, TranslationException {
            JsonNode r = b.node();
            String id = requireText(r, "tool_use_id", b.path());
            JsonNode content = r.get("content");
            String text;
            if (content == null || content.isNull()) {
                text = "";
            } else if (content.isTextual()) {
                text = content.textValue();
            } else if (content.isArray()) {
                StringBuilder sb = new StringBuilder();
                boolean first = true;
                for (int k = 0; k < content.size(); k++) {
                    JsonNode c = content.get(k);
                    String at = b.path() + ".content[" + k + "]";
                    String type = text(c.get("type"));
                    if ("text".equals(type)) {
                        if (!first) {
                            sb.append('\n');
                        }
                        sb.append(requireText(c, "text", at));
                        first = false;
                    } else if ("image".equals(type)) {
                        imageUrl(c, at);
                        images.add(c);
                    } else {
                        throw unsupportedBlock(at, type);
                    }
                }
                text = sb.toString();
            } else {
                String at = b.path() + ".content";
                throw invalid(at + ": must be a string or an array of content blocks.", at, "invalid_type");
            }
            // Chat has no error flag on tool results; the prefix is how the model learns the call failed.
            if (r.path("is_error").asBoolean(false) && !text.startsWith("Error: ")) {
                text = "Error: " + text;
            }
            g.writeStartObject();
            g.writeStringField("role", "tool");
            g.writeStringField("tool_call_id", id);
            g.writeStringField("content", text);
            g.writeEndObject();
        }

        private void writeImagePart(String url) throws IOException {
            g.writeStartObject();
            g.writeStringField("type", "image_url");
            g.writeObjectFieldStart("image_url");
            g.writeStringField("url", url);
            g.writeEndObject();
            g.writeEndObject();
        }

        /** base64 source → data URI; url source → the URL. {@code path} null: already validated. */
        private static String imageUrl(JsonNode image, String path) throws TranslationException {
            JsonNode source = image.get("source");
            String at = path == null ? "image" : path + ".source";
            String kind = source == null ? null : text(source.get("type"));
            if ("base64".equals(kind)) {
                return "data:" + requireText(source, "media_type", at) + ";base64," + requireText(source, "data", at);
            }
            if ("url".equals(kind)) {
                return requireText(source, "url", at);
            }
            throw invalid(at + ": image source must be `base64` or `url` for this model's provider.", at,
                    "unsupported_value");
        }

        /** Text concatenated, tool_use → tool_calls, thinking → reasoning_details (when accepted). */
        private void writeAssistantTurn(List<Block> blocks) throws IOException, TranslationException {
            StringBuilder text = new StringBuilder();
            List<Block> calls = new ArrayList<>();
            List<Block> thinking = new ArrayList<>();
            for (Block b : blocks) {
                switch (b.type()) {
                    case "text" -> text.append(requireText(b.node(), "text", b.path()));
                    case "tool_use" -> {
                        requireText(b.node(), "id", b.path());
                        requireText(b.node(), "name", b.path());
                        JsonNode input = b.node().get("input");
                        if (input != null && !input.isNull() && !input.isObject()) {
                            throw invalid(b.path() + ".input: must be an object.", b.path() + ".input", "invalid_type");
                        }
                        calls.add(b);
                    }
                    case "thinking", "redacted_thinking" -> {
                        if (options.reasoningDetailsAccepted()) {
                            requireText(b.node(), "thinking".equals(b.type()) ? "thinking" : "data", b.path());
                            thinking.add(b);
                        }
                    }
                    case "document" -> throw unsupportedBlock(b.path(), b.type());
                    default -> {
                        // Server-tool blocks (server_tool_use, *_tool_result) an Anthropic upstream once produced:
                        // output of that provider, with no chat equivalent; dropped like other unknowns (GD-4).
                    }
                }
            }
            if (text.length() == 0 && calls.isEmpty() && thinking.isEmpty()) {
                return; // nothing left (e.g. only thinking, for an upstream that does not take it back)
            }
            g.writeStartObject();
            g.writeStringField("role", "assistant");
            // Chat wants content null (not "") beside tool calls, and a string otherwise.
            if (text.length() > 0) {
                g.writeStringField("content", text.toString());
            } else if (!calls.isEmpty()) {
                g.writeNullField("content");
            } else {
                g.writeStringField("content", "");
            }
            if (!calls.isEmpty()) {
                g.writeArrayFieldStart("tool_calls");
                for (Block b : calls) {
                    g.writeStartObject();
                    JsonOut.toolCallFields(g, b.node().get("id").textValue(),
                            tools.upstreamName(b.node().get("name").textValue()),
                            JsonOut.arguments(MAPPER, b.node().get("input")));
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
            if (!thinking.isEmpty()) {
                g.writeArrayFieldStart("reasoning_details");
                for (int k = 0; k < thinking.size(); k++) {
                    JsonNode b = thinking.get(k).node();
                    if ("thinking".equals(thinking.get(k).type())) {
                        String signature = text(b.get("signature"));
                        // 8.1: unsigned → a plain text entry
                        JsonOut.reasoningText(g, b.get("thinking").textValue(),
                                signature != null && !signature.isEmpty() ? signature : null, k);
                    } else {
                        JsonOut.reasoningEncrypted(g, b.get("data").textValue(), k);
                    }
                }
                g.writeEndArray();
            }
            g.writeEndObject();
        }

        // ---- parameters -----------------------------------------------------------------------------------

        private void writeLimits() throws IOException, TranslationException {
            JsonNode maxTokens = root.get("max_tokens");
            if (present(maxTokens)) {
                if (!maxTokens.canConvertToExactIntegral()) {
                    throw invalid("max_tokens: must be an integer.", "max_tokens", "invalid_type");
                }
                g.writeFieldName(options.maxCompletionTokensField() ? "max_completion_tokens" : "max_tokens");
                g.writeNumber(maxTokens.bigIntegerValue());
            }
            for (String field : new String[] {"temperature", "top_p"}) {
                JsonNode v = root.get(field);
                if (present(v)) {
                    if (!v.isNumber()) {
                        throw invalid(field + ": must be a number.", field, "invalid_type");
                    }
                    g.writeFieldName(field);
                    g.writeTree(v);
                }
            }
            JsonNode stops = root.get("stop_sequences");
            if (present(stops)) {
                if (!stops.isArray()) {
                    throw invalid("stop_sequences: must be an array of strings.", "stop_sequences", "invalid_type");
                }
                if (!stops.isEmpty()) {
                    g.writeArrayFieldStart("stop");
                    for (int i = 0; i < stops.size() && i < MAX_STOP; i++) { // chat allows 4; the rest dropped
                        if (!stops.get(i).isTextual()) {
                            String at = "stop_sequences[" + i + "]";
                            throw invalid(at + ": must be a string.", at, "invalid_type");
                        }
                        g.writeString(stops.get(i).textValue());
                    }
                    g.writeEndArray();
                }
            }
        }

        /** Function tools; returns whether any was written. */
        private boolean writeTools() throws IOException, TranslationException {
            JsonNode list = root.get("tools");
            if (!present(list)) {
                return false;
            }
            if (!list.isArray()) {
                throw invalid("tools: must be an array.", "tools", "invalid_type");
            }
            if (list.isEmpty()) {
                return false;
            }
            g.writeArrayFieldStart("tools");
            for (int i = 0; i < list.size(); i++) {
                JsonNode t = list.get(i);
                String at = "tools[" + i + "]";
                if (!t.isObject()) {
                    throw invalid(at + ": must be an object.", at, "invalid_type");
                }
                String type = text(t.get("type"));
                if (type != null && !"custom".equals(type)) {
                    throw invalid(at + ".type: server tool `" + type + "` is not supported by this model's provider.",
                            at + ".type", "unsupported_value");
                }
                String name = requireText(t, "name", at);
                g.writeStartObject();
                g.writeStringField("type", "function");
                g.writeObjectFieldStart("function");
                g.writeStringField("name", tools.upstreamName(name));
                JsonNode description = t.get("description");
                if (description != null && description.isTextual()) {
                    g.writeStringField("description", description.textValue());
                }
                JsonNode schema = t.get("input_schema");
                g.writeFieldName("parameters");
                if (present(schema)) {
                    if (!schema.isObject()) {
                        throw invalid(at + ".input_schema: must be an object.", at + ".input_schema", "invalid_type");
                    }
                    g.writeTree(schema);
                } else {
                    g.writeStartObject();
                    g.writeStringField("type", "object");
                    g.writeObjectFieldStart("properties");
                    g.writeEndObject();
                    g.writeEndObject();
                }
                g.writeEndObject();
                g.writeEndObject();
            }
            g.writeEndArray();
            return true;
        }

        /** tool_choice and parallel_tool_calls; only meaningful (and accepted by OpenAI) with tools. */
        private void writeToolChoice(boolean anyTools) throws IOException, TranslationException {
            JsonNode choice = toolChoice(root);
            if (choice == null) {
                return;
            }
            String type = text(choice.get("type"));
            if (type == null) {
                throw invalid("tool_choice.type: field required.", "tool_choice.type", "missing_required_parameter");
            }
            String name = null;
            switch (type) {
                case "auto", "any", "none" -> {
                }
                case "tool" -> name = requireText(choice, "name", "tool_choice");
                default -> throw invalid("tool_choice.type: must be one of `auto`, `any`, `tool`, `none`.",
                        "tool_choice.type", "invalid_value");
            }
            if (!anyTools) {
                return; // OpenAI rejects tool_choice and parallel_tool_calls without tools
            }
            switch (type) {
                case "auto" -> g.writeStringField("tool_choice", "auto");
                case "any" -> g.writeStringField("tool_choice", "required");
                case "none" -> g.writeStringField("tool_choice", "none");
                default -> {
                    g.writeObjectFieldStart("tool_choice");
                    g.writeStringField("type", "function");
                    g.writeObjectFieldStart("function");
                    g.writeStringField("name", tools.upstreamName(name));
                    g.writeEndObject();
                    g.writeEndObject();
                }
            }
            if (choice.path("disable_parallel_tool_use").asBoolean(false)) {
                g.writeBooleanField("parallel_tool_calls", false);
            }
        }

        private void writeUser() throws IOException {
            JsonNode userId = root.path("metadata").get("user_id");
            if (userId != null && userId.isTextual()) {
                g.writeStringField("user", userId.textValue());
            }
        }

        /** GD-15: budget <2048 low, <4096 medium, else high; adaptive: output_config.effort or medium. */
        private void writeReasoningEffort() throws IOException, TranslationException {
            JsonNode thinking = root.get("thinking");
            if (!present(thinking)) {
                return;
            }
            String type = text(thinking.get("type"));
            String effort;
            if ("enabled".equals(type)) {
                JsonNode budget = thinking.get("budget_tokens");
                if (budget == null || !budget.canConvertToExactIntegral()) {
                    throw invalid("thinking.budget_tokens: must be an integer.", "thinking.budget_tokens",
                            "invalid_type");
                }
                long b = budget.asLong();
                effort = b < 2048 ? "low" : b < 4096 ? "medium" : "high";
            } else if ("adaptive".equals(type)) {
                String requested = text(root.path("output_config").get("effort"));
                effort = requested == null ? "medium" : switch (requested) {
                    case "low", "medium", "high" -> requested;
                    case "xhigh", "max" -> "high";
                    default -> "medium";
                };
            } else if ("disabled".equals(type)) {
                return;
            } else {
                throw invalid("thinking.type: must be one of `enabled`, `adaptive`, `disabled`.", "thinking.type",
                        "invalid_value");
            }
            g.writeStringField("reasoning_effort", effort);
        }

        private void writeResponseFormat() throws IOException, TranslationException {
            JsonNode format = root.path("output_config").get("format");
            if (!present(format)) {
                return;
            }
            if (!"json_schema".equals(text(format.get("type"))) || !format.path("schema").isObject()) {
                throw invalid("output_config.format: must be `{\"type\":\"json_schema\",\"schema\":{…}}`.",
                        "output_config.format", "invalid_value");
            }
            g.writeObjectFieldStart("response_format");
            g.writeStringField("type", "json_schema");
            g.writeObjectFieldStart("json_schema");
            g.writeStringField("name", "response");
            g.writeFieldName("schema");
            g.writeTree(format.get("schema"));
            g.writeBooleanField("strict", true);
            g.writeEndObject();
            g.writeEndObject();
        }
    }

    // ---- small helpers ---------------------------------------------------------------------------------------

    /**
     * A messages caller's body (borrowed) as an object tree; a 400 in Anthropic's wording when it is not one JSON
     * object or repeats a key ({@link DuplicateKeys}).
     */
    static JsonNode parse(ByteBuf body) throws TranslationException {
        JsonNode root;
        try (InputStream in = new ByteBufInputStream(body.duplicate())) {
            root = REQUEST_READER.readTree(in);
        } catch (MismatchedInputException e) {
            String duplicate = DuplicateKeys.find(body);
            throw duplicate != null ? new TranslationException(DuplicateKeys.error(duplicate))
                    : invalid("The request body is not valid JSON.", null, "invalid_json");
        } catch (IOException e) {
            throw invalid("The request body is not valid JSON.", null, "invalid_json");
        }
        if (root == null || !root.isObject()) {
            throw invalid("The request body must be a JSON object.", null, "invalid_type");
        }
        return root;
    }

    /**
     * The texts of a system prompt given as blocks (a value that is not a string), in order: anything but an array of
     * text blocks is a 400.
     */
    static List<String> textBlocks(JsonNode content, String path) throws TranslationException {
        if (!content.isArray()) {
            throw invalid(path + ": must be a string or an array of text blocks.", path, "invalid_type");
        }
        List<String> texts = new ArrayList<>(content.size());
        for (int j = 0; j < content.size(); j++) {
            JsonNode b = content.get(j);
            String at = path + "[" + j + "]";
            if (!"text".equals(text(b.get("type")))) {
                throw invalid(at + ".type: only `text` blocks are allowed here.", at + ".type", "invalid_value");
            }
            texts.add(requireText(b, "text", at));
        }
        return texts;
    }

    /** {@code tool_choice} when it was sent: it must be an object. */
    static JsonNode toolChoice(JsonNode root) throws TranslationException {
        JsonNode choice = root.get("tool_choice");
        if (present(choice) && !choice.isObject()) {
            throw invalid("tool_choice: must be an object.", "tool_choice", "invalid_type");
        }
        return present(choice) ? choice : null;
    }

    /** Whether a field was sent: an explicit null is as good as absent. */
    static boolean present(JsonNode node) {
        return node != null && !node.isNull() && !node.isMissingNode();
    }

    private static boolean present(JsonNode parent, String field) {
        return present(parent.get(field));
    }

    private static boolean bool(JsonNode root, String field) throws TranslationException {
        JsonNode v = root.get(field);
        if (!present(v)) {
            return false;
        }
        if (!v.isBoolean()) {
            throw invalid(field + ": must be a boolean.", field, "invalid_type");
        }
        return v.booleanValue();
    }

    /** A string field a messages block must carry, read in Anthropic's wording of the 400 when it does not. */
    static String requireText(JsonNode parent, String field, String path) throws TranslationException {
        JsonNode v = parent.get(field);
        if (v == null || !v.isTextual()) {
            String at = path + "." + field;
            throw invalid(at + (v == null || v.isNull() ? ": field required." : ": must be a string."), at,
                    v == null || v.isNull() ? "missing_required_parameter" : "invalid_type");
        }
        return v.textValue();
    }

    private static TranslationException unsupportedBlock(String path, String type) {
        String what = "document".equals(type) ? "document blocks are" : "content blocks of type `" + type + "` are";
        return invalid(path + ": " + what + " not supported by this model's provider.", path + ".type",
                "unsupported_value");
    }
}
