package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The answer side of a messages request served by an OpenAI-style upstream: a chat completion → an Anthropic
 * message (contract 8.6–8.8), or, for streams, a {@link ChatStreamToMessages} per stream. Made by
 * {@link MessagesRequestToChat}, which fills the tool-name table it restores names from (GD-22).
 *
 * <p>{@link #translate} borrows the upstream body (not released, reader index unchanged) and returns a new
 * buffer owned by the caller. One instance per exchange, confined to its event loop.
 */
final class ChatResponseToMessages implements ResponseTranslator {
    private final String upstreamModel;
    private final ChatToolNames tools;
    private Usage usage = Usage.ZERO;

    ChatResponseToMessages(String upstreamModel, ChatToolNames tools) {
        this.upstreamModel = upstreamModel;
        this.tools = tools;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        JsonNode root;
        try (InputStream in = new ByteBufInputStream(upstreamBody.duplicate())) {
            root = MessagesRequestToChat.MAPPER.readTree(in);
        } catch (IOException e) {
            throw TranslationException.unreadableAnswer();
        }
        if (root == null || !root.isObject()) {
            throw TranslationException.unreadableAnswer();
        }
        JsonNode error = root.get("error");
        if (error != null && !error.isNull()) {
            throw new TranslationException(upstreamError(error)); // some providers answer errors with a 200
        }
        JsonNode choice = root.path("choices").path(0);
        JsonNode sent = choice.path("message");
        String finishReason = text(choice.get("finish_reason"));
        if (!sent.isObject() && !"content_filter".equals(finishReason)) {
            throw upstream("The upstream provider returned a response without a message.");
        }
        // A completion the provider's content filter withheld whole (Azure OpenAI may send no message at all) is an
        // empty answer stopped for refusal (8.7), not a broken one.
        JsonNode answer = sent.isObject() ? sent : MessagesRequestToChat.MAPPER.createObjectNode();
        if ("error".equals(finishReason)) {
            throw upstream("The upstream provider reported an error while generating the response.");
        }
        JsonNode usageNode = root.get("usage");
        usage = UsageJson.chat(usageNode);
        boolean reasoningReported = UsageJson.chatReportsReasoning(usageNode);
        String refusal = text(answer.get("refusal"));
        boolean refused = refusal != null && !refusal.isEmpty();
        String stopReason = refused ? "refusal" : StopReasons.toStopReason(finishReason);
        String model = text(root.get("model"));

        try {
            return JsonOut.write(alloc, Math.max(256, upstreamBody.readableBytes() + 128), MessagesRequestToChat.MAPPER,
                    g -> writeMessage(g, answer, model, refused, refusal, stopReason, reasoningReported));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeMessage(JsonGenerator g, JsonNode message, String model, boolean refused, String refusal,
            String stopReason, boolean reasoningReported) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", Ids.withPrefix("msg_"));
        g.writeStringField("type", "message");
        g.writeStringField("role", "assistant");
        g.writeStringField("model", model != null ? model : upstreamModel);
        g.writeArrayFieldStart("content");
        writeThinking(g, message);
        String content = contentText(message.get("content"));
        if (!content.isEmpty()) {
            JsonOut.textBlock(g, content);
        }
        if (refused) {
            JsonOut.textBlock(g, refusal);
        }
        writeToolUses(g, message.get("tool_calls"));
        g.writeEndArray();
        g.writeStringField("stop_reason", stopReason);
        g.writeNullField("stop_sequence"); // not knowable from a chat completion (8.7)
        g.writeFieldName("usage");
        UsageJson.writeMessages(g, usage, reasoningReported);
        g.writeEndObject();
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new ChatStreamToMessages(alloc, tools, upstreamModel);
    }

    @Override
    public Usage usage() {
        return usage;
    }

    /** Leading thinking blocks, by {@link #reasoning}: redacted_thinking for encrypted entries. */
    private static void writeThinking(JsonGenerator g, JsonNode message) throws IOException {
        reasoning(message, new Reasoning<IOException>() {
            @Override
            public void thinking(String text, String signature) throws IOException {
                JsonOut.thinkingBlock(g, text == null ? "" : text, signature == null ? "" : signature);
            }

            @Override
            public void encrypted(String data) throws IOException {
                JsonOut.redactedThinkingBlock(g, data);
            }
        });
    }

    /** What a chat answer's reasoning becomes, piece by piece, in the caller's form. */
    interface Reasoning<E extends Exception> {
        /** Readable reasoning; either may be null or empty. */
        void thinking(String text, String signature) throws E;

        /** Reasoning the caller may only hand back (never empty). */
        void encrypted(String data) throws E;
    }

    /**
     * The reasoning of a chat answer's {@code message} in the order of contract 8.6: one piece per
     * {@code reasoning_details} text or summary entry that has text (with its signature); when no entry has text,
     * one from {@code reasoning} / {@code reasoning_content} signed with the first signature in the details, if
     * there is either; encrypted entries as they come.
     */
    static <E extends Exception> void reasoning(JsonNode message, Reasoning<E> out) throws E {
        JsonNode details = message.get("reasoning_details");
        if (details == null || !details.isArray()) {
            details = MessagesRequestToChat.MAPPER.createArrayNode();
        }
        boolean textInDetails = false;
        String firstSignature = null;
        for (JsonNode d : details) {
            String t = detailText(d);
            textInDetails |= t != null && !t.isEmpty();
            String signature = text(d.get("signature"));
            if (firstSignature == null && signature != null && !signature.isEmpty() && isTextDetail(d)) {
                firstSignature = signature;
            }
        }
        if (!textInDetails) {
            String plain = text(message.get("reasoning"));
            if (plain == null || plain.isEmpty()) {
                plain = text(message.get("reasoning_content"));
            }
            if (plain != null && !plain.isEmpty() || firstSignature != null) {
                out.thinking(plain, firstSignature);
            }
        }
        for (JsonNode d : details) {
            if (isTextDetail(d)) {
                if (textInDetails) {
                    out.thinking(detailText(d), text(d.get("signature")));
                }
            } else if ("reasoning.encrypted".equals(text(d.get("type")))) {
                String data = text(d.get("data"));
                if (data != null && !data.isEmpty()) {
                    out.encrypted(data);
                }
            }
        }
    }

    private static boolean isTextDetail(JsonNode d) {
        String type = text(d.get("type"));
        return "reasoning.text".equals(type) || "reasoning.summary".equals(type);
    }

    /** The text of a reasoning.text entry or the summary of a reasoning.summary entry; null otherwise. */
    private static String detailText(JsonNode d) {
        String type = text(d.get("type"));
        if ("reasoning.text".equals(type)) {
            return text(d.get("text"));
        }
        return "reasoning.summary".equals(type) ? text(d.get("summary")) : null;
    }

    private void writeToolUses(JsonGenerator g, JsonNode calls) throws IOException {
        if (calls == null || !calls.isArray()) {
            return;
        }
        for (JsonNode call : calls) {
            JsonNode function = call.path("function");
            g.writeStartObject();
            g.writeStringField("type", "tool_use");
            g.writeStringField("id", ChatToolNames.toolUseId(text(call.get("id"))));
            g.writeStringField("name", tools.callerName(text(function.get("name"))));
            g.writeFieldName("input");
            writeInput(g, function.get("arguments"));
            g.writeEndObject();
        }
    }

    /** The parsed arguments object; anything else is kept as {@code {"_raw_arguments": "<string>"}}. */
    private static void writeInput(JsonGenerator g, JsonNode arguments) throws IOException {
        if (arguments != null && arguments.isObject()) { // some providers send an object, not a string
            g.writeTree(arguments);
            return;
        }
        String raw = text(arguments);
        if (raw == null || raw.isBlank()) {
            g.writeStartObject();
            g.writeEndObject();
            return;
        }
        JsonNode parsed = null;
        try {
            parsed = MessagesRequestToChat.MAPPER.readTree(raw);
        } catch (IOException e) {
            // not JSON: kept raw below
        }
        if (parsed != null && parsed.isObject()) {
            g.writeTree(parsed);
        } else {
            g.writeStartObject();
            g.writeStringField("_raw_arguments", raw);
            g.writeEndObject();
        }
    }

    /** {@code content} as a string, or the text parts of a content array some providers return. */
    static String contentText(JsonNode content) {
        if (content == null) {
            return "";
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        if (!content.isArray()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (JsonNode part : content) {
            if ("text".equals(text(part.get("type")))) {
                String t = text(part.get("text"));
                sb.append(t == null ? "" : t);
            }
        }
        return sb.toString();
    }

    /** An error object in a 200 body: overloaded when the upstream says so (code 503/529 or the word), else 502. */
    static GatewayError upstreamError(JsonNode error) {
        String message = error.isTextual() ? error.textValue() : text(error.get("message"));
        boolean overloaded = ChatStreamToMessages.overloaded(error.path("code").asText(""),
                text(error.get("type")), message);
        if (message == null || message.isEmpty()) {
            message = overloaded ? "Overloaded" : "The upstream provider returned an error.";
        }
        return GatewayError.of(overloaded ? ErrorKind.OVERLOADED : ErrorKind.UPSTREAM_ERROR, message);
    }

    private static TranslationException upstream(String message) {
        return new TranslationException(GatewayError.of(ErrorKind.UPSTREAM_ERROR, message));
    }
}
