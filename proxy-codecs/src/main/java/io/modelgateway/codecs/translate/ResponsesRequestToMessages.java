package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Contract 12.3: an OpenAI Responses API request → the Anthropic messages request, and the translator of its answer
 * ({@link MessagesResponseToResponses}, {@link MessagesStreamToResponses}). The request is read once as the chat
 * request it means ({@link ResponsesRequestToChat#toChat}, reasoning items kept as {@code reasoning_details}), and that
 * goes through the chat → Anthropic rules of 8.2 ({@link ChatRequestToMessages#prepare}): one set of rules for system
 * prompts, images, tool calls and results, GD-12 output caps, GD-13 temperatures, GD-14 structured output, GD-15
 * thinking budgets and GD-22 tool-call ids, whichever API the caller spoke. An error those rules find names the
 * caller's own field ({@code input[3]}, {@code tools[0].name}), not the chat request's.
 *
 * <p>The caller's body is borrowed and left untouched; the returned body belongs to the caller.
 */
public final class ResponsesRequestToMessages {
    private static final Pattern MESSAGE_PATH = Pattern.compile("messages\\[(\\d+)]");

    private ResponsesRequestToMessages() {
    }

    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf body,
            ResponsesRequestToMessagesOptions options) throws TranslationException {
        return translate(alloc, body, options, Ids.withPrefix("resp_"), System.currentTimeMillis() / 1000);
    }

    /** As above with a given response id and creation time (seconds), which tests fix. */
    static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf body, ResponsesRequestToMessagesOptions options,
            String responseId, long createdAt) throws TranslationException {
        ResponsesRequestToChat.Chat chat = ResponsesRequestToChat.toChat(ResponsesRequestToChat.parse(body),
                options.upstreamModel(), true, true, false);
        ChatRequestToMessages.Prepared prepared;
        try {
            prepared = ChatRequestToMessages.prepare(chat.body(), new ChatRequestToMessagesOptions(
                    options.upstreamModel(), options.maxOutputTokens(), options.noTemperature()));
        } catch (TranslationException e) {
            throw new TranslationException(callersField(e.error(), chat.origins()));
        }
        ByteBuf out = ChatRequestToMessages.write(alloc, prepared.body());
        ResponsesOutput.Head head = new ResponsesOutput.Head(responseId, createdAt, options.upstreamModel(), chat.echo());
        return new TranslatedRequest(out, prepared.stream(),
                new MessagesResponseToResponses(head, prepared.jsonResponse(), options.maxAnswerChars()));
    }

    /**
     * An error of the chat → Anthropic rules, with the chat request's paths put back as the caller's:
     * {@code messages[j]…} → the input item (or {@code instructions}) that message came from, {@code tools[i].function.x}
     * → {@code tools[i].x}, {@code response_format} → {@code text.format}, {@code max_completion_tokens} →
     * {@code max_output_tokens}, {@code reasoning_effort} → {@code reasoning.effort}. The message says the same.
     */
    static GatewayError callersField(GatewayError e, List<String> origins) {
        String param = e.param();
        if (param == null) {
            return e;
        }
        String mapped = param;
        Matcher m = MESSAGE_PATH.matcher(param);
        if (m.lookingAt()) {
            int j = Integer.parseInt(m.group(1));
            mapped = (j < origins.size() ? origins.get(j) : "input") + param.substring(m.end());
        } else if (param.equals("messages")) {
            mapped = "input";
        } else if (param.startsWith("tools[")) {
            mapped = param.replace(".function.", ".");
        } else if (param.startsWith("response_format")) {
            mapped = "text.format";
        } else if (param.equals("max_completion_tokens")) {
            mapped = "max_output_tokens";
        } else if (param.equals("reasoning_effort")) {
            mapped = "reasoning.effort";
        }
        if (mapped.equals(param)) {
            return e;
        }
        return new GatewayError(e.kind(), e.message().replace("'" + param, "'" + mapped), mapped, e.code());
    }
}
