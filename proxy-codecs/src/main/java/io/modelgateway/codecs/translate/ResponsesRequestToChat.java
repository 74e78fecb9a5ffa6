package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.ChatRequestToMessages.invalidType;
import static io.modelgateway.codecs.translate.ChatRequestToMessages.missing;
import static io.modelgateway.codecs.translate.ChatRequestToMessages.requireObject;
import static io.modelgateway.codecs.translate.TranslationException.invalid;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.json.DuplicateKeys;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * Contract 12.3: an OpenAI Responses API request ({@code POST /responses}) → the chat-completions request for an
 * upstream that has no Responses API, and the translator of its answer ({@link ChatResponseToResponses},
 * {@link ChatStreamToResponses}). The same reading also feeds {@link ResponsesRequestToMessages}, which hands the chat
 * request on to {@link ChatRequestToMessages}: one reading of the Responses request, whichever the upstream.
 *
 * <p>Stateless use only: {@code input} carries the whole conversation. {@code previous_response_id},
 * {@code conversation}, {@code prompt}, {@code background} and item references need responses the gateway does not
 * keep: 400 (GD-30). Hosted tools (web search, file search, code interpreter, MCP, …) cannot run on a chat upstream:
 * 400. Fields without a chat equivalent are dropped (GD-4).
 *
 * <p>Translation is not the pass-through hot path: the body is read into a tree, the output written compact into a
 * new buffer. The caller's body is borrowed and left untouched; the returned body belongs to the caller.
 */
public final class ResponsesRequestToChat {
    /**
     * Exact numbers (schemas and arguments pass through unchanged), no trailing data, strings as long as a body may
     * be (a base64 image), and characters outside the BMP written as UTF-8.
     */
    static final ObjectMapper JSON = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
                    .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                    .build())
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
            .build();
    /** Reads callers' bodies: a key repeated in any object fails the read (then named by {@link DuplicateKeys}). */
    static final ObjectReader REQUEST_READER = JSON.reader().with(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    private static final JsonNodeFactory NODES = JSON.getNodeFactory();

    private ResponsesRequestToChat() {
    }

    /** Translates one Responses request for a chat-completions upstream. */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf body, ResponsesRequestToChatOptions options)
            throws TranslationException {
        return translate(alloc, body, options, Ids.withPrefix("resp_"), System.currentTimeMillis() / 1000);
    }

    /** As above with a given response id and creation time (seconds), which tests fix. */
    static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf body, ResponsesRequestToChatOptions options,
            String responseId, long createdAt) throws TranslationException {
        Chat chat = toChat(parse(body), options.upstreamModel(), options.maxCompletionTokensField(),
                options.reasoningDetailsAccepted(), options.noTemperature());
        ByteBuf out = ChatRequestToMessages.write(alloc, chat.body);
        ResponsesOutput.Head head = new ResponsesOutput.Head(responseId, createdAt, options.upstreamModel(), chat.echo);
        return new TranslatedRequest(out, chat.stream, new ChatResponseToResponses(head, options.maxAnswerChars()));
    }

    /** The caller's body as an object tree; 400 when it is not one JSON object or repeats a key. */
    static ObjectNode parse(ByteBuf body) throws TranslationException {
        return ChatRequestToMessages.parse(REQUEST_READER, body);
    }

    /**
     * A Responses request re-expressed as a chat request.
     *
     * @param body    the chat request
     * @param stream  whether it streams
     * @param echo    the request settings the response object repeats (12.6)
     * @param origins for each chat message, the Responses field it came from ({@code instructions}, {@code input[3]}),
     *                so that an error found in the chat request can name the caller's field
     */
    record Chat(ObjectNode body, boolean stream, ObjectNode echo, List<String> origins) {
    }

    /**
     * Reads the Responses request {@code in} into a chat request.
     *
     * @param upstreamModel    written as {@code model}
     * @param maxCompletion    the cap goes as {@code max_completion_tokens} (else {@code max_tokens})
     * @param reasoningDetails reasoning items go back as {@code reasoning_details} (else they are dropped)
     * @param noTemperature    {@code temperature} is dropped (GD-19)
     */
    static Chat toChat(ObjectNode in, String upstreamModel, boolean maxCompletion, boolean reasoningDetails,
            boolean noTemperature) throws TranslationException {
        Reader r = new Reader(in, reasoningDetails);
        return r.run(upstreamModel, maxCompletion, noTemperature);
    }

    /** One request's reading. */
    private static final class Reader {
        private final ObjectNode in;
        private final boolean reasoningDetails;
        private final ArrayNode messages = NODES.arrayNode();
        private final List<String> origins = new ArrayList<>();
        /** The assistant turn being gathered (consecutive assistant items: text, refusal, calls, reasoning). */
        private final StringBuilder assistantText = new StringBuilder();
        private final StringBuilder assistantRefusal = new StringBuilder();
        private ArrayNode toolCalls;
        private ArrayNode details;
        private boolean assistantOpen;
        private String assistantOrigin;

        Reader(ObjectNode in, boolean reasoningDetails) {
            this.in = in;
            this.reasoningDetails = reasoningDetails;
        }

        Chat run(String upstreamModel, boolean maxCompletion, boolean noTemperature) throws TranslationException {
            rejectStateful();
            ObjectNode out = NODES.objectNode();
            out.put("model", upstreamModel);
            readMessages();
            out.set("messages", messages);
            JsonNode max = field(in, "max_output_tokens");
            if (max != null) {
                if (!max.canConvertToExactIntegral() || max.bigIntegerValue().signum() <= 0) {
                    throw invalid("Invalid 'max_output_tokens': expected an integer of at least 1.",
                            "max_output_tokens", "invalid_value");
                }
                out.set(maxCompletion ? "max_completion_tokens" : "max_tokens", max);
            }
            for (String name : new String[] {"temperature", "top_p"}) {
                JsonNode v = field(in, name);
                if (v != null) {
                    if (!v.isNumber()) {
                        throw invalidType(name, "a number");
                    }
                    if (!(noTemperature && name.equals("temperature"))) {
                        out.set(name, v);
                    }
                }
            }
            boolean tools = tools(out);
            if (tools) {
                toolChoice(out);
                JsonNode parallel = field(in, "parallel_tool_calls");
                if (parallel != null) {
                    if (!parallel.isBoolean()) {
                        throw invalidType("parallel_tool_calls", "a boolean");
                    }
                    out.set("parallel_tool_calls", parallel);
                }
            } else if (field(in, "tool_choice") != null) {
                toolChoiceWithoutTools();
            }
            reasoning(out);
            text(out);
            for (String name : new String[] {"user", "safety_identifier", "prompt_cache_key", "service_tier"}) {
                JsonNode v = field(in, name);
                if (v != null) {
                    if (!v.isTextual()) {
                        throw invalidType(name, "a string");
                    }
                    out.set(name, v);
                }
            }
            boolean stream = bool(in, "stream", "stream");
            if (stream) {
                out.put("stream", true);
                out.putObject("stream_options").put("include_usage", true); // usage is needed at the end (12.5)
            }
            return new Chat(out, stream, echo(), origins);
        }

        /** GD-30: what only a provider that keeps responses can do. */
        private void rejectStateful() throws TranslationException {
            JsonNode previous = field(in, "previous_response_id");
            if (previous != null) {
                throw invalid("previous_response_id: this model's provider keeps no responses; send the whole "
                        + "conversation in 'input' (with 'store': false).", "previous_response_id", "unsupported_parameter");
            }
            for (String name : new String[] {"conversation", "prompt"}) {
                if (field(in, name) != null) {
                    throw invalid(name + ": this model's provider keeps no conversations or stored prompts; send the "
                            + "whole conversation in 'input'.", name, "unsupported_parameter");
                }
            }
            JsonNode background = field(in, "background");
            if (background != null && background.asBoolean(false)) {
                throw invalid("background: background responses are not supported with this model's provider.",
                        "background", "unsupported_value");
            }
        }

        // ---- input ----------------------------------------------------------------------------------------

        private void readMessages() throws TranslationException {
            JsonNode instructions = field(in, "instructions");
            if (instructions != null) {
                if (!instructions.isTextual()) {
                    throw invalidType("instructions", "a string");
                }
                if (!instructions.textValue().isEmpty()) {
                    message("system", instructions, "instructions");
                }
            }
            JsonNode input = field(in, "input");
            if (input == null) {
                throw invalid("Missing required parameter: 'input'.", "input", "missing_required_parameter");
            }
            if (input.isTextual()) {
                message("user", input, "input");
                return;
            }
            if (!input.isArray()) {
                throw invalidType("input", "a string or an array of input items");
            }
            for (int i = 0; i < input.size(); i++) {
                item(input.get(i), "input[" + i + "]");
            }
            flushAssistant();
        }

        private void item(JsonNode item, String path) throws TranslationException {
            requireObject(item, path);
            String type = string(item, "type", path + ".type");
            if (type == null) {
                if (field(item, "role") == null) {
                    throw missing(path + ".type");
                }
                type = "message";
            }
            switch (type) {
                case "message" -> messageItem(item, path);
                case "function_call" -> functionCall(item, path);
                case "function_call_output" -> functionCallOutput(item, path);
                case "reasoning" -> reasoningItem(item, path);
                case "item_reference" -> throw invalid("Invalid '" + path + "': item references need stored "
                        + "responses, which this model's provider does not keep; send the items themselves.",
                        path + ".type", "unsupported_value");
                default -> throw invalid("Invalid '" + path + ".type': input items of type '" + type + "' are not "
                        + "supported with this model's provider (supported: message, function_call, "
                        + "function_call_output, reasoning).", path + ".type", "unsupported_value");
            }
        }

        private void messageItem(JsonNode item, String path) throws TranslationException {
            String role = string(item, "role", path + ".role");
            if (role == null) {
                throw missing(path + ".role");
            }
            JsonNode content = field(item, "content");
            if (content == null) {
                throw missing(path + ".content");
            }
            switch (role) {
                case "user" -> {
                    flushAssistant();
                    message("user", userContent(content, path + ".content"), path);
                }
                case "system", "developer" -> {
                    flushAssistant();
                    message("system", systemContent(content, path + ".content"), path);
                }
                case "assistant" -> assistantContent(content, path);
                default -> throw invalid("Invalid value for '" + path + ".role': '" + role + "'. Supported values "
                        + "are: 'user', 'assistant', 'system' and 'developer'.", path + ".role", "invalid_value");
            }
        }

        private void message(String role, JsonNode content, String origin) {
            ObjectNode m = messages.addObject();
            m.put("role", role);
            m.set("content", content);
            origins.add(origin);
        }

        /** A string as it is; parts: input_text → text, input_image → image_url; files and audio: 400. */
        private static JsonNode userContent(JsonNode content, String path) throws TranslationException {
            if (content.isTextual()) {
                return content;
            }
            if (!content.isArray()) {
                throw invalidType(path, "a string or an array of content parts");
            }
            ArrayNode parts = NODES.arrayNode();
            for (int j = 0; j < content.size(); j++) {
                JsonNode part = content.get(j);
                String at = path + "[" + j + "]";
                requireObject(part, at);
                String type = string(part, "type", at + ".type");
                if (type == null) {
                    throw missing(at + ".type");
                }
                switch (type) {
                    case "input_text", "output_text" -> parts.addObject().put("type", "text")
                            .put("text", requireString(part, "text", at));
                    case "input_image" -> {
                        String url = string(part, "image_url", at + ".image_url");
                        if (url == null) {
                            throw invalid("Invalid '" + at + "': images by 'file_id' are not available through this "
                                    + "model's provider; send 'image_url' (an http(s) URL or a data URI).",
                                    at + ".file_id", "unsupported_value");
                        }
                        ObjectNode image = parts.addObject().put("type", "image_url").putObject("image_url");
                        image.put("url", url);
                        String detail = string(part, "detail", at + ".detail");
                        if (detail != null && !detail.equals("original")) {
                            image.put("detail", detail);
                        }
                    }
                    case "input_file", "input_audio" -> throw invalid("Invalid '" + at + ".type': '" + type
                            + "' content is not supported with this model's provider.", at + ".type",
                            "unsupported_value");
                    default -> throw invalid("Invalid value for '" + at + ".type': '" + type + "'. Supported values "
                            + "are: 'input_text', 'input_image', 'input_file'.", at + ".type", "invalid_value");
                }
            }
            return parts;
        }

        /** System and developer messages: a string, or text parts joined into one. */
        private static JsonNode systemContent(JsonNode content, String path) throws TranslationException {
            if (content.isTextual()) {
                return content;
            }
            return NODES.textNode(texts(content, path, "\n\n"));
        }

        /** The text of text parts ({@code input_text}, {@code output_text}, {@code text}); any other part: 400. */
        private static String texts(JsonNode content, String path, String separator) throws TranslationException {
            if (!content.isArray()) {
                throw invalidType(path, "a string or an array of text parts");
            }
            StringBuilder sb = new StringBuilder();
            for (int j = 0; j < content.size(); j++) {
                JsonNode part = content.get(j);
                String at = path + "[" + j + "]";
                requireObject(part, at);
                String type = string(part, "type", at + ".type");
                if (!"input_text".equals(type) && !"output_text".equals(type) && !"text".equals(type)) {
                    throw invalid("Invalid '" + at + ".type': only text parts are allowed here (got '" + type + "').",
                            at + ".type", "unsupported_value");
                }
                if (j > 0) {
                    sb.append(separator);
                }
                sb.append(requireString(part, "text", at));
            }
            return sb.toString();
        }

        /** An assistant message joins the assistant turn: its text parts, its refusals. */
        private void assistantContent(JsonNode content, String path) throws TranslationException {
            openAssistant(path);
            if (content.isTextual()) {
                assistantText.append(content.textValue());
                return;
            }
            if (!content.isArray()) {
                throw invalidType(path + ".content", "a string or an array of content parts");
            }
            for (int j = 0; j < content.size(); j++) {
                JsonNode part = content.get(j);
                String at = path + ".content[" + j + "]";
                requireObject(part, at);
                String type = string(part, "type", at + ".type");
                if ("refusal".equals(type)) {
                    assistantRefusal.append(requireString(part, "refusal", at));
                } else if ("output_text".equals(type) || "input_text".equals(type) || "text".equals(type)) {
                    assistantText.append(requireString(part, "text", at));
                } else {
                    throw invalid("Invalid '" + at + ".type': assistant content is 'output_text' or 'refusal' (got '"
                            + type + "').", at + ".type", "invalid_value");
                }
            }
        }

        /** A function call the model made: a tool call of the assistant turn. */
        private void functionCall(JsonNode item, String path) throws TranslationException {
            openAssistant(path);
            String callId = requireString(item, "call_id", path);
            String name = requireString(item, "name", path);
            JsonNode args = field(item, "arguments");
            String arguments;
            if (args == null) {
                arguments = "{}";
            } else if (args.isTextual()) {
                arguments = args.textValue();
            } else {
                throw invalidType(path + ".arguments", "a string");
            }
            if (toolCalls == null) {
                toolCalls = NODES.arrayNode();
            }
            ObjectNode call = toolCalls.addObject();
            call.put("id", callId).put("type", "function");
            call.putObject("function").put("name", name).put("arguments", arguments);
        }

        /** The result of a function call: a tool message (text; parts joined by a line break). */
        private void functionCallOutput(JsonNode item, String path) throws TranslationException {
            flushAssistant();
            String callId = requireString(item, "call_id", path);
            JsonNode output = field(item, "output");
            String text;
            if (output == null) {
                throw missing(path + ".output");
            } else if (output.isTextual()) {
                text = output.textValue();
            } else {
                text = texts(output, path + ".output", "\n");
            }
            ObjectNode m = messages.addObject();
            m.put("role", "tool").put("tool_call_id", callId).put("content", text);
            origins.add(path);
        }

        /**
         * A reasoning item sent back (GD-29): its summary (or reasoning text) and {@code encrypted_content} become a
         * {@code reasoning_details} entry of the assistant turn — {@code mgw1:thinking:} a signed text entry,
         * {@code mgw1:redacted:} an encrypted one, none an unsigned text entry; any other {@code encrypted_content}
         * (another provider's) is dropped with its item. Dropped whole when the upstream takes no reasoning back.
         */
        private void reasoningItem(JsonNode item, String path) throws TranslationException {
            openAssistant(path);
            StringBuilder text = new StringBuilder();
            JsonNode content = field(item, "content");
            if (content != null) {
                text.append(texts(reasoningTextParts(content, path + ".content"), path + ".content", ""));
            }
            JsonNode summary = field(item, "summary");
            if (text.length() == 0 && summary != null) {
                text.append(texts(reasoningTextParts(summary, path + ".summary"), path + ".summary", ""));
            }
            String encrypted = string(item, "encrypted_content", path + ".encrypted_content");
            if (!reasoningDetails) {
                return;
            }
            ObjectNode detail;
            if (encrypted == null || encrypted.isEmpty()) {
                if (text.length() == 0) {
                    return;
                }
                detail = NODES.objectNode().put("type", "reasoning.text").put("text", text.toString());
            } else if (encrypted.startsWith(ResponsesOutput.THINKING_PREFIX)) {
                detail = NODES.objectNode().put("type", "reasoning.text").put("text", text.toString())
                        .put("signature", encrypted.substring(ResponsesOutput.THINKING_PREFIX.length()));
            } else if (encrypted.startsWith(ResponsesOutput.REDACTED_PREFIX)) {
                detail = NODES.objectNode().put("type", "reasoning.encrypted")
                        .put("data", encrypted.substring(ResponsesOutput.REDACTED_PREFIX.length()));
            } else {
                return; // another provider's reasoning: meaningless here
            }
            if (details == null) {
                details = NODES.arrayNode();
            }
            detail.put("index", details.size());
            details.add(detail);
        }

        /** summary_text / reasoning_text parts, as text parts {@link #texts} reads. */
        private static JsonNode reasoningTextParts(JsonNode parts, String path) throws TranslationException {
            if (!parts.isArray()) {
                throw invalidType(path, "an array");
            }
            ArrayNode out = NODES.arrayNode();
            for (int k = 0; k < parts.size(); k++) {
                JsonNode p = parts.get(k);
                String at = path + "[" + k + "]";
                requireObject(p, at);
                out.addObject().put("type", "text").put("text", requireString(p, "text", at));
            }
            return out;
        }

        private void openAssistant(String origin) {
            if (!assistantOpen) {
                assistantOpen = true;
                assistantOrigin = origin;
            }
        }

        /** The gathered assistant turn as one chat message; nothing when it holds nothing. */
        private void flushAssistant() {
            if (!assistantOpen) {
                return;
            }
            assistantOpen = false;
            boolean calls = toolCalls != null && !toolCalls.isEmpty();
            boolean hasDetails = details != null && !details.isEmpty();
            if (assistantText.length() > 0 || assistantRefusal.length() > 0 || calls || hasDetails) {
                ObjectNode m = messages.addObject();
                m.put("role", "assistant");
                if (assistantText.length() > 0) {
                    m.put("content", assistantText.toString());
                } else if (calls) {
                    m.putNull("content");
                } else {
                    m.put("content", "");
                }
                if (assistantRefusal.length() > 0) {
                    m.put("refusal", assistantRefusal.toString());
                }
                if (calls) {
                    m.set("tool_calls", toolCalls);
                }
                if (hasDetails) {
                    m.set("reasoning_details", details);
                }
                origins.add(assistantOrigin);
            }
            assistantText.setLength(0);
            assistantRefusal.setLength(0);
            toolCalls = null;
            details = null;
        }

        // ---- tools ----------------------------------------------------------------------------------------

        /** Function tools → chat tools; returns whether any. Hosted tools cannot run here: 400. */
        private boolean tools(ObjectNode out) throws TranslationException {
            JsonNode list = field(in, "tools");
            if (list == null) {
                return false;
            }
            if (!list.isArray()) {
                throw invalidType("tools", "an array");
            }
            if (list.isEmpty()) {
                return false;
            }
            ArrayNode tools = out.putArray("tools");
            for (int i = 0; i < list.size(); i++) {
                JsonNode t = list.get(i);
                String at = "tools[" + i + "]";
                requireObject(t, at);
                String type = string(t, "type", at + ".type");
                if (!"function".equals(type)) {
                    throw invalid("Invalid '" + at + ".type': '" + type + "' tools are not supported with this model's "
                            + "provider; only 'function' tools are.", at + ".type", "unsupported_value");
                }
                ObjectNode fn = tools.addObject().put("type", "function").putObject("function");
                fn.put("name", requireString(t, "name", at));
                String description = string(t, "description", at + ".description");
                if (description != null) {
                    fn.put("description", description);
                }
                JsonNode parameters = field(t, "parameters");
                if (parameters != null) {
                    if (!parameters.isObject()) {
                        throw invalidType(at + ".parameters", "an object");
                    }
                    fn.set("parameters", parameters);
                }
                JsonNode strict = field(t, "strict");
                if (strict != null) {
                    if (!strict.isBoolean()) {
                        throw invalidType(at + ".strict", "a boolean");
                    }
                    fn.set("strict", strict);
                }
            }
            return true;
        }

        /** none / auto / required as they are; a named function, or allowed_tools, in chat's form. */
        private void toolChoice(ObjectNode out) throws TranslationException {
            JsonNode tc = field(in, "tool_choice");
            if (tc == null) {
                return;
            }
            if (tc.isTextual()) {
                String v = tc.textValue();
                if (!v.equals("none") && !v.equals("auto") && !v.equals("required")) {
                    throw invalid("Invalid value for 'tool_choice': '" + v + "'. Supported values are: 'none', 'auto' "
                            + "and 'required'.", "tool_choice", "invalid_value");
                }
                out.set("tool_choice", tc);
                return;
            }
            requireObject(tc, "tool_choice");
            String type = string(tc, "type", "tool_choice.type");
            if ("function".equals(type)) {
                ObjectNode choice = out.putObject("tool_choice").put("type", "function");
                choice.putObject("function").put("name", requireString(tc, "name", "tool_choice"));
            } else if ("allowed_tools".equals(type)) {
                String mode = string(tc, "mode", "tool_choice.mode");
                JsonNode list = field(tc, "tools");
                if (list == null || !list.isArray()) {
                    throw invalidType("tool_choice.tools", "an array");
                }
                ObjectNode allowed = out.putObject("tool_choice").put("type", "allowed_tools")
                        .putObject("allowed_tools");
                allowed.put("mode", mode == null ? "auto" : mode);
                ArrayNode refs = allowed.putArray("tools");
                for (int i = 0; i < list.size(); i++) {
                    JsonNode ref = list.get(i);
                    String at = "tool_choice.tools[" + i + "]";
                    requireObject(ref, at);
                    if (!"function".equals(string(ref, "type", at + ".type"))) {
                        throw invalid("Invalid '" + at + ".type': only 'function' tools are supported with this "
                                + "model's provider.", at + ".type", "unsupported_value");
                    }
                    refs.addObject().put("type", "function").putObject("function")
                            .put("name", requireString(ref, "name", at));
                }
            } else {
                throw invalid("Invalid value for 'tool_choice.type': '" + type + "' is not supported with this "
                        + "model's provider (supported: 'function', 'allowed_tools').", "tool_choice.type",
                        "unsupported_value");
            }
        }

        /** Without tools a forced choice cannot be met (400); none and auto mean nothing. */
        private void toolChoiceWithoutTools() throws TranslationException {
            JsonNode tc = field(in, "tool_choice");
            if (tc.isTextual() && (tc.textValue().equals("none") || tc.textValue().equals("auto"))) {
                return;
            }
            throw invalid("Invalid value for 'tool_choice': a tool must be called but no 'tools' were given.",
                    "tool_choice", "invalid_value");
        }

        // ---- settings -------------------------------------------------------------------------------------

        /** {@code reasoning.effort} → {@code reasoning_effort}; the summary setting has no chat form. */
        private void reasoning(ObjectNode out) throws TranslationException {
            JsonNode reasoning = field(in, "reasoning");
            if (reasoning == null) {
                return;
            }
            requireObject(reasoning, "reasoning");
            String effort = string(reasoning, "effort", "reasoning.effort");
            if (effort != null) {
                out.put("reasoning_effort", effort);
            }
        }

        /** {@code text.format} → {@code response_format}; {@code text.verbosity} → {@code verbosity}. */
        private void text(ObjectNode out) throws TranslationException {
            JsonNode text = field(in, "text");
            if (text == null) {
                return;
            }
            requireObject(text, "text");
            JsonNode format = field(text, "format");
            if (format != null) {
                requireObject(format, "text.format");
                String type = string(format, "type", "text.format.type");
                if (type == null) {
                    throw missing("text.format.type");
                }
                switch (type) {
                    case "text" -> {
                    }
                    case "json_object" -> out.putObject("response_format").put("type", "json_object");
                    case "json_schema" -> {
                        JsonNode schema = field(format, "schema");
                        if (schema == null) {
                            throw missing("text.format.schema");
                        }
                        if (!schema.isObject()) {
                            throw invalidType("text.format.schema", "an object");
                        }
                        ObjectNode js = out.putObject("response_format").put("type", "json_schema")
                                .putObject("json_schema");
                        String name = string(format, "name", "text.format.name");
                        js.put("name", name == null ? "response" : name);
                        String description = string(format, "description", "text.format.description");
                        if (description != null) {
                            js.put("description", description);
                        }
                        js.set("schema", schema);
                        JsonNode strict = field(format, "strict");
                        if (strict != null) {
                            if (!strict.isBoolean()) {
                                throw invalidType("text.format.strict", "a boolean");
                            }
                            js.set("strict", strict);
                        }
                    }
                    default -> throw invalid("Invalid value for 'text.format.type': '" + type + "'. Supported "
                            + "values are: 'text', 'json_object' and 'json_schema'.", "text.format.type",
                            "invalid_value");
                }
            }
            String verbosity = string(text, "verbosity", "text.verbosity");
            if (verbosity != null) {
                out.put("verbosity", verbosity);
            }
        }

        /** Contract 12.6: the request settings a response object repeats, with the API's defaults filled in. */
        private ObjectNode echo() {
            ObjectNode echo = NODES.objectNode();
            copy(echo, "instructions");
            copy(echo, "max_output_tokens");
            JsonNode parallel = field(in, "parallel_tool_calls");
            echo.set("parallel_tool_calls", parallel != null ? parallel : NODES.booleanNode(true));
            JsonNode reasoning = field(in, "reasoning");
            ObjectNode r = echo.putObject("reasoning");
            r.set("effort", reasoning == null ? NODES.nullNode() : reasoning.path("effort").isTextual()
                    ? reasoning.get("effort") : NODES.nullNode());
            r.set("summary", reasoning == null ? NODES.nullNode() : reasoning.path("summary").isTextual()
                    ? reasoning.get("summary") : NODES.nullNode());
            copy(echo, "temperature");
            JsonNode text = field(in, "text");
            ObjectNode t = echo.putObject("text");
            JsonNode format = text == null ? null : field(text, "format");
            if (format != null) {
                t.set("format", format);
            } else {
                t.putObject("format").put("type", "text");
            }
            if (text != null && field(text, "verbosity") != null) {
                t.set("verbosity", text.get("verbosity"));
            }
            JsonNode choice = field(in, "tool_choice");
            echo.set("tool_choice", choice != null ? choice : NODES.textNode("auto"));
            JsonNode tools = field(in, "tools");
            echo.set("tools", tools != null ? tools : NODES.arrayNode());
            copy(echo, "top_p");
            copy(echo, "user");
            JsonNode metadata = field(in, "metadata");
            echo.set("metadata", metadata != null ? metadata : NODES.objectNode());
            return echo;
        }

        private void copy(ObjectNode echo, String name) {
            JsonNode v = field(in, name);
            if (v != null) {
                echo.set(name, v);
            }
        }
    }

    // ---- small helpers ------------------------------------------------------------------------------------------

    /** A member, null when absent or JSON null (1.3). */
    static JsonNode field(JsonNode o, String name) {
        JsonNode v = o.get(name);
        return v == null || v.isNull() ? null : v;
    }

    private static boolean bool(JsonNode o, String name, String path) throws TranslationException {
        JsonNode v = field(o, name);
        if (v == null) {
            return false;
        }
        if (!v.isBoolean()) {
            throw invalidType(path, "a boolean");
        }
        return v.booleanValue();
    }

    private static String string(JsonNode o, String name, String path) throws TranslationException {
        JsonNode v = field(o, name);
        if (v == null) {
            return null;
        }
        if (!v.isTextual()) {
            throw invalidType(path, "a string");
        }
        return v.textValue();
    }

    private static String requireString(JsonNode o, String name, String path) throws TranslationException {
        String v = string(o, name, path + "." + name);
        if (v == null) {
            throw missing(path + "." + name);
        }
        return v;
    }
}
