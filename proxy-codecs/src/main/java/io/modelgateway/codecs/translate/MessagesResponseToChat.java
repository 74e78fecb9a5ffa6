package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The answer side of a chat request served by an Anthropic upstream: contract 8.3 for a complete
 * message, and a new {@link MessagesStreamToChat} (8.4) per stream. Made by {@link ChatRequestToMessages}
 * with what the request asked for; one per exchange, confined to its event loop.
 */
final class MessagesResponseToChat implements ResponseTranslator {
    private final String completionId;
    private final long created;
    private final String fallbackModel;
    private final boolean includeUsage;
    private final boolean excludeReasoning;
    private final boolean jsonResponse;
    private Usage usage = Usage.ZERO;

    /**
     * @param completionId     the {@code chatcmpl-} id the caller sees
     * @param created          request time, Unix seconds
     * @param fallbackModel    the model name when the upstream's answer names none
     * @param includeUsage     {@code stream_options.include_usage}: a usage chunk, and {@code usage: null} elsewhere
     * @param excludeReasoning {@code reasoning.exclude}: thinking is used but not returned
     * @param jsonResponse     the GD-14 {@code json_response} tool was added for {@code response_format}
     */
    MessagesResponseToChat(String completionId, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning, boolean jsonResponse) {
        this.completionId = completionId;
        this.created = created;
        this.fallbackModel = fallbackModel;
        this.includeUsage = includeUsage;
        this.excludeReasoning = excludeReasoning;
        this.jsonResponse = jsonResponse;
    }

    boolean includeUsage() {
        return includeUsage;
    }

    boolean excludeReasoning() {
        return excludeReasoning;
    }

    boolean jsonResponse() {
        return jsonResponse;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        JsonNode root = JsonFields.answer(ChatRequestToMessages.JSON, upstreamBody);
        JsonNode content = content(root);
        Message m = Message.read(content, jsonResponse);
        Usage u = UsageJson.messages(root.get("usage"));
        boolean reasoningReported = UsageJson.messagesReportsReasoning(root.get("usage"));
        String model = text(root.get("model"));
        String finish = StopReasons.toFinishReason(text(root.get("stop_reason")),
                m.jsonInput != null && m.toolCalls.isEmpty());

        ByteBuf buf = JsonOut.answer(alloc, upstreamBody, ChatRequestToMessages.JSON.getFactory(),
                g -> writeCompletion(g, m, u, reasoningReported, model, finish));
        usage = u;
        return buf;
    }

    /**
     * The content blocks of an Anthropic answer read as a tree, null when it has none. An error body sent with a 2xx
     * status is the caller's error; content that is not an array makes the answer unreadable.
     */
    static JsonNode content(JsonNode root) throws TranslationException {
        if ("error".equals(text(root.get("type")))) {
            JsonNode err = root.get("error");
            ErrorKind kind = ErrorTranslator.kindOfAnthropicType(err == null ? null : text(err.get("type")));
            String msg = err == null ? null : text(err.get("message"));
            msg = msg == null ? null : ErrorTranslator.clean(msg, null, null);
            throw new TranslationException(GatewayError.of(kind, msg != null ? msg : "The upstream provider "
                    + "returned an error."));
        }
        JsonNode content = root.get("content");
        if (content != null && !content.isNull() && !content.isArray()) {
            throw TranslationException.unreadableAnswer();
        }
        return content;
    }

    private void writeCompletion(JsonGenerator g, Message m, Usage u, boolean reasoningReported, String model,
            String finish) throws IOException {
        JsonOut.completionStart(g, completionId, created, model != null ? model : fallbackModel);
        // A GD-14 answer's JSON is its text (never empty: "{}" at least), whatever other calls came with it.
        JsonOut.completionContent(g, m.jsonInput != null ? ChatRequestToMessages.JSON.writeValueAsString(m.jsonInput)
                : m.text, !m.toolCalls.isEmpty());
        if (!m.toolCalls.isEmpty()) {
            g.writeArrayFieldStart("tool_calls");
            for (JsonNode call : m.toolCalls) {
                String id = text(call.get("id"));
                String name = text(call.get("name"));
                g.writeStartObject();
                JsonOut.toolCallFields(g, id != null && !id.isEmpty() ? id : Ids.withPrefix("call_"),
                        name != null ? name : "", JsonOut.arguments(ChatRequestToMessages.JSON, call.get("input")));
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        if (!excludeReasoning && !m.reasoning.isEmpty()) {
            g.writeStringField("reasoning", m.reasoningText.toString());
            g.writeArrayFieldStart("reasoning_details");
            int k = 0;
            for (JsonNode block : m.reasoning) {
                if ("thinking".equals(text(block.get("type")))) {
                    String t = text(block.get("thinking"));
                    JsonOut.reasoningText(g, t != null ? t : "", text(block.get("signature")), k++);
                } else {
                    String data = text(block.get("data"));
                    JsonOut.reasoningEncrypted(g, data != null ? data : "", k++);
                }
            }
            g.writeEndArray();
        }
        JsonOut.completionEnd(g, finish, u, reasoningReported);
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new MessagesStreamToChat(alloc, completionId, created, fallbackModel, includeUsage, excludeReasoning,
                jsonResponse);
    }

    @Override
    public Usage usage() {
        return usage;
    }

    /** The content blocks of one Anthropic message, sorted into what the chat message needs. */
    private static final class Message {
        final StringBuilder text = new StringBuilder();
        final StringBuilder reasoningText = new StringBuilder();
        final List<JsonNode> reasoning = new ArrayList<>();
        final List<JsonNode> toolCalls = new ArrayList<>();
        /** The first json_response tool's input (GD-14), null when there is none. */
        JsonNode jsonInput;

        static Message read(JsonNode content, boolean jsonResponse) {
            Message m = new Message();
            if (content == null || content.isNull()) {
                return m;
            }
            for (JsonNode block : content) {
                switch (String.valueOf(text(block.get("type")))) {
                    case "text" -> {
                        String t = text(block.get("text"));
                        if (t != null) {
                            m.text.append(t);
                        }
                    }
                    case "tool_use" -> {
                        if (jsonResponse && ChatRequestToMessages.JSON_RESPONSE_TOOL.equals(text(block.get("name")))) {
                            if (m.jsonInput == null) {
                                JsonNode input = block.get("input");
                                m.jsonInput = input == null || input.isNull()
                                        ? ChatRequestToMessages.JSON.createObjectNode() : input;
                            }
                        } else {
                            m.toolCalls.add(block);
                        }
                    }
                    case "thinking" -> {
                        String t = text(block.get("thinking"));
                        if (t != null) {
                            m.reasoningText.append(t);
                        }
                        m.reasoning.add(block);
                    }
                    case "redacted_thinking" -> m.reasoning.add(block);
                    default -> {
                        // citations, server-tool blocks (server_tool_use, web_search_tool_result, …): dropped
                    }
                }
            }
            return m;
        }
    }
}
