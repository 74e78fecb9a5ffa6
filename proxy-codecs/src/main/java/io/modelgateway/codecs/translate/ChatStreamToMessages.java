package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.string;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.usage.TokenCount;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * An OpenAI chat-completions stream → Anthropic {@code /messages} events, the state machine of contract
 * 8.9. Each upstream event is read on its own (its {@code data:} lines joined and parsed with the streaming
 * parser into a small {@link Chunk}), then turned into zero or more caller events written by {@link MessagesEvents}
 * straight into new buffers: {@code event: <type>\ndata: <compact json>\n\n}.
 *
 * <p>OpenAI reports usage after the finishing chunk, so the finish reason closes the open block and is held;
 * {@code message_delta} + {@code message_stop} follow at {@code [DONE]} (or a clean end). Upstream errors,
 * malformed events and early ends become one {@code event: error} (never followed by {@code message_stop}).
 *
 * <p>Ownership: input events are borrowed; every buffer handed to {@code out} is new and owned by the consumer.
 * One instance per stream, confined to the exchange's event loop; {@link #onEvent} never throws.
 */
final class ChatStreamToMessages implements StreamTranslator {
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8) // emoji as UTF-8, like the upstream sent them
            .build();

    private final MessagesEvents events;
    private final ChatToolNames tools;
    private final String fallbackModel;
    /** The current event's {@code data:} lines, joined. */
    private final SseData sse = new SseData();

    // State of 8.9 (the open block is the writer's).
    private boolean started;
    /** The open thinking block already had its signature_delta. */
    private boolean signed;
    private final ChatToolCalls calls = new ChatToolCalls();
    private String stopReason;
    private boolean refused;
    private Usage usage = Usage.ZERO;
    /** The upstream's usage said how many reasoning tokens there were: the caller's usage says it too. */
    private boolean reasoningReported;
    /** The gateway's count of the input before the upstream reports its own: what message_start carries (8.9). */
    private long inputEstimate;

    /**
     * @param tools         restores tool names shortened in the request (GD-22)
     * @param fallbackModel the model reported when the upstream chunk carries none
     */
    ChatStreamToMessages(ByteBufAllocator alloc, ChatToolNames tools, String fallbackModel) {
        this.events = new MessagesEvents(alloc, JSON);
        this.tools = tools;
        this.fallbackModel = fallbackModel == null ? "" : fallbackModel;
    }

    @Override
    public void onEvent(ByteBuf event, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        try {
            int len = sse.read(event);
            if (len < 0) {
                // Before message_start a ping would break the 5.10 grammar; the proxy's own keep-alive covers it.
                if (sse.comment() && started) {
                    events.ping(out); // keep-alive comment → ping (GD-11)
                }
                return;
            }
            if (sse.isDone()) {
                // [DONE] without a finish reason is a truncated answer as far as the caller can tell (8.9 step 8).
                if (started && stopReason != null) {
                    finish(out);
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
            // The chunk is parsed whole before anything is emitted, so the caller sees complete events, then this.
            if (!events.finished()) {
                fail(out, ErrorKind.UPSTREAM_ERROR, "The upstream provider sent a malformed stream event.");
            }
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        if (clean && stopReason != null) {
            finish(out); // 8.9 step 7: a clean end after the finish reason, without [DONE]
        } else {
            fail(out, ErrorKind.UPSTREAM_ERROR, clean ? "Upstream stream ended early" : "Upstream connection lost");
        }
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!events.finished()) {
            fail(out, error.kind(), error.message());
        }
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

    @Override
    public void inputEstimate(long tokens) {
        inputEstimate = Math.max(0, tokens);
    }

    @Override
    public boolean wantsInputEstimate() {
        return true;
    }

    // ---- one upstream chunk -------------------------------------------------------------------------------

    private void apply(Chunk c, Consumer<ByteBuf> out) {
        // An error may come before any chunk: then it is the only event (both Anthropic SDKs raise on it).
        if (c.error || sse.errorEvent()) {
            String message = c.errorText();
            boolean overloaded = c.overloaded();
            if (message == null || message.isEmpty()) {
                message = overloaded ? "Overloaded" : "The upstream provider reported an error.";
            }
            fail(out, overloaded ? ErrorKind.OVERLOADED : ErrorKind.UPSTREAM_ERROR, message);
            return;
        }
        if (!started) {
            started = true;
            // Azure OpenAI's first chunk (its prompt's content-filter results, no choices) has "model":"".
            // 8.9 step 1: the gateway's own count of the input (the upstream's exact counts come in message_delta)
            events.messageStart(out, nonEmpty(c.model) ? c.model : fallbackModel,
                    new Usage(inputEstimate, 0, 0, 0, 0));
        }
        String reasoning = nonEmpty(c.reasoning) ? c.reasoning : nonEmpty(c.reasoningContent) ? c.reasoningContent : null;
        if (reasoning != null) {
            thinking(out, reasoning);
        }
        if (c.details != null) {
            for (Detail d : c.details) {
                if ("reasoning.text".equals(d.type) || "reasoning.summary".equals(d.type)) {
                    // OpenRouter repeats the reasoning text in its details; only take it when it came nowhere else.
                    String t = "reasoning.text".equals(d.type) ? d.text : d.summary;
                    if (reasoning == null && nonEmpty(t)) {
                        thinking(out, t);
                    }
                    if (nonEmpty(d.signature)) {
                        signature(out, d.signature);
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
            refused = true;
            events.text(out, c.refusal);
        }
        if (c.toolCalls != null) {
            for (ToolFragment f : c.toolCalls) {
                if (!tool(out, f)) {
                    return;
                }
            }
        }
        // The finish reason is held, not sent: OpenAI's usage chunk comes after it and message_delta needs both.
        if (c.finishReason != null) {
            if ("error".equals(c.finishReason)) { // OpenRouter: not a stop reason (8.7)
                fail(out, ErrorKind.UPSTREAM_ERROR, "The upstream provider reported an error while generating.");
                return;
            }
            events.close(out);
            stopReason = refused ? "refusal" : StopReasons.toStopReason(c.finishReason);
        }
        if (c.usage) {
            usage = Usage.fromOpenAi(c.promptTokens, c.completionTokens, c.cachedTokens, c.cacheWriteTokens,
                    c.reasoningTokens);
            reasoningReported = c.reasoningReported;
        }
    }

    private void thinking(Consumer<ByteBuf> out, String text) {
        if (!events.isOpen(MessagesEvents.Block.THINKING) || signed) { // reasoning after a signature is a new block
            startThinking(out);
        }
        events.thinking(out, text);
    }

    private void signature(Consumer<ByteBuf> out, String signature) {
        if (!events.isOpen(MessagesEvents.Block.THINKING) || signed) { // a signature with no text of its own
            startThinking(out);
        }
        signed = true;
        events.signature(out, signature);
    }

    private void startThinking(Consumer<ByteBuf> out) {
        signed = false;
        events.startThinking(out);
    }

    /** One {@code tool_calls[]} entry; false when it broke sequential streaming (an error was emitted). */
    private boolean tool(Consumer<ByteBuf> out, ToolFragment f) {
        switch (calls.next(f, events.isOpen(MessagesEvents.Block.TOOL))) {
            case SKIP -> {
                return true;
            }
            case AGAIN -> {
                fail(out, ErrorKind.UPSTREAM_ERROR, toolCallAgain(calls.index()));
                return false;
            }
            case START -> events.toolUse(out, ChatToolNames.toolUseId(f.id), tools.callerName(f.name));
            default -> {
                // the open call goes on
            }
        }
        if (nonEmpty(f.arguments)) {
            events.inputJson(out, f.arguments);
        }
        return true;
    }

    /** The error of a fragment with content for a call whose block had ended (both chat stream readers say it). */
    static String toolCallAgain(long index) {
        return "The upstream provider streamed tool call " + index + " again after it had ended.";
    }

    /** 8.9 step 7: message_delta with the held stop reason and the final usage, then message_stop. */
    private void finish(Consumer<ByteBuf> out) {
        events.finish(out, stopReason, usage, reasoningReported);
    }

    /** 8.9 step 8: one error event; the stream is over (no message_stop). */
    private void fail(Consumer<ByteBuf> out, ErrorKind kind, String message) {
        events.fail(out, GatewayError.of(kind, message));
    }

    /** Whether an upstream error says overload (HTTP 503/529 as its code, or the word itself). */
    static boolean overloaded(String code, String type, String message) {
        if ("503".equals(code) || "529".equals(code)) {
            return true;
        }
        for (String s : new String[] {code, type, message}) {
            if (s != null && s.toLowerCase(Locale.ROOT).contains("overload")) {
                return true;
            }
        }
        return false;
    }

    private static boolean nonEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    // ---- the parsed chunk ---------------------------------------------------------------------------------

    /** The parts of one chat chunk the state machine needs (choice 0 only; n is 1 upstream). */
    static final class Chunk {
        String model;
        boolean error;
        String errorMessage;
        String errorCode;
        String errorType;
        /** Top-level {@code message}/{@code code}/{@code type}: an {@code event: error} payload without an object. */
        String topMessage;
        String topCode;
        String topType;
        String content;
        String reasoning;
        String reasoningContent;
        String refusal;
        String finishReason;
        List<Detail> details;
        List<ToolFragment> toolCalls;
        boolean usage;
        long promptTokens;
        long completionTokens;
        long cachedTokens;
        long cacheWriteTokens;
        long reasoningTokens;
        boolean reasoningReported;

        /** The error's message: its error object's, else the top-level one (an {@code event: error} payload). */
        String errorText() {
            return errorMessage != null ? errorMessage : topMessage;
        }

        /** Whether the error says overload ({@link ChatStreamToMessages#overloaded}: its code, type or message). */
        boolean overloaded() {
            return ChatStreamToMessages.overloaded(error ? errorCode : topCode, error ? errorType : topType,
                    errorText());
        }

        static Chunk parse(byte[] data, int len) throws IOException {
            try (JsonParser p = JSON.createParser(data, 0, len)) {
                if (p.nextToken() != JsonToken.START_OBJECT) {
                    throw new JsonParseException(p, "a chunk must be a JSON object");
                }
                Chunk c = new Chunk();
                JsonFields.members(p, c::readField);
                if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                    throw new JsonParseException(p, "unexpected content after the chunk");
                }
                return c;
            }
        }

        private void readField(JsonParser p, String name, JsonToken t) throws IOException {
            switch (name) {
                case "model" -> model = string(p, t);
                case "error" -> readError(p, t);
                case "choices" -> readChoices(p, t);
                case "usage" -> {
                    if (t == JsonToken.START_OBJECT) {
                        usage = true;
                    }
                    JsonFields.members(p, t, this::readUsageField);
                }
                case "message" -> topMessage = string(p, t);
                case "code" -> topCode = scalar(p, t);
                case "type" -> topType = string(p, t);
                default -> p.skipChildren();
            }
        }

        private void readError(JsonParser p, JsonToken t) throws IOException {
            if (t == JsonToken.START_OBJECT) {
                error = true;
                JsonFields.members(p, this::readErrorField);
            } else if (t == JsonToken.VALUE_STRING) {
                error = !p.getText().isEmpty();
                errorMessage = p.getText();
            } else {
                error = t == JsonToken.VALUE_TRUE || t == JsonToken.START_ARRAY;
                p.skipChildren();
            }
        }

        private void readErrorField(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "message" -> errorMessage = string(p, v);
                case "code" -> errorCode = scalar(p, v);
                case "type" -> errorType = string(p, v);
                default -> p.skipChildren();
            }
        }

        private void readChoices(JsonParser p, JsonToken t) throws IOException {
            if (t != JsonToken.START_ARRAY) {
                p.skipChildren();
                return;
            }
            boolean first = true;
            for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                if (first && e == JsonToken.START_OBJECT) {
                    JsonFields.members(p, this::readChoiceField);
                } else {
                    p.skipChildren();
                }
                first = false;
            }
        }

        private void readChoiceField(JsonParser p, String name, JsonToken t) throws IOException {
            if ("delta".equals(name) && t == JsonToken.START_OBJECT) {
                JsonFields.members(p, this::readDeltaField);
            } else if ("finish_reason".equals(name)) {
                finishReason = string(p, t);
            } else {
                p.skipChildren();
            }
        }

        private void readDeltaField(JsonParser p, String name, JsonToken t) throws IOException {
            switch (name) {
                case "content" -> content = string(p, t);
                case "reasoning" -> reasoning = string(p, t);
                case "reasoning_content" -> reasoningContent = string(p, t);
                case "refusal" -> refusal = string(p, t);
                case "tool_calls" -> JsonFields.objects(p, t, this::readToolCall);
                case "reasoning_details" -> JsonFields.objects(p, t, this::readDetail);
                default -> p.skipChildren();
            }
        }

        private void readToolCall(JsonParser p) throws IOException {
            ToolFragment f = new ToolFragment();
            JsonFields.members(p, f::readField);
            if (toolCalls == null) {
                toolCalls = new ArrayList<>(1);
            }
            toolCalls.add(f);
        }

        private void readDetail(JsonParser p) throws IOException {
            Detail d = new Detail();
            JsonFields.members(p, d::readField);
            if (details == null) {
                details = new ArrayList<>(1);
            }
            details.add(d);
        }

        private void readUsageField(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "prompt_tokens" -> promptTokens = number(p, v);
                case "completion_tokens" -> completionTokens = number(p, v);
                case "prompt_tokens_details", "completion_tokens_details" ->
                        JsonFields.members(p, v, this::readUsageDetailField);
                default -> p.skipChildren();
            }
        }

        private void readUsageDetailField(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "cached_tokens" -> cachedTokens = number(p, v);
                case "cache_write_tokens" -> cacheWriteTokens = number(p, v);
                case "reasoning_tokens" -> {
                    long n = TokenCount.of(p, v);
                    reasoningTokens = Math.max(0, n);
                    reasoningReported = n >= 0;
                }
                default -> p.skipChildren();
            }
        }

        private static String scalar(JsonParser p, JsonToken t) throws IOException {
            if (t == JsonToken.VALUE_STRING || t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) {
                return p.getText();
            }
            p.skipChildren();
            return null;
        }

        /** A count the gateway believes ({@link TokenCount}); absent or not believed reads as 0. */
        private static long number(JsonParser p, JsonToken t) throws IOException {
            return Math.max(0, TokenCount.of(p, t));
        }
    }

    /** One {@code reasoning_details} entry. */
    static final class Detail {
        String type;
        String text;
        String summary;
        String signature;
        String data;

        void readField(JsonParser p, String name, JsonToken v) throws IOException {
            switch (name) {
                case "type" -> type = string(p, v);
                case "text" -> text = string(p, v);
                case "summary" -> summary = string(p, v);
                case "signature" -> signature = string(p, v);
                case "data" -> data = string(p, v);
                default -> p.skipChildren();
            }
        }
    }

    /** One {@code tool_calls} entry of a delta. */
    static final class ToolFragment {
        boolean hasIndex;
        long index;
        String id;
        String name;
        String arguments;

        void readField(JsonParser p, String field, JsonToken v) throws IOException {
            if ("index".equals(field) && v == JsonToken.VALUE_NUMBER_INT) {
                hasIndex = true;
                index = p.getLongValue();
            } else if ("id".equals(field)) {
                id = string(p, v);
            } else if ("function".equals(field)) {
                JsonFields.members(p, v, this::readFunctionField);
            } else {
                p.skipChildren();
            }
        }

        private void readFunctionField(JsonParser p, String field, JsonToken v) throws IOException {
            if ("name".equals(field)) {
                name = string(p, v);
            } else if ("arguments".equals(field)) {
                arguments = string(p, v);
            } else {
                p.skipChildren();
            }
        }
    }
}
