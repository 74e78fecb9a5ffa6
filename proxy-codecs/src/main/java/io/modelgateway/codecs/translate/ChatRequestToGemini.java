package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * An OpenAI-style chat completions request → a Gemini {@code GenerateContentRequest}, plus the
 * {@link GeminiResponseToChat} that turns the answer back with what this request asked for
 * ({@code stream_options.include_usage}, {@code reasoning.exclude}).
 *
 * <p>The request is first put in the messages form by the chat → Anthropic translation (contract 8.2: system and
 * developer messages hoisted, same-role turns merged, images, tools, every {@code tool_choice} form, tool calls and
 * results, reasoning effort as a thinking budget, {@code reasoning_details} replayed, the same validation and 400s
 * with chat {@code param} paths), then written as Gemini's by {@link MessagesRequestToGemini}. What Gemini takes
 * natively is read from the chat request itself rather than through Anthropic's limits: {@code response_format}
 * becomes {@code responseMimeType} + {@code responseJsonSchema} (not the GD-14 tool), {@code temperature} and
 * {@code top_p} go as sent (not clamped for Anthropic), {@code seed}, {@code presence_penalty} and
 * {@code frequency_penalty} are kept, and without a caller's {@code max_tokens} / {@code max_completion_tokens} no
 * output cap is set (the model's own applies; GD-12 is Anthropic's).
 *
 * <p>Ownership: the chat body is borrowed; the returned request's body is new and owned by the caller.
 */
public final class ChatRequestToGemini {
    private ChatRequestToGemini() {
    }

    /** Translates a chat request; {@code created} is now, the completion id a new {@code chatcmpl-} id. */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf chatBody, GeminiRequestOptions options)
            throws TranslationException {
        return translate(alloc, chatBody, options, Ids.withPrefix("chatcmpl-"), System.currentTimeMillis() / 1000);
    }

    /** As above with a given completion id and creation time (seconds), which tests fix. */
    static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf chatBody, GeminiRequestOptions options,
            String completionId, long created) throws TranslationException {
        ObjectNode chat = ChatRequestToMessages.parse(chatBody);
        ChatRequestToMessages.Translation t = new ChatRequestToMessages.Translation(chat,
                new ChatRequestToMessagesOptions(options.upstreamModel(), 0, options.noTemperature()));
        // Read (and validated) here, then taken out: the messages form would emulate it with a forced tool.
        ObjectNode schema = t.responseFormatSchema();
        chat.remove("response_format");
        boolean capped = MessagesRequestToChat.present(chat.get("max_completion_tokens"))
                || MessagesRequestToChat.present(chat.get("max_tokens"));
        JsonNode temperature = options.noTemperature() ? null : number(chat, "temperature");
        JsonNode topP = number(chat, "top_p");
        JsonNode seed = integer(chat, "seed");
        JsonNode presence = number(chat, "presence_penalty");
        JsonNode frequency = number(chat, "frequency_penalty");
        ObjectNode messages = t.run();
        MessagesRequestToGemini.Extras extras = new MessagesRequestToGemini.Extras(capped, temperature, topP, seed,
                presence, frequency, schema == null ? null : "application/json", schema);
        ByteBuf body = MessagesRequestToGemini.write(alloc, messages, extras, chatBody.readableBytes());
        return new TranslatedRequest(body, t.stream, new GeminiResponseToChat(completionId, created,
                options.upstreamModel(), t.includeUsage, t.excludeReasoning));
    }

    /** A numeric field of the chat request, or null when absent; anything but a number is a 400. */
    private static JsonNode number(ObjectNode chat, String name) throws TranslationException {
        JsonNode n = chat.get(name);
        if (!MessagesRequestToChat.present(n)) {
            return null;
        }
        if (!n.isNumber()) {
            throw new TranslationException(GatewayError.invalid("Invalid type for '" + name + "': expected a number.",
                    name, "invalid_type"));
        }
        return n;
    }

    private static JsonNode integer(ObjectNode chat, String name) throws TranslationException {
        JsonNode n = number(chat, name);
        if (n != null && !(n.isIntegralNumber() && n.canConvertToInt())) {
            throw new TranslationException(GatewayError.invalid("Invalid type for '" + name + "': expected an "
                    + "integer.", name, "invalid_type"));
        }
        return n;
    }
}
