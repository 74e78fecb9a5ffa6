package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ChatStreamToMessages.Chunk;
import io.modelgateway.codecs.translate.ChatStreamToMessages.Detail;
import io.modelgateway.codecs.translate.ChatStreamToMessages.ToolFragment;
import io.modelgateway.codecs.translate.ResponsesOutput.Kind;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.function.Consumer;

/**
 * A chat-completions stream → the Responses API's typed events (contract 12.5), one upstream chunk at a time through
 * {@link ResponsesEvents}. Each chunk is read on its own ({@link SseData}, then {@link Chunk} as for the messages
 * translation) and becomes zero or more events: reasoning and its signatures → reasoning items, content → the
 * message's {@code output_text}, refusal → a {@code refusal} part, each tool call (by its chat index) → a function
 * call item. OpenAI reports usage after the finish chunk, so the finish reason closes the open item and is held;
 * {@code response.completed} / {@code response.incomplete} follows at {@code [DONE]} or a clean end. An upstream
 * error, a malformed chunk, an early end or a tool call continued after it ended → {@code response.failed} (GD-28).
 *
 * <p>Ownership: input events are borrowed; every buffer handed to {@code out} is new and owned by the consumer. One
 * instance per stream, confined to the exchange's event loop; {@link #onEvent} never throws.
 */
final class ChatStreamToResponses implements StreamTranslator {
    private final ResponsesEvents events;
    private final SseData sse = new SseData();
    private final ChatToolCalls calls = new ChatToolCalls();
    private boolean finishSeen;
    private String incompleteReason;
    private Usage usage = Usage.ZERO;
    private boolean usageSeen;

    ChatStreamToResponses(ResponsesEvents events) {
        this.events = events;
    }

    @Override
    public void onEvent(ByteBuf event, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        try {
            int len = sse.read(event);
            if (len < 0) {
                if (sse.comment()) {
                    events.keepAlive(out); // an upstream keep-alive stays one (GD-11)
                }
                return;
            }
            if (sse.isDone()) {
                if (events.started() && finishSeen) {
                    events.finish(out, incompleteReason, usage);
                } else {
                    fail(out, ErrorKind.UPSTREAM_ERROR, "The upstream stream ended without a finish reason.");
                }
                return;
            }
            if (sse.isBlank()) {
                return;
            }
            apply(Chunk.parse(sse.data(), len), out);
        } catch (IOException | RuntimeException e) {
            // The chunk is parsed whole before anything is emitted: complete events, then this.
            fail(out, ErrorKind.UPSTREAM_ERROR, "The upstream provider sent a malformed stream event.");
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        if (clean && finishSeen && events.started()) {
            events.finish(out, incompleteReason, usage); // a clean end after the finish reason, without [DONE]
        } else {
            fail(out, ErrorKind.UPSTREAM_ERROR, clean ? "Upstream stream ended early" : "Upstream connection lost");
        }
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        events.fail(out, error, usageSeen ? usage : null);
    }

    @Override
    public boolean finished() {
        return events.finished();
    }

    @Override
    public boolean failed() {
        return events.failed();
    }

    @Override
    public Usage usage() {
        return usage;
    }

    private void apply(Chunk c, Consumer<ByteBuf> out) {
        if (c.error || sse.errorEvent()) {
            String message = c.errorText();
            boolean overloaded = c.overloaded();
            String cleaned = message == null ? null : ErrorTranslator.clean(message, null, null);
            if (cleaned == null) {
                cleaned = overloaded ? "Overloaded" : "The upstream provider reported an error.";
            }
            fail(out, overloaded ? ErrorKind.OVERLOADED : ErrorKind.UPSTREAM_ERROR, cleaned);
            return;
        }
        events.start(out, c.model);
        String reasoning = nonEmpty(c.reasoning) ? c.reasoning : nonEmpty(c.reasoningContent) ? c.reasoningContent
                : null;
        if (reasoning != null) {
            events.reasoning(out, reasoning);
        }
        if (c.details != null) {
            for (Detail d : c.details) {
                if ("reasoning.text".equals(d.type) || "reasoning.summary".equals(d.type)) {
                    // OpenRouter repeats the reasoning text in its details; only take it when it came nowhere else.
                    String t = "reasoning.text".equals(d.type) ? d.text : d.summary;
                    if (reasoning == null && nonEmpty(t)) {
                        events.reasoning(out, t);
                    }
                    if (nonEmpty(d.signature)) {
                        events.signature(out, d.signature);
                    }
                } else if ("reasoning.encrypted".equals(d.type) && nonEmpty(d.data)) {
                    events.redacted(out, d.data);
                }
            }
        }
        if (nonEmpty(c.content)) {
            events.text(out, c.content);
        }
        if (nonEmpty(c.refusal)) {
            events.refusal(out, c.refusal);
        }
        if (c.toolCalls != null) {
            for (ToolFragment f : c.toolCalls) {
                if (!tool(out, f)) {
                    return;
                }
            }
        }
        if (c.finishReason != null && !events.finished()) {
            if ("error".equals(c.finishReason)) { // OpenRouter: not a finish reason (8.7)
                fail(out, ErrorKind.UPSTREAM_ERROR, "The upstream provider reported an error while generating.");
                return;
            }
            finishSeen = true;
            incompleteReason = ResponsesOutput.incompleteReason(c.finishReason);
            events.closeItem(out, incompleteReason);
        }
        if (c.usage) {
            usage = Usage.fromOpenAi(c.promptTokens, c.completionTokens, c.cachedTokens, c.cacheWriteTokens,
                    c.reasoningTokens);
            usageSeen = true;
        }
    }

    /** One {@code tool_calls[]} fragment; false when it continued a call that had ended (the stream failed). */
    private boolean tool(Consumer<ByteBuf> out, ToolFragment f) {
        switch (calls.next(f, events.isOpen(Kind.FUNCTION_CALL))) {
            case SKIP -> {
                return true;
            }
            case AGAIN -> {
                fail(out, ErrorKind.UPSTREAM_ERROR, ChatStreamToMessages.toolCallAgain(calls.index()));
                return false;
            }
            case START -> events.functionCall(out, nonEmpty(f.id) ? f.id : Ids.withPrefix("call_"), f.name);
            default -> {
                // the open call goes on
            }
        }
        if (nonEmpty(f.arguments)) {
            events.arguments(out, f.arguments);
        }
        return !events.finished();
    }

    private void fail(Consumer<ByteBuf> out, ErrorKind kind, String message) {
        events.fail(out, GatewayError.of(kind, message), usageSeen ? usage : null);
    }

    private static boolean nonEmpty(String s) {
        return s != null && !s.isEmpty();
    }
}
