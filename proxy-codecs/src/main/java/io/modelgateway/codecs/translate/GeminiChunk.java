package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.io.SegmentedStringWriter;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.BufferRecycler;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.usage.TokenCount;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One Gemini {@code GenerateContentResponse} as read: a whole answer of {@code generateContent}, or one event of
 * {@code streamGenerateContent?alt=sse} (each event carries a whole, small response). Read with jackson-core's
 * streaming parser into the handful of fields both answer styles need — the first candidate's parts (text, thought
 * text, thought signature, function call), its finish reason, the prompt's block reason, {@code usageMetadata},
 * {@code modelVersion}, {@code responseId}, or an {@code error} object — and nothing else is kept.
 *
 * <p>Stream events arrive as the SSE scanner cut them: the {@code data:} lines are joined by {@link SseData}, comments
 * and other fields ignored; an event with no {@code data:} line whose text is a JSON object (how an error is sent
 * into an open stream) is read as it is. One instance is reused for every event of a stream (the arrays grow once;
 * the strings a part holds are what the caller is sent anyway). Event-loop confined.
 */
final class GeminiChunk {
    /** Reads bodies whose strings may be long (a large answer) and writes function-call arguments compactly. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
            .build();
    /** A count the response did not carry. */
    static final long ABSENT = -1;

    /** What one part of a candidate's content is. */
    enum Kind { TEXT, THOUGHT, CALL, OTHER }

    /** One part; reused across events. */
    static final class Part {
        Kind kind;
        String text;
        /** {@code thoughtSignature}, null when absent. */
        String signature;
        /** The function call's name, id (null when the provider gave none) and arguments as compact JSON. */
        String name;
        String id;
        String args;

        void reset() {
            kind = Kind.OTHER;
            text = null;
            signature = null;
            name = null;
            id = null;
            args = null;
        }
    }

    private final JsonFields.Member topField = this::topField;
    private final JsonFields.Member candidateField = this::candidateField;
    private final JsonFields.Member contentField = this::contentField;
    private final JsonFields.Member partField = this::partField;
    private final JsonFields.Member callField = this::callField;
    private final JsonFields.Member feedbackField = this::feedbackField;
    private final JsonFields.Member usageField = this::usageField;
    private final JsonFields.Member errorField = this::errorField;
    private final JsonFields.Element part = this::part;
    private final JsonFields.Element candidate = this::candidate;

    /** The stream event's lines; made by the first {@link #readEvent}, as a whole answer needs none. */
    private SseData sse;

    private final List<Part> parts = new ArrayList<>();
    /** Parts in use in {@link #parts} for this response. */
    int partCount;
    /** Whether the first candidate was seen (its index 0, or the first one listed). */
    boolean candidateSeen;
    String finishReason;
    String finishMessage;
    String blockReason;
    String blockReasonMessage;
    String modelVersion;
    String responseId;
    boolean hasUsage;
    long promptTokens;
    long candidatesTokens;
    long cachedTokens;
    long thoughtsTokens;
    long toolUseTokens;
    /** Some count was not a count the gateway believes ({@link TokenCount}): the usage says nothing reliable. */
    boolean implausibleUsage;
    boolean error;
    int errorCode;
    String errorStatus;
    String errorMessage;

    /** The part at {@code i} of this response ({@code i < partCount}). */
    Part part(int i) {
        return parts.get(i);
    }

    /**
     * Reads one stream event (borrowed; its reader index is left alone). Returns false when it carries nothing to
     * read (a comment, a blank event); throws when its data is not one JSON object.
     */
    boolean readEvent(ByteBuf event) throws IOException {
        if (sse == null) {
            sse = new SseData(1024);
        }
        int dataLen = sse.read(event);
        if (sse.bareDataLine()) {
            // Unlike the other stream readers, which take a colon-less data line as empty data (as the SSE spec
            // does), a Gemini event with one is unreadable; making them agree is a behaviour change of its own.
            throw new IOException("a data line without a colon");
        }
        if (dataLen < 0) {
            // No data line: a bare JSON object (an error written into the open stream), or nothing at all.
            byte[] raw = sse.raw();
            int n = sse.rawLength();
            int first = 0;
            while (first < n && SseData.isSpace(raw[first])) {
                first++;
            }
            if (first == n || raw[first] != '{') {
                return false;
            }
            read(raw, first, n - first);
            return true;
        }
        if (sse.isBlank()) {
            return false;
        }
        read(sse.data(), 0, dataLen);
        return true;
    }

    /** A whole answer body (borrowed, left untouched) as read; one it cannot read is the caller's 502. */
    static GeminiChunk answer(ByteBuf body) throws TranslationException {
        GeminiChunk c = new GeminiChunk();
        try {
            c.readBody(body);
        } catch (IOException | RuntimeException e) {
            throw TranslationException.unreadableAnswer();
        }
        return c;
    }

    /** Reads a whole answer body (borrowed, left untouched). */
    void readBody(ByteBuf body) throws IOException {
        int n = body.readableBytes();
        byte[] bytes;
        int from;
        if (body.hasArray()) {
            bytes = body.array();
            from = body.arrayOffset() + body.readerIndex();
        } else {
            bytes = new byte[n];
            body.getBytes(body.readerIndex(), bytes);
            from = 0;
        }
        read(bytes, from, n);
    }

    /** Whether the response carried an {@code error} object instead of an answer. */
    GatewayError error() {
        ErrorKind kind = kindOf(errorCode, errorStatus);
        String message = errorMessage == null ? null : ErrorTranslator.clean(errorMessage, null, null);
        return new GatewayError(kind, message != null ? message : "The upstream provider reported an error.", null,
                null);
    }

    /** Google's error {@code code} (an HTTP status) and {@code status} name → the kind the caller is told. */
    static ErrorKind kindOf(int code, String status) {
        if (status != null) {
            switch (status) {
                case "RESOURCE_EXHAUSTED" -> {
                    return ErrorKind.RATE_LIMIT;
                }
                case "UNAVAILABLE" -> {
                    return ErrorKind.OVERLOADED;
                }
                case "DEADLINE_EXCEEDED" -> {
                    return ErrorKind.UPSTREAM_TIMEOUT;
                }
                case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE" -> {
                    return ErrorKind.INVALID_REQUEST;
                }
                default -> {
                    // the code decides
                }
            }
        }
        return code > 0 ? ErrorTranslator.kindForStatus(code) : ErrorKind.UPSTREAM_ERROR;
    }

    /**
     * Anthropic's {@code stop_reason} for a Gemini {@code finishReason} ({@code calls}: the answer holds function
     * calls): STOP is {@code end_turn} ({@code tool_use} with calls), MAX_TOKENS {@code max_tokens}, a filter's
     * stop {@code refusal}; anything else (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, …) {@code end_turn}. Chat
     * callers get it through {@link StopReasons#toFinishReason} ({@code length}, {@code content_filter}, …).
     */
    static String stopReason(String finishReason, boolean calls) {
        if ("MAX_TOKENS".equals(finishReason)) {
            return "max_tokens";
        }
        if (filtered(finishReason)) {
            return "refusal";
        }
        return calls ? "tool_use" : "end_turn";
    }

    /** Whether a finish reason says the provider's content filters stopped the answer. */
    static boolean filtered(String finishReason) {
        if (finishReason == null) {
            return false;
        }
        return switch (finishReason) {
            case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
                    "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION" -> true;
            default -> false;
        };
    }

    /**
     * The clear error of a blocked exchange: the prompt refused ({@code promptFeedback.blockReason}), or an answer
     * the filters stopped before any of it was produced. A 400 ({@code content_filter}): the content, not the
     * gateway or the provider, is what failed.
     */
    GatewayError blocked() {
        String message = blockReason != null
                ? "The request was blocked by the provider's content filters (blockReason " + blockReason + ")."
                        + (blockReasonMessage == null ? "" : " " + ErrorTranslator.clean(blockReasonMessage, null, null))
                : "The answer was blocked by the provider's content filters (finishReason " + finishReason + ")."
                        + (finishMessage == null ? "" : " " + ErrorTranslator.clean(finishMessage, null, null));
        return new GatewayError(ErrorKind.INVALID_REQUEST, message, null, "content_filter");
    }

    /** The usage of this response in the gateway's terms (absent counts as 0). */
    Usage usage() {
        return GeminiUsage.usage(Math.max(promptTokens, 0), Math.max(candidatesTokens, 0), Math.max(cachedTokens, 0),
                Math.max(thoughtsTokens, 0), Math.max(toolUseTokens, 0));
    }

    /** Whether {@code thoughtsTokenCount} was reported (the chat answer then details its reasoning tokens). */
    boolean thoughtsReported() {
        return thoughtsTokens >= 0;
    }

    private void read(byte[] bytes, int from, int len) throws IOException {
        reset();
        try (JsonParser p = JSON.createParser(bytes, from, len)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new JsonParseException(p, "a Gemini response must be a JSON object");
            }
            JsonFields.members(p, topField);
            if (p.nextToken() != null) {
                throw new JsonParseException(p, "trailing data after the response's JSON object");
            }
        }
    }

    private void reset() {
        partCount = 0;
        candidateSeen = false;
        finishReason = null;
        finishMessage = null;
        blockReason = null;
        blockReasonMessage = null;
        modelVersion = null;
        responseId = null;
        hasUsage = false;
        promptTokens = ABSENT;
        candidatesTokens = ABSENT;
        cachedTokens = ABSENT;
        thoughtsTokens = ABSENT;
        toolUseTokens = ABSENT;
        implausibleUsage = false;
        error = false;
        errorCode = 0;
        errorStatus = null;
        errorMessage = null;
    }

    private void topField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "candidates" -> JsonFields.objects(p, t, candidate);
            case "promptFeedback" -> JsonFields.members(p, t, feedbackField);
            case "usageMetadata" -> {
                if (JsonFields.members(p, t, usageField)) {
                    hasUsage = true;
                }
            }
            case "modelVersion" -> modelVersion = JsonFields.string(p, t);
            case "responseId" -> responseId = JsonFields.string(p, t);
            case "error" -> {
                error = true;
                if (t == JsonToken.VALUE_STRING) {
                    errorMessage = p.getText();
                } else {
                    JsonFields.members(p, t, errorField);
                }
            }
            default -> p.skipChildren();
        }
    }

    /** Only the first candidate is read: the gateway never asks for more than one. */
    private void candidate(JsonParser p) throws IOException {
        if (candidateSeen) {
            p.skipChildren();
            return;
        }
        candidateSeen = true;
        JsonFields.members(p, candidateField);
    }

    private void candidateField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "content" -> JsonFields.members(p, t, contentField);
            case "finishReason" -> finishReason = JsonFields.string(p, t);
            case "finishMessage" -> finishMessage = JsonFields.string(p, t);
            default -> p.skipChildren(); // safetyRatings, citationMetadata, groundingMetadata, index, avgLogprobs…
        }
    }

    private void contentField(JsonParser p, String name, JsonToken t) throws IOException {
        if (name.equals("parts")) {
            JsonFields.objects(p, t, part);
        } else {
            p.skipChildren(); // role
        }
    }

    private void part(JsonParser p) throws IOException {
        if (partCount == parts.size()) {
            parts.add(new Part());
        }
        Part current = parts.get(partCount++);
        current.reset();
        JsonFields.members(p, partField);
        if (current.kind == Kind.OTHER && current.text != null) {
            current.kind = Kind.TEXT;
        }
    }

    private void partField(JsonParser p, String name, JsonToken t) throws IOException {
        Part current = parts.get(partCount - 1);
        switch (name) {
            case "text" -> current.text = JsonFields.string(p, t);
            case "thought" -> {
                if (t == JsonToken.VALUE_TRUE) {
                    current.kind = Kind.THOUGHT;
                }
            }
            case "thoughtSignature" -> current.signature = JsonFields.string(p, t);
            case "functionCall" -> {
                if (JsonFields.members(p, t, callField)) {
                    current.kind = Kind.CALL;
                }
            }
            default -> p.skipChildren(); // inlineData, executableCode, codeExecutionResult, …: no caller form
        }
    }

    private void callField(JsonParser p, String name, JsonToken t) throws IOException {
        Part current = parts.get(partCount - 1);
        switch (name) {
            case "name" -> current.name = JsonFields.string(p, t);
            case "id" -> current.id = JsonFields.string(p, t);
            case "args" -> {
                if (t == JsonToken.START_OBJECT) {
                    current.args = copy(p);
                } else {
                    p.skipChildren();
                }
            }
            default -> p.skipChildren();
        }
    }

    /** The object the parser is on, as compact JSON text (the parser is left on its end). */
    private static String copy(JsonParser p) throws IOException {
        SegmentedStringWriter w = new SegmentedStringWriter(new BufferRecycler());
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.copyCurrentStructure(p);
        }
        return w.getAndClear();
    }

    private void feedbackField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "blockReason" -> blockReason = JsonFields.string(p, t);
            case "blockReasonMessage" -> blockReasonMessage = JsonFields.string(p, t);
            default -> p.skipChildren();
        }
    }

    private void usageField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "promptTokenCount" -> promptTokens = count(p, t);
            case "candidatesTokenCount" -> candidatesTokens = count(p, t);
            case "cachedContentTokenCount" -> cachedTokens = count(p, t);
            case "thoughtsTokenCount" -> thoughtsTokens = count(p, t);
            case "toolUsePromptTokenCount" -> toolUseTokens = count(p, t);
            default -> p.skipChildren(); // totalTokenCount (their sum), the per-modality details, trafficType
        }
    }

    private long count(JsonParser p, JsonToken t) throws IOException {
        long c = TokenCount.of(p, t);
        if (c == TokenCount.IMPLAUSIBLE) {
            implausibleUsage = true;
        }
        return c < 0 ? ABSENT : c;
    }

    private void errorField(JsonParser p, String name, JsonToken t) throws IOException {
        switch (name) {
            case "code" -> {
                if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
                    errorCode = p.getIntValue();
                } else {
                    p.skipChildren();
                }
            }
            case "status" -> errorStatus = JsonFields.string(p, t);
            case "message" -> errorMessage = JsonFields.string(p, t);
            default -> p.skipChildren();
        }
    }
}
