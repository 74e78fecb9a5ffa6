package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ResponsesOutput.Item;
import io.modelgateway.codecs.translate.ResponsesOutput.Kind;
import io.modelgateway.codecs.translate.ResponsesOutput.Part;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The answer side of a Responses request served by a chat-completions upstream (contract 12.4): a chat completion →
 * a {@code response} object, or, for streams, a {@link ChatStreamToResponses} per stream. Made by
 * {@link ResponsesRequestToChat} with the response's {@link ResponsesOutput.Head head}.
 *
 * <p>{@link #translate} borrows the upstream body (not released, reader index unchanged) and returns a new buffer
 * owned by the caller. One instance per exchange, confined to its event loop.
 */
final class ChatResponseToResponses implements ResponseTranslator {
    private final ResponsesOutput.Head head;
    private final long maxAnswerChars;
    private Usage usage = Usage.ZERO;

    ChatResponseToResponses(ResponsesOutput.Head head, long maxAnswerChars) {
        this.head = head;
        this.maxAnswerChars = maxAnswerChars;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        JsonNode root = JsonFields.answer(ResponsesRequestToChat.JSON, upstreamBody);
        JsonNode error = root.get("error");
        if (error != null && !error.isNull()) {
            throw new TranslationException(ChatResponseToMessages.upstreamError(error)); // an error with a 200
        }
        JsonNode choice = root.path("choices").path(0);
        JsonNode message = choice.path("message");
        if (!message.isObject()) {
            throw new TranslationException(GatewayError.of(ErrorKind.UPSTREAM_ERROR,
                    "The upstream provider returned a response without a message."));
        }
        String finishReason = text(choice.get("finish_reason"));
        if ("error".equals(finishReason)) {
            throw new TranslationException(GatewayError.of(ErrorKind.UPSTREAM_ERROR,
                    "The upstream provider reported an error while generating the response."));
        }
        ResponsesOutput output = new ResponsesOutput();
        reasoning(output, message);
        String content = ChatResponseToMessages.contentText(message.get("content"));
        String refusal = text(message.get("refusal"));
        if (!content.isEmpty() || refusal != null && !refusal.isEmpty()) {
            Item m = output.add(Kind.MESSAGE);
            if (!content.isEmpty()) {
                part(m, false, content);
            }
            if (refusal != null && !refusal.isEmpty()) {
                part(m, true, refusal);
            }
        }
        JsonNode calls = message.get("tool_calls");
        if (calls != null && calls.isArray()) {
            for (JsonNode call : calls) {
                JsonNode fn = call.path("function");
                Item f = output.add(Kind.FUNCTION_CALL);
                String id = text(call.get("id"));
                f.callId = id != null && !id.isEmpty() ? id : Ids.withPrefix("call_");
                String name = text(fn.get("name"));
                f.name = name == null ? "" : name;
                JsonNode args = fn.get("arguments");
                try {
                    f.arguments.append(args != null && args.isObject()
                            ? ResponsesRequestToChat.JSON.writeValueAsString(args) // some providers send the object
                            : args == null || !args.isTextual() ? "" : args.textValue());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        Usage u = UsageJson.chat(root.get("usage"));
        ByteBuf out = output.answer(alloc, upstreamBody, head, text(root.get("model")),
                ResponsesOutput.incompleteReason(finishReason), u);
        usage = u;
        return out;
    }

    /**
     * Reasoning items ({@link ChatResponseToMessages#reasoning}): a signature as the GD-29 {@code encrypted_content},
     * an encrypted entry as an opaque item.
     */
    static void reasoning(ResponsesOutput output, JsonNode message) {
        ChatResponseToMessages.reasoning(message, new ChatResponseToMessages.Reasoning<RuntimeException>() {
            @Override
            public void thinking(String text, String signature) {
                reasoningItem(output, text, signature == null || signature.isEmpty() ? null
                        : ResponsesOutput.THINKING_PREFIX + signature);
            }

            @Override
            public void encrypted(String data) {
                reasoningItem(output, null, ResponsesOutput.REDACTED_PREFIX + data);
            }
        });
    }

    private static void reasoningItem(ResponsesOutput output, String summary, String encrypted) {
        Item r = output.add(Kind.REASONING);
        if (summary != null && !summary.isEmpty()) {
            r.summary = new StringBuilder(summary);
        }
        r.encrypted = encrypted;
    }

    private static void part(Item message, boolean refusal, String text) {
        Part p = new Part(refusal);
        p.text.append(text);
        message.parts.add(p);
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        return new ChatStreamToResponses(new ResponsesEvents(alloc, head, maxAnswerChars));
    }

    @Override
    public Usage usage() {
        return usage;
    }
}
