package io.modelgateway.codecs.translate;

import static io.modelgateway.codecs.translate.JsonFields.string;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.usage.TokenCount;
import io.netty.buffer.ByteBuf;
import java.io.IOException;

/**
 * One Anthropic SSE event, read into the handful of fields the chat stream needs: the SSE field lines of the
 * event ({@link SseData}: its {@code data:} lines joined, its {@code event:} name; comments and other fields
 * ignored), then the data's JSON with jackson-core's streaming parser, skipping everything
 * else without building a tree. Reused for every event of a stream (no allocation beyond the strings kept).
 */
final class MessagesStreamEvent {
    private static final JsonFactory JSON = new JsonFactory();
    /** A count field that the event did not carry. */
    static final long ABSENT = -1;

    /** The member readers, made once so that reading an event allocates nothing for them. */
    private final JsonFields.Member topField = this::topField;
    private final JsonFields.Member messageField = this::messageField;
    private final JsonFields.Member blockField = this::blockField;
    private final JsonFields.Member deltaField = this::deltaField;
    private final JsonFields.Member usageField = this::usageField;
    private final JsonFields.Member outputDetailsField = this::outputDetailsField;
    private final JsonFields.Member errorField = this::errorField;

    private final SseData sse = new SseData();

    /** The {@code event:} line's value, null without one. */
    String eventName;
    /** The JSON's top-level {@code type}. */
    String type;
    int index;
    boolean hasIndex;
    String messageModel;
    String blockType;
    String blockId;
    String blockName;
    String blockText;
    String blockThinking;
    String blockSignature;
    String blockData;
    String deltaType;
    String deltaText;
    String deltaPartialJson;
    String deltaThinking;
    String deltaSignature;
    String deltaStopReason;
    String errorType;
    String errorMessage;
    /** From {@code message.usage} (message_start) or {@code usage} (message_delta). */
    long inputTokens;
    long outputTokens;
    long cacheCreationTokens;
    long cacheReadTokens;
    long thinkingTokens;

    /**
     * Reads one event (borrowed; its reader index is left alone). Returns false when it carries no data
     * (a comment, a blank event, an event line alone); throws when the data is not one JSON object.
     */
    boolean read(ByteBuf event) throws IOException {
        reset();
        int dataLen = sse.read(event);
        eventName = sse.eventName();
        if (dataLen <= 0 || sse.isBlank()) {
            return false;
        }
        parseJson(dataLen);
        return true;
    }

    /** The event's type: its JSON's {@code type}, else its {@code event:} line's name; null with neither. */
    String kind() {
        return type != null ? type : eventName;
    }

    /** Whether this is an error event, by its {@code event:} line or its type. */
    boolean isError() {
        return "error".equals(eventName) || "error".equals(kind());
    }

    /** The error an error event carries, as the caller is told it. */
    GatewayError error() {
        String message = errorMessage == null ? null : ErrorTranslator.clean(errorMessage, null, null);
        return new GatewayError(ErrorTranslator.kindOfAnthropicType(errorType),
                message != null ? message : "The upstream provider reported an error.", null, null);
    }

    private void parseJson(int dataLen) throws IOException {
        try (JsonParser p = JSON.createParser(sse.data(), 0, dataLen)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new JsonParseException(p, "event data is not a JSON object");
            }
            JsonFields.members(p, topField);
            if (p.nextToken() != null) {
                throw new JsonParseException(p, "trailing data after the event's JSON object");
            }
        }
    }

    private void topField(JsonParser p, String name, JsonToken v) throws IOException {
        switch (name) {
            case "type" -> type = string(p, v);
            case "index" -> {
                if (v == JsonToken.VALUE_NUMBER_INT) {
                    index = p.getIntValue();
                    hasIndex = true;
                } else {
                    p.skipChildren();
                }
            }
            case "message" -> JsonFields.members(p, v, messageField);
            case "content_block" -> JsonFields.members(p, v, blockField);
            case "delta" -> JsonFields.members(p, v, deltaField);
            case "usage" -> JsonFields.members(p, v, usageField);
            case "error" -> error(p, v);
            default -> p.skipChildren();
        }
    }

    private void messageField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "model" -> messageModel = string(p, t);
            case "usage" -> JsonFields.members(p, t, usageField);
            default -> p.skipChildren();
        }
    }

    private void blockField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "type" -> blockType = string(p, t);
            case "id" -> blockId = string(p, t);
            case "name" -> blockName = string(p, t);
            case "text" -> blockText = string(p, t);
            case "thinking" -> blockThinking = string(p, t);
            case "signature" -> blockSignature = string(p, t);
            case "data" -> blockData = string(p, t);
            default -> p.skipChildren(); // input ({}), citations, server-tool fields
        }
    }

    private void deltaField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "type" -> deltaType = string(p, t);
            case "text" -> deltaText = string(p, t);
            case "partial_json" -> deltaPartialJson = string(p, t);
            case "thinking" -> deltaThinking = string(p, t);
            case "signature" -> deltaSignature = string(p, t);
            case "stop_reason" -> deltaStopReason = string(p, t);
            default -> p.skipChildren(); // stop_sequence, citation, …
        }
    }

    private void usageField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "input_tokens" -> inputTokens = count(p, t);
            case "output_tokens" -> outputTokens = count(p, t);
            case "cache_creation_input_tokens" -> cacheCreationTokens = count(p, t);
            case "cache_read_input_tokens" -> cacheReadTokens = count(p, t);
            case "output_tokens_details" -> JsonFields.members(p, t, outputDetailsField);
            default -> p.skipChildren(); // cache_creation breakdown, server_tool_use, service_tier
        }
    }

    private void outputDetailsField(JsonParser p, String name, JsonToken t) throws IOException {
        if (name.equals("thinking_tokens")) {
            thinkingTokens = count(p, t);
        } else {
            p.skipChildren();
        }
    }

    private void error(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            errorMessage = p.getText();
            return;
        }
        JsonFields.members(p, v, errorField);
    }

    private void errorField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "type" -> errorType = string(p, t);
            case "message" -> errorMessage = string(p, t);
            default -> p.skipChildren();
        }
    }

    /** A token count; anything but a count the gateway believes ({@link TokenCount}) reads as absent. */
    private static long count(JsonParser p, JsonToken t) throws IOException {
        long c = TokenCount.of(p, t);
        return c < 0 ? ABSENT : c;
    }

    private void reset() {
        eventName = null;
        type = null;
        index = 0;
        hasIndex = false;
        messageModel = null;
        blockType = null;
        blockId = null;
        blockName = null;
        blockText = null;
        blockThinking = null;
        blockSignature = null;
        blockData = null;
        deltaType = null;
        deltaText = null;
        deltaPartialJson = null;
        deltaThinking = null;
        deltaSignature = null;
        deltaStopReason = null;
        errorType = null;
        errorMessage = null;
        inputTokens = ABSENT;
        outputTokens = ABSENT;
        cacheCreationTokens = ABSENT;
        cacheReadTokens = ABSENT;
        thinkingTokens = ABSENT;
    }
}
