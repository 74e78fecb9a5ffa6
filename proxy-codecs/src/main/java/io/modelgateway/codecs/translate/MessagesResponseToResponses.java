package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.translate.ResponsesOutput.Item;
import io.modelgateway.codecs.translate.ResponsesOutput.Kind;
import io.modelgateway.codecs.translate.ResponsesOutput.Part;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The answer side of a Responses request served by an Anthropic upstream (contract 12.4): a message → a
 * {@code response} object, or, for streams, a {@link MessagesStreamToResponses} per stream. Content blocks become
 * output items in order: text → a message's {@code output_text} parts (consecutive text blocks share one message),
 * thinking and redacted_thinking → reasoning items (GD-29), tool_use → function calls — except the GD-14
 * {@code json_response} call standing in for {@code text.format}, whose input is the answer's text. Made by
 * {@link ResponsesRequestToMessages}; one per exchange, confined to its event loop.
 */
final class MessagesResponseToResponses implements ResponseTranslator {
    private final ResponsesOutput.Head head;
    private final boolean jsonResponse;
    private final long maxAnswerChars;
    private Usage usage = Usage.ZERO;

    /** @param jsonResponse the GD-14 {@code json_response} tool was added for {@code text.format} */
    MessagesResponseToResponses(ResponsesOutput.Head head, boolean jsonResponse, long maxAnswerChars) {
        this.head = head;
        this.jsonResponse = jsonResponse;
        this.maxAnswerChars = maxAnswerChars;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        JsonNode root = JsonFields.answer(ResponsesRequestToChat.JSON, upstreamBody);
        JsonNode content = MessagesResponseToChat.content(root);
        ResponsesOutput output;
        try {
            output = output(content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Usage u = UsageJson.messages(root.get("usage"));
        ByteBuf out = output.answer(alloc, upstreamBody, head, text(root.get("model")),
                incompleteReason(text(root.get("stop_reason"))), u);
        usage = u;
        return out;
    }

    /** The blocks as output items; with a GD-14 answer its JSON is the only text (as for chat, 8.3). */
    private ResponsesOutput output(JsonNode content) throws IOException {
        ResponsesOutput output = new ResponsesOutput();
        if (content == null || content.isNull()) {
            return output;
        }
        JsonNode json = null;
        if (jsonResponse) {
            for (JsonNode block : content) {
                if ("tool_use".equals(text(block.get("type")))
                        && ChatRequestToMessages.JSON_RESPONSE_TOOL.equals(text(block.get("name")))) {
                    json = block.get("input");
                    break;
                }
            }
        }
        Item message = null;
        for (JsonNode block : content) {
            String type = String.valueOf(text(block.get("type")));
            switch (type) {
                case "text" -> {
                    String t = text(block.get("text"));
                    if (json == null && t != null && !t.isEmpty()) {
                        message = appendText(output, message, t);
                    }
                }
                case "thinking" -> {
                    message = null;
                    Item r = output.add(Kind.REASONING);
                    String thinking = text(block.get("thinking"));
                    if (thinking != null && !thinking.isEmpty()) {
                        r.summary = new StringBuilder(thinking);
                    }
                    String signature = text(block.get("signature"));
                    if (signature != null && !signature.isEmpty()) {
                        r.encrypted = ResponsesOutput.THINKING_PREFIX + signature;
                    }
                }
                case "redacted_thinking" -> {
                    message = null;
                    String data = text(block.get("data"));
                    if (data != null && !data.isEmpty()) {
                        output.add(Kind.REASONING).encrypted = ResponsesOutput.REDACTED_PREFIX + data;
                    }
                }
                case "tool_use" -> {
                    if (jsonResponse && ChatRequestToMessages.JSON_RESPONSE_TOOL.equals(text(block.get("name")))) {
                        if (block.get("input") == json) { // the first one is the answer; others are dropped
                            message = appendText(output, message, JsonOut.arguments(ResponsesRequestToChat.JSON, json));
                        }
                        continue;
                    }
                    message = null;
                    Item f = output.add(Kind.FUNCTION_CALL);
                    String id = text(block.get("id"));
                    f.callId = id != null && !id.isEmpty() ? id : Ids.withPrefix("call_");
                    String name = text(block.get("name"));
                    f.name = name == null ? "" : name;
                    f.arguments.append(JsonOut.arguments(ResponsesRequestToChat.JSON, block.get("input")));
                }
                default -> {
                    // citations, server-tool blocks (server_tool_use, web_search_tool_result, …): dropped
                }
            }
        }
        return output;
    }

    /** Text goes into the current message (a new output_text part), or a new message when none is current. */
    private static Item appendText(ResponsesOutput output, Item message, String text) {
        Item m = message != null ? message : output.add(Kind.MESSAGE);
        Part p = new Part(false);
        p.text.append(text);
        m.parts.add(p);
        return m;
    }

    /** {@code incomplete_details.reason} for an Anthropic stop reason (through 8.7); null when the answer is whole. */
    static String incompleteReason(String stopReason) {
        return ResponsesOutput.incompleteReason(StopReasons.toFinishReason(stopReason, false));
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new MessagesStreamToResponses(new ResponsesEvents(alloc, head, maxAnswerChars), jsonResponse);
    }

    @Override
    public Usage usage() {
        return usage;
    }
}
