package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;
import static io.modelgateway.codecs.translate.MessagesRequestToChat.present;
import static io.modelgateway.codecs.translate.MessagesRequestToChat.requireText;
import static io.modelgateway.codecs.translate.TranslationException.invalid;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An Anthropic messages request → a Gemini {@code GenerateContentRequest} (Vertex AI and the Gemini API take the
 * same body; the model goes in the URL), plus the {@link GeminiResponseToMessages} that turns the answer back. Chat
 * requests come here too, after {@link ChatRequestToGemini} put them in the messages form.
 *
 * <p>The mapping:
 * <ul>
 *   <li>{@code system} (and 2026-10-21 {@code system} messages) → {@code systemInstruction}, the texts in order;</li>
 *   <li>{@code messages} → {@code contents}, {@code user} → {@code user}, {@code assistant} → {@code model},
 *       consecutive turns of one role merged; blocks → parts: {@code text}; {@code image} and {@code document}
 *       (base64 → {@code inlineData}, url → {@code fileData}, text → a text part); {@code tool_use} →
 *       {@code functionCall}; {@code tool_result} → {@code functionResponse} named after its call, its text as
 *       {@code response.output} ({@code response.error} when {@code is_error}), its images as inline data after it;
 *       {@code thinking} → its signature onto the next part of the turn as {@code thoughtSignature} (the thought
 *       text is not sent back; see {@link GeminiAnswer}); {@code redacted_thinking} dropped;</li>
 *   <li>{@code tools} → one {@code functionDeclarations} tool, each schema as {@code parametersJsonSchema};
 *       {@code tool_choice} auto / any / tool / none → {@code functionCallingConfig} AUTO / ANY / ANY with
 *       {@code allowedFunctionNames} / NONE;</li>
 *   <li>{@code max_tokens}, {@code temperature}, {@code top_p}, {@code top_k}, {@code stop_sequences} →
 *       {@code generationConfig}; {@code thinking} enabled → {@code thinkingConfig} with its budget and
 *       {@code includeThoughts}; adaptive → {@code includeThoughts}; disabled → the model's default;
 *       {@code output_config.format} (JSON schema) → {@code responseMimeType} + {@code responseJsonSchema}.</li>
 * </ul>
 * Unknown fields are dropped (GD-4); what cannot be honoured (server tools, {@code container}, {@code mcp_servers},
 * {@code context_management}, unknown block types) is a 400 naming the field.
 *
 * <p>Ownership: the body is borrowed (neither read nor released); the returned request's body is new and owned by
 * the caller.
 */
public final class MessagesRequestToGemini {
    private MessagesRequestToGemini() {
    }

    /** What the chat translation decides itself (null fields: none); messages requests use {@link #NONE}. */
    record Extras(boolean keepMaxTokens, JsonNode temperature, JsonNode topP, JsonNode seed, JsonNode presencePenalty,
            JsonNode frequencyPenalty, String responseMimeType, JsonNode responseSchema) {
    }

    static final Extras NONE = new Extras(true, null, null, null, null, null, null, null);

    /**
     * Translates one messages request.
     *
     * @throws TranslationException a 400 for the caller (the field's path in the message and {@code param})
     */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf messagesBody,
            GeminiRequestOptions options) throws TranslationException {
        JsonNode root = MessagesRequestToChat.parse(messagesBody);
        if (options.noTemperature() && present(root.get("temperature"))) {
            throw invalid("temperature: not supported by this model.", "temperature", "unsupported_parameter");
        }
        boolean stream = root.path("stream").asBoolean(false);
        ByteBuf body = write(alloc, root, NONE, messagesBody.readableBytes());
        return new TranslatedRequest(body, stream, new GeminiResponseToMessages(options.upstreamModel()));
    }

    /** The Gemini body of a request in the messages form (a caller's, or a translated chat request). */
    static ByteBuf write(ByteBufAllocator alloc, JsonNode root, Extras extras, int sizeHint)
            throws TranslationException {
        for (String field : new String[] {"container", "mcp_servers", "context_management"}) {
            if (present(root.get(field))) {
                throw invalid(field + ": not supported by this model's provider.", field, "unsupported_parameter");
            }
        }
        try {
            return JsonOut.write(alloc, Math.max(256, sizeHint + 128), MessagesRequestToChat.MAPPER,
                    g -> new Writer(root, extras, g).write());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to a buffer does not fail
        }
    }

    /** Writes one request; validation failures abort with a {@link TranslationException}. */
    private static final class Writer {
        private final JsonNode root;
        private final Extras extras;
        private final JsonGenerator g;
        /** tool_use id → the function's name, for the {@code functionResponse} of its result. */
        private final Map<String, String> callNames = new HashMap<>();
        private final List<String> system = new ArrayList<>();

        Writer(JsonNode root, Extras extras, JsonGenerator g) {
            this.root = root;
            this.extras = extras;
            this.g = g;
        }

        void write() throws IOException, TranslationException {
            systemTexts(root.get("system"), "system");
            g.writeStartObject();
            writeContents();
            if (!system.isEmpty()) {
                g.writeObjectFieldStart("systemInstruction");
                g.writeArrayFieldStart("parts");
                for (String s : system) {
                    g.writeStartObject();
                    g.writeStringField("text", s);
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            writeTools();
            writeGenerationConfig();
            g.writeEndObject();
        }

        // ---- system ---------------------------------------------------------------------------------------

        private void systemTexts(JsonNode content, String path) throws TranslationException {
            if (!present(content)) {
                return;
            }
            if (content.isTextual()) {
                if (!content.textValue().isEmpty()) {
                    system.add(content.textValue());
                }
                return;
            }
            for (String t : MessagesRequestToChat.textBlocks(content, path)) {
                if (!t.isEmpty()) {
                    system.add(t);
                }
            }
        }

        // ---- contents -------------------------------------------------------------------------------------

        private void writeContents() throws IOException, TranslationException {
            JsonNode messages = root.get("messages");
            if (!present(messages)) {
                throw invalid("messages: field required.", "messages", "missing_required_parameter");
            }
            if (!messages.isArray()) {
                throw invalid("messages: must be an array.", "messages", "invalid_type");
            }
            g.writeArrayFieldStart("contents");
            String open = null;
            int written = 0;
            for (int i = 0; i < messages.size(); i++) {
                JsonNode m = messages.get(i);
                String path = "messages[" + i + "]";
                if (!m.isObject()) {
                    throw invalid(path + ": must be an object.", path, "invalid_type");
                }
                String role = text(m.get("role"));
                if ("system".equals(role)) {
                    systemTexts(m.get("content"), path + ".content"); // 5.11: Gemini has one system instruction
                    continue;
                }
                if (!"user".equals(role) && !"assistant".equals(role)) {
                    throw invalid(path + ".role: must be one of `user`, `assistant`, `system`.", path + ".role",
                            "invalid_value");
                }
                String geminiRole = "user".equals(role) ? "user" : "model";
                if (!geminiRole.equals(open)) {
                    if (open != null) {
                        g.writeEndArray();
                        g.writeEndObject();
                    }
                    g.writeStartObject();
                    g.writeStringField("role", geminiRole);
                    g.writeArrayFieldStart("parts");
                    open = geminiRole;
                    written++;
                }
                if ("user".equals(role)) {
                    userParts(m.get("content"), path + ".content");
                } else {
                    modelParts(m.get("content"), path + ".content");
                }
            }
            if (open != null) {
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            if (written == 0) {
                throw invalid("messages: at least one user or assistant message is required.", "messages",
                        "invalid_value");
            }
        }

        private void userParts(JsonNode content, String path) throws IOException, TranslationException {
            if (content != null && content.isTextual()) {
                if (content.textValue().isEmpty()) {
                    throw invalid(path + ": a user message must have non-empty content.", path, "invalid_value");
                }
                textPart(content.textValue(), null);
                return;
            }
            if (content == null || !content.isArray()) {
                throw invalid(path + ": must be a string or an array of content blocks.", path, "invalid_type");
            }
            if (content.isEmpty()) {
                throw invalid(path + ": at least one content block is required.", path, "invalid_value");
            }
            for (int j = 0; j < content.size(); j++) {
                JsonNode b = content.get(j);
                String at = path + "[" + j + "]";
                String type = blockType(b, at);
                switch (type) {
                    case "text" -> textPart(requireText(b, "text", at), null);
                    case "image" -> media(b, at, "image");
                    case "document" -> media(b, at, "document");
                    case "tool_result" -> toolResult(b, at);
                    case "search_result" -> searchResult(b, at);
                    default -> throw unsupportedBlock(at, type);
                }
            }
        }

        /** An assistant turn: text, tool calls, and thinking signatures carried onto the part after them. */
        private void modelParts(JsonNode content, String path) throws IOException, TranslationException {
            if (content != null && content.isTextual()) {
                if (!content.textValue().isEmpty()) {
                    textPart(content.textValue(), null);
                }
                return;
            }
            if (content == null || !content.isArray()) {
                throw invalid(path + ": must be a string or an array of content blocks.", path, "invalid_type");
            }
            String signature = null;
            for (int j = 0; j < content.size(); j++) {
                JsonNode b = content.get(j);
                String at = path + "[" + j + "]";
                String type = blockType(b, at);
                switch (type) {
                    case "thinking" -> {
                        requireText(b, "thinking", at);
                        String s = text(b.get("signature"));
                        if (s != null && !s.isEmpty()) {
                            signature = s;
                        }
                    }
                    case "redacted_thinking" -> {
                        // Anthropic's encrypted thinking means nothing to Gemini
                    }
                    case "text" -> {
                        String t = requireText(b, "text", at);
                        if (!t.isEmpty() || signature != null) {
                            textPart(t, signature);
                            signature = null;
                        }
                    }
                    case "tool_use" -> {
                        String id = requireText(b, "id", at);
                        String name = requireText(b, "name", at);
                        JsonNode input = b.get("input");
                        if (present(input) && !input.isObject()) {
                            throw invalid(at + ".input: must be an object.", at + ".input", "invalid_type");
                        }
                        callNames.put(id, name);
                        g.writeStartObject();
                        g.writeObjectFieldStart("functionCall");
                        g.writeStringField("name", name);
                        g.writeFieldName("args");
                        if (present(input)) {
                            g.writeTree(input);
                        } else {
                            g.writeStartObject();
                            g.writeEndObject();
                        }
                        g.writeEndObject();
                        if (signature != null) {
                            g.writeStringField("thoughtSignature", signature);
                            signature = null;
                        }
                        g.writeEndObject();
                    }
                    default -> {
                        // Server-tool blocks another provider once produced: no Gemini form, dropped (GD-4).
                    }
                }
            }
            if (signature != null) {
                textPart("", signature); // a signature with nothing after it: kept where Gemini puts such ones
            }
        }

        private static String blockType(JsonNode b, String at) throws TranslationException {
            if (!b.isObject() || !b.path("type").isTextual()) {
                throw invalid(at + ": must be a content block with a `type`.", at, "invalid_type");
            }
            return b.get("type").textValue();
        }

        private void textPart(String text, String signature) throws IOException {
            g.writeStartObject();
            g.writeStringField("text", text);
            if (signature != null) {
                g.writeStringField("thoughtSignature", signature);
            }
            g.writeEndObject();
        }

        /** An image or a document: base64 → inline data, url → file data, text (documents) → a text part. */
        private void media(JsonNode b, String at, String what) throws IOException, TranslationException {
            JsonNode source = b.get("source");
            String sat = at + ".source";
            if (source == null || !source.isObject()) {
                throw invalid(sat + ": field required.", sat, "missing_required_parameter");
            }
            String kind = text(source.get("type"));
            if ("base64".equals(kind)) {
                String mediaType = requireText(source, "media_type", sat);
                String data = requireText(source, "data", sat);
                g.writeStartObject();
                g.writeObjectFieldStart("inlineData");
                g.writeStringField("mimeType", mediaType);
                g.writeStringField("data", data);
                g.writeEndObject();
                g.writeEndObject();
            } else if ("url".equals(kind)) {
                String url = requireText(source, "url", sat);
                g.writeStartObject();
                g.writeObjectFieldStart("fileData");
                g.writeStringField("mimeType", "image".equals(what) ? imageType(url) : "application/pdf");
                g.writeStringField("fileUri", url);
                g.writeEndObject();
                g.writeEndObject();
            } else if ("text".equals(kind) && "document".equals(what)) {
                textPart(requireText(source, "data", sat), null);
            } else if ("content".equals(kind) && "document".equals(what) && source.path("content").isArray()) {
                JsonNode blocks = source.get("content");
                for (int k = 0; k < blocks.size(); k++) {
                    JsonNode c = blocks.get(k);
                    String cat = sat + ".content[" + k + "]";
                    if ("text".equals(text(c.get("type")))) {
                        textPart(requireText(c, "text", cat), null);
                    } else if ("image".equals(text(c.get("type")))) {
                        media(c, cat, "image");
                    } else {
                        throw unsupportedBlock(cat, String.valueOf(text(c.get("type"))));
                    }
                }
            } else {
                throw invalid(sat + ".type: `" + kind + "` sources are not supported by this model's provider.",
                        sat + ".type", "unsupported_value");
            }
        }

        /** A search result block's texts, as text parts (Gemini has no such block). */
        private void searchResult(JsonNode b, String at) throws IOException, TranslationException {
            JsonNode content = b.get("content");
            if (content == null || !content.isArray()) {
                throw invalid(at + ".content: must be an array of text blocks.", at + ".content", "invalid_type");
            }
            for (int k = 0; k < content.size(); k++) {
                textPart(requireText(content.get(k), "text", at + ".content[" + k + "]"), null);
            }
        }

        /** A functionResponse for the call it answers; its images follow as inline data. */
        private void toolResult(JsonNode r, String at) throws IOException, TranslationException {
            String id = requireText(r, "tool_use_id", at);
            String name = callNames.get(id);
            if (name == null) {
                throw invalid(at + ".tool_use_id: `" + id + "` answers no tool_use block of an earlier assistant "
                        + "message.", at + ".tool_use_id", "invalid_value");
            }
            JsonNode content = r.get("content");
            StringBuilder sb = new StringBuilder();
            List<JsonNode> images = new ArrayList<>();
            List<String> imagePaths = new ArrayList<>();
            if (content != null && content.isTextual()) {
                sb.append(content.textValue());
            } else if (content != null && content.isArray()) {
                for (int k = 0; k < content.size(); k++) {
                    JsonNode c = content.get(k);
                    String cat = at + ".content[" + k + "]";
                    String type = text(c.get("type"));
                    if ("text".equals(type)) {
                        if (sb.length() > 0) {
                            sb.append('\n');
                        }
                        sb.append(requireText(c, "text", cat));
                    } else if ("image".equals(type)) {
                        images.add(c);
                        imagePaths.add(cat);
                    } else {
                        throw unsupportedBlock(cat, String.valueOf(type));
                    }
                }
            } else if (present(content)) {
                throw invalid(at + ".content: must be a string or an array of content blocks.", at + ".content",
                        "invalid_type");
            }
            boolean error = r.path("is_error").asBoolean(false);
            g.writeStartObject();
            g.writeObjectFieldStart("functionResponse");
            g.writeStringField("name", name);
            g.writeObjectFieldStart("response");
            g.writeStringField(error ? "error" : "output", sb.toString());
            g.writeEndObject();
            g.writeEndObject();
            g.writeEndObject();
            for (int k = 0; k < images.size(); k++) {
                media(images.get(k), imagePaths.get(k), "image");
            }
        }

        // ---- tools ----------------------------------------------------------------------------------------

        private void writeTools() throws IOException, TranslationException {
            JsonNode tools = root.get("tools");
            List<String> names = new ArrayList<>();
            if (present(tools)) {
                if (!tools.isArray()) {
                    throw invalid("tools: must be an array.", "tools", "invalid_type");
                }
                if (!tools.isEmpty()) {
                    g.writeArrayFieldStart("tools");
                    g.writeStartObject();
                    g.writeArrayFieldStart("functionDeclarations");
                    for (int k = 0; k < tools.size(); k++) {
                        names.add(declaration(tools.get(k), "tools[" + k + "]"));
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                    g.writeEndArray();
                }
            }
            JsonNode choice = MessagesRequestToChat.toolChoice(root);
            if (choice == null) {
                return;
            }
            String type = text(choice.get("type"));
            String mode;
            String only = null;
            if ("auto".equals(type)) {
                mode = "AUTO";
            } else if ("any".equals(type)) {
                mode = "ANY";
            } else if ("none".equals(type)) {
                mode = "NONE";
            } else if ("tool".equals(type)) {
                mode = "ANY";
                only = requireText(choice, "name", "tool_choice");
                if (!names.contains(only)) {
                    throw invalid("tool_choice.name: `" + only + "` is not one of the tools.", "tool_choice.name",
                            "invalid_value");
                }
            } else {
                throw invalid("tool_choice.type: must be one of `auto`, `any`, `tool`, `none`.", "tool_choice.type",
                        "invalid_value");
            }
            if (names.isEmpty()) {
                if (!"NONE".equals(mode) && !"AUTO".equals(mode)) {
                    throw invalid("tool_choice: a tool must be called but no `tools` were given.", "tool_choice",
                            "invalid_value");
                }
                return;
            }
            g.writeObjectFieldStart("toolConfig");
            g.writeObjectFieldStart("functionCallingConfig");
            g.writeStringField("mode", mode);
            if (only != null) {
                g.writeArrayFieldStart("allowedFunctionNames");
                g.writeString(only);
                g.writeEndArray();
            }
            g.writeEndObject();
            g.writeEndObject();
        }

        private String declaration(JsonNode tool, String at) throws IOException, TranslationException {
            if (!tool.isObject()) {
                throw invalid(at + ": must be an object.", at, "invalid_type");
            }
            String type = text(tool.get("type"));
            if (type != null && !"custom".equals(type)) {
                throw invalid(at + ".type: server tools (`" + type + "`) are not supported by this model's provider.",
                        at + ".type", "unsupported_value");
            }
            String name = requireText(tool, "name", at);
            JsonNode schema = tool.get("input_schema");
            if (present(schema) && !schema.isObject()) {
                throw invalid(at + ".input_schema: must be an object.", at + ".input_schema", "invalid_type");
            }
            g.writeStartObject();
            g.writeStringField("name", name);
            String description = text(tool.get("description"));
            if (description != null && !description.isEmpty()) {
                g.writeStringField("description", description);
            }
            if (present(schema)) {
                g.writeFieldName("parametersJsonSchema");
                g.writeTree(schema);
            }
            g.writeEndObject();
            return name;
        }

        // ---- generation config ---------------------------------------------------------------------------

        private void writeGenerationConfig() throws IOException, TranslationException {
            JsonNode maxTokens = extras.keepMaxTokens() ? root.get("max_tokens") : null;
            JsonNode temperature = extras.temperature() != null ? extras.temperature() : root.get("temperature");
            JsonNode topP = extras.topP() != null ? extras.topP() : root.get("top_p");
            JsonNode topK = root.get("top_k");
            JsonNode stop = root.get("stop_sequences");
            JsonNode thinking = root.get("thinking");
            String mimeType = extras.responseMimeType();
            JsonNode schema = extras.responseSchema();
            JsonNode format = root.path("output_config").get("format");
            if (present(format)) {
                if (!"json_schema".equals(text(format.get("type"))) || !format.path("schema").isObject()) {
                    throw invalid("output_config.format: must be `{\"type\":\"json_schema\",\"schema\":{…}}`.",
                            "output_config.format", "invalid_value");
                }
                mimeType = "application/json";
                schema = format.get("schema");
            }
            g.writeObjectFieldStart("generationConfig");
            if (present(maxTokens)) {
                if (!maxTokens.canConvertToInt() || maxTokens.intValue() < 1) {
                    throw invalid("max_tokens: must be a positive integer.", "max_tokens", "invalid_value");
                }
                g.writeNumberField("maxOutputTokens", maxTokens.intValue());
            }
            number("temperature", temperature, "temperature");
            number("topP", topP, "top_p");
            if (present(topK)) {
                if (!topK.canConvertToInt() || topK.intValue() < 0) {
                    throw invalid("top_k: must be a non-negative integer.", "top_k", "invalid_value");
                }
                g.writeNumberField("topK", topK.intValue());
            }
            if (present(stop)) {
                if (!stop.isArray()) {
                    throw invalid("stop_sequences: must be an array of strings.", "stop_sequences", "invalid_type");
                }
                g.writeArrayFieldStart("stopSequences");
                for (int k = 0; k < stop.size(); k++) {
                    if (!stop.get(k).isTextual()) {
                        throw invalid("stop_sequences[" + k + "]: must be a string.", "stop_sequences[" + k + "]",
                                "invalid_type");
                    }
                    g.writeString(stop.get(k).textValue());
                }
                g.writeEndArray();
            }
            number("seed", extras.seed(), "seed");
            number("presencePenalty", extras.presencePenalty(), "presence_penalty");
            number("frequencyPenalty", extras.frequencyPenalty(), "frequency_penalty");
            if (mimeType != null) {
                g.writeStringField("responseMimeType", mimeType);
            }
            if (schema != null) {
                g.writeFieldName("responseJsonSchema");
                g.writeTree(schema);
            }
            thinkingConfig(thinking);
            g.writeEndObject();
        }

        private void number(String geminiName, JsonNode value, String path) throws IOException, TranslationException {
            if (!present(value)) {
                return;
            }
            if (!value.isNumber()) {
                throw invalid(path + ": must be a number.", path, "invalid_type");
            }
            g.writeFieldName(geminiName);
            g.writeTree(value);
        }

        private void thinkingConfig(JsonNode thinking) throws IOException, TranslationException {
            if (!present(thinking)) {
                return;
            }
            if (!thinking.isObject()) {
                throw invalid("thinking: must be an object.", "thinking", "invalid_type");
            }
            String type = String.valueOf(text(thinking.get("type"))).toLowerCase(Locale.ROOT);
            switch (type) {
                case "enabled" -> {
                    JsonNode budget = thinking.get("budget_tokens");
                    if (budget == null || !budget.canConvertToInt() || budget.intValue() < 0) {
                        throw invalid("thinking.budget_tokens: must be a non-negative integer.",
                                "thinking.budget_tokens", "invalid_value");
                    }
                    g.writeObjectFieldStart("thinkingConfig");
                    g.writeNumberField("thinkingBudget", budget.intValue());
                    g.writeBooleanField("includeThoughts", true);
                    g.writeEndObject();
                }
                case "adaptive" -> {
                    g.writeObjectFieldStart("thinkingConfig");
                    g.writeBooleanField("includeThoughts", true);
                    g.writeEndObject();
                }
                case "disabled" -> {
                    // the model's default: some Gemini models cannot stop thinking, and refuse a budget of 0
                }
                default -> throw invalid("thinking.type: must be one of `enabled`, `adaptive`, `disabled`.",
                        "thinking.type", "invalid_value");
            }
        }
    }

    /** The media type of an image URL, by its extension (Gemini wants one with every file URI). */
    static String imageType(String url) {
        String path = url.toLowerCase(Locale.ROOT);
        int q = path.indexOf('?');
        if (q >= 0) {
            path = path.substring(0, q);
        }
        if (path.endsWith(".png")) {
            return "image/png";
        }
        if (path.endsWith(".gif")) {
            return "image/gif";
        }
        if (path.endsWith(".webp")) {
            return "image/webp";
        }
        return "image/jpeg";
    }

    private static TranslationException unsupportedBlock(String path, String type) {
        return invalid(path + ": content blocks of type `" + type + "` are not supported by this model's provider.",
                path + ".type", "unsupported_value");
    }
}
