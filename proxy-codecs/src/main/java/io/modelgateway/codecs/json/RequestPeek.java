package io.modelgateway.codecs.json;

import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;

/**
 * Reads a request body once, with our own strict pull scanner ({@link JsonScanner}, one per thread; see
 * {@code scanner} for how it reaches the bytes), and picks out what routing and validation need: the model (with its
 * byte offsets, so it can be spliced), stream flags and limits. Everything else is skipped token by token, never
 * built into a tree (design rule 2). The scanner allocates nothing while it reads: a peek makes its result, the
 * Strings the result keeps, and an error when there is one.
 *
 * <p>A name repeated in an object the peek reads — the top level, {@code messages[i]}, {@code stream_options},
 * {@code thinking} — is a 400 ({@link DuplicateKeys}): the gateway would act on one value and an upstream might
 * act on the other. Every top-level name counts, also those the gateway ignores: the upstream reads them all.
 * Objects the peek skips are passed on as bytes and never interpreted here, so they are left alone.
 *
 * <p>The result is a plain value: the peek neither retains nor releases the body.
 */
public final class RequestPeek {
    /** Deeper JSON than this is refused before it can cost stack or time. */
    public static final int MAX_DEPTH = 128;
    /** Longer numbers (counted in digits) are refused too: nothing the peek reads needs them. */
    private static final int MAX_NUMBER_DIGITS = 64;

    /** Embeddings: at most this many inputs per request (contract 9). */
    public static final int MAX_EMBEDDING_INPUTS = 2048;

    // ---- results ----
    private String model;
    private int modelStart = -1;
    private int modelEnd = -1;
    private boolean stream;
    private boolean hasStreamOptions;
    private boolean includeUsage;
    /** Offset just after the body's opening brace. */
    private int bodyInner = -1;
    /** Offset just after the opening brace of {@code stream_options}, and how many members it has. */
    private int streamOptionsInner = -1;
    private int streamOptionsMembers;
    /** Offsets of the value token of {@code stream_options.include_usage} (false or null); -1 when absent. */
    private int includeUsageStart = -1;
    private int includeUsageEnd = -1;
    private int maxTokens = -1;
    private int maxCompletionTokens = -1;
    private int n = 1;
    private int thinkingBudget = -1;
    private String encodingFormat;
    private int encodingFormatStart = -1;
    private int encodingFormatEnd = -1;
    private int dimensions = -1;
    private boolean hasTemperature;
    private int temperatureStart = -1;
    private int temperatureEnd = -1;
    /** Offset of the current member's name token (its opening quote), set for every top-level field. */
    private int memberStart;
    /** Offsets of the whole {@code "model": …} and {@code "stream": …} members (name to value end); -1 when absent. */
    private int modelMemberStart = -1;
    private int streamMemberStart = -1;
    private int streamMemberEnd = -1;
    private boolean sawMessages;
    private boolean sawInput;
    /** Responses: {@code previous_response_id} as sent (a non-empty string), else null. */
    private String previousResponseId;
    private boolean systemRoleAllowed;
    private GatewayError error;

    // ---- parse state ----
    private JsonScanner scanner;
    /** This thread's scratch space: the scanner, the copy of a body that is not on the heap, and the name sets. */
    private Scratch scratch;

    private RequestPeek() {
    }

    /**
     * Peeks a body for the given endpoint. {@code systemRoleAllowed}: whether {@code messages[].role}
     * may be {@code system} on the messages endpoint (contract 5.11, version 2026-10-21 and later).
     */
    public static RequestPeek peek(Endpoint endpoint, ByteBuf body, boolean systemRoleAllowed) {
        RequestPeek peek = new RequestPeek();
        peek.run(endpoint, body, systemRoleAllowed);
        return peek;
    }

    public String model() {
        return model;
    }

    /** Offset of the model's JSON string token (its opening quote) from the body's reader index. */
    public int modelStart() {
        return modelStart;
    }

    /** Offset just past the model token's closing quote. */
    public int modelEnd() {
        return modelEnd;
    }

    public boolean stream() {
        return stream;
    }

    /** Offset of the whole top-level {@code "model": "…"} member (its name token), -1 when absent; it ends at {@link #modelEnd}. */
    public int modelMemberStart() {
        return modelMemberStart;
    }

    /** Offsets of the whole top-level {@code "stream": …} member (name to the end of its value), -1 when absent. */
    public int streamMemberStart() {
        return streamMemberStart;
    }

    public int streamMemberEnd() {
        return streamMemberEnd;
    }

    /** Offset just after the body's opening brace (where a member can be inserted), -1 when not an object. */
    public int bodyInner() {
        return bodyInner;
    }

    /**
     * Chat streams: the edit that makes the upstream send its usage chunk ({@code stream_options.include_usage}
     * true) when the caller did not ask for it, so every exchange is accounted from the upstream's own counts
     * (the gateway then withholds that chunk from the caller, GD-21). Null when no edit is needed: not a stream,
     * or the caller asked for usage already. Keeps whatever else {@code stream_options} holds.
     */
    public BodySplicer.Edit includeUsageEdit() {
        if (!stream || includeUsage || bodyInner < 0) {
            return null;
        }
        if (includeUsageStart >= 0) {
            return new BodySplicer.Edit(includeUsageStart, includeUsageEnd, TRUE);
        }
        if (streamOptionsInner >= 0) {
            return new BodySplicer.Edit(streamOptionsInner, streamOptionsInner,
                    streamOptionsMembers == 0 ? INCLUDE_USAGE : INCLUDE_USAGE_COMMA);
        }
        return new BodySplicer.Edit(bodyInner, bodyInner, STREAM_OPTIONS_MEMBER);
    }

    private static final byte[] TRUE = "true".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] INCLUDE_USAGE = "\"include_usage\":true".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] INCLUDE_USAGE_COMMA =
            "\"include_usage\":true,".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] STREAM_OPTIONS_MEMBER =
            "\"stream_options\":{\"include_usage\":true},".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** The effective output cap, -1 when absent ({@code max_completion_tokens} wins over {@code max_tokens}). */
    public int maxTokens() {
        return maxCompletionTokens > 0 ? maxCompletionTokens : maxTokens;
    }

    public int n() {
        return n;
    }

    public String encodingFormat() {
        return encodingFormat;
    }

    /** Offsets of the {@code encoding_format} string token (quotes included), -1 when absent. */
    public int encodingFormatStart() {
        return encodingFormatStart;
    }

    public int encodingFormatEnd() {
        return encodingFormatEnd;
    }

    /**
     * Chat and Responses: offsets of the whole {@code "temperature": value} member (name token to the end of the value),
     * -1 when absent; what GD-19 removes for models that take no temperature.
     */
    public int temperatureMemberStart() {
        return temperatureStart;
    }

    public int temperatureMemberEnd() {
        return temperatureEnd;
    }

    /** Whether the request sets {@code temperature} (GD-19 needs to know). */
    public boolean hasTemperature() {
        return hasTemperature;
    }

    public int dimensions() {
        return dimensions;
    }

    /**
     * Responses only: the {@code previous_response_id} the request continues from, null when it starts afresh. Only a
     * provider that keeps responses can honour it (contract 12.1).
     */
    public String previousResponseId() {
        return previousResponseId;
    }

    /** The validation error, or null when the body is acceptable. */
    public GatewayError error() {
        return error;
    }

    public boolean ok() {
        return error == null;
    }

    private void run(Endpoint endpoint, ByteBuf body, boolean systemRoleAllowed) {
        if (!body.isReadable()) {
            fail(GatewayError.invalid("The request body is empty; a JSON object is required.", null,
                    "invalid_json"));
            return;
        }
        scratch = SCRATCH.get();
        scratch.topNames.clear();
        scanner = scanner(body, scratch);
        try {
            if (next() != JsonToken.START_OBJECT) {
                fail(GatewayError.invalid("The request body must be a JSON object.", null, "invalid_json"));
                return;
            }
            bodyInner = scanner.tokenEnd();
            switch (endpoint) {
                case CHAT_COMPLETIONS -> chat();
                case EMBEDDINGS -> embeddings();
                case MESSAGES -> messages(systemRoleAllowed);
                case COUNT_TOKENS -> countTokens(systemRoleAllowed);
                case RESPONSES -> responses();
                case RESPONSES_INPUT_TOKENS -> readTopLevel(RequestPeek::inputTokensField);
                default -> throw new IllegalStateException(endpoint.name());
            }
            if (error == null && !scanner.atEnd()) {
                fail(GatewayError.invalid("Unexpected data after the JSON object.", null, "invalid_json"));
            }
        } catch (JsonScanException e) {
            fail(e.isLimit()
                    ? GatewayError.invalid("The JSON body is too deeply nested or has a number that is too long.",
                            null, "invalid_json")
                    : GatewayError.invalid("We could not parse the JSON body of your request: "
                            + conciseMessage(e), null, "invalid_json"));
        } catch (RuntimeException e) {
            fail(GatewayError.invalid("We could not parse the JSON body of your request: " + conciseMessage(e),
                    null, "invalid_json"));
        } finally {
            scanner.clear(); // the body is the caller's: the thread's scanner must not keep it reachable
            scanner = null;
            scratch = null; // the thread's, not the result's
        }
        if (error == null) {
            requireCommon(endpoint);
        }
    }

    // ---------------------------------------------------------------- endpoints

    private void chat() throws JsonScanException {
        readTopLevel(RequestPeek::chatField);
        if (error != null) {
            return;
        }
        if (!sawMessages) {
            missing("messages");
        } else if (hasStreamOptions && !stream) {
            fail(GatewayError.invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                    "stream_options", "invalid_value"));
        }
    }

    private void chatField(String name, JsonToken v) throws JsonScanException {
        switch (name) {
            case "model" -> readModel(v);
            case "messages" -> {
                sawMessages = true;
                readMessages(v, false, true);
            }
            case "stream" -> stream = readBoolean(v, "stream");
            case "stream_options" -> readStreamOptions(v);
            case "max_tokens" -> maxTokens = readPositiveInt(v, "max_tokens");
            case "max_completion_tokens" -> maxCompletionTokens = readPositiveInt(v, "max_completion_tokens");
            case "n" -> n = readPositiveInt(v, "n");
            case "temperature" -> readRemovableTemperature(v);
            case "top_p" -> readRange(v, "top_p", 0, 1);
            case "presence_penalty" -> readRange(v, "presence_penalty", -2, 2);
            case "frequency_penalty" -> readRange(v, "frequency_penalty", -2, 2);
            case "stop" -> readStop(v);
            default -> skip(v);
        }
    }

    private void messages(boolean systemRoleAllowed) throws JsonScanException {
        this.systemRoleAllowed = systemRoleAllowed;
        readTopLevel(RequestPeek::messagesField);
        if (error != null) {
            return;
        }
        if (maxTokens < 0) {
            missing("max_tokens");
        } else if (!sawMessages) {
            missing("messages");
        } else if (thinkingBudget >= 0 && (thinkingBudget < 1024 || thinkingBudget >= maxTokens)) {
            fail(GatewayError.invalid("thinking.budget_tokens: must be at least 1024 and less than max_tokens.",
                    "thinking.budget_tokens", "invalid_value"));
        }
    }

    /** A count_tokens body: a messages request without {@code max_tokens}; never a stream. */
    private void countTokens(boolean systemRoleAllowed) throws JsonScanException {
        this.systemRoleAllowed = systemRoleAllowed;
        readTopLevel(RequestPeek::messagesField);
        if (error == null && !sawMessages) {
            missing("messages");
        }
        stream = false;
    }

    private void messagesField(String name, JsonToken v) throws JsonScanException {
        switch (name) {
            case "model" -> readModel(v);
            case "messages" -> {
                sawMessages = true;
                readMessages(v, true, systemRoleAllowed);
            }
            case "max_tokens" -> maxTokens = readPositiveInt(v, "max_tokens");
            case "stream" -> {
                streamMemberStart = memberStart;
                stream = readBoolean(v, "stream");
                streamMemberEnd = scanner.tokenEnd();
            }
            case "temperature" -> {
                hasTemperature = true;
                readRange(v, "temperature", 0, 1);
            }
            case "top_p" -> readRange(v, "top_p", 0, 1);
            case "thinking" -> readThinking(v);
            case "stop_sequences" -> readStopSequences(v);
            default -> skip(v);
        }
    }

    /**
     * Contract 12.1: what routing and limits need of a Responses request ({@code model}, {@code stream},
     * {@code max_output_tokens}, {@code previous_response_id}) and the types of the fields every provider reads.
     * {@code input} may be absent (a continuation of a stored response); a translation then finds nothing to send.
     */
    private void responses() throws JsonScanException {
        readTopLevel(RequestPeek::responsesField);
    }

    private void responsesField(String name, JsonToken v) throws JsonScanException {
        switch (name) {
            case "model" -> readModel(v);
            case "input" -> readResponsesInput(v);
            case "stream" -> stream = readBoolean(v, "stream");
            case "max_output_tokens" -> maxTokens = readPositiveInt(v, "max_output_tokens");
            case "previous_response_id" -> {
                if (v != JsonToken.VALUE_STRING) {
                    invalidType("previous_response_id", "a string", v);
                } else if (scanner.textLength() > 0) {
                    previousResponseId = scanner.text();
                }
            }
            case "instructions" -> {
                if (v != JsonToken.VALUE_STRING) {
                    invalidType("instructions", "a string", v);
                }
            }
            case "temperature" -> readRemovableTemperature(v);
            case "top_p" -> readRange(v, "top_p", 0, 1);
            case "reasoning", "text" -> readObjectNames(v, name);
            case "tools" -> {
                if (v != JsonToken.START_ARRAY) {
                    invalidType("tools", "an array", v);
                } else {
                    skip(v);
                }
            }
            default -> skip(v);
        }
    }

    /** {@code POST /responses/input_tokens}: the model routes it; the rest is the provider's to read. */
    private void inputTokensField(String name, JsonToken v) throws JsonScanException {
        switch (name) {
            case "model" -> readModel(v);
            case "input" -> readResponsesInput(v);
            default -> skip(v);
        }
    }

    /** A string, or an array of item objects, each without a repeated name; the items' insides are skipped. */
    private void readResponsesInput(JsonToken v) throws JsonScanException {
        if (v == JsonToken.VALUE_STRING) {
            return;
        }
        if (v != JsonToken.START_ARRAY) {
            invalidType("input", "a string or an array of input items", v);
            return;
        }
        int i = 0;
        JsonToken t;
        while ((t = next()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                invalidType("input[" + i + "]", "an object", t); // the path is made only for an error
                return;
            }
            if (!skipMembers("input", i)) {
                return;
            }
            i++;
        }
    }

    /** An object whose own names must not repeat ({@code reasoning}, {@code text}); its values are skipped. */
    private void readObjectNames(JsonToken v, String path) throws JsonScanException {
        if (v != JsonToken.START_OBJECT) {
            invalidType(path, "an object", v);
            return;
        }
        skipMembers(path, -1);
    }

    /** The members of the object just opened, each name once, their values skipped; false after a repeated name. */
    private boolean skipMembers(String path, int index) throws JsonScanException {
        DuplicateKeys.Names names = innerNames();
        while (next() == JsonToken.FIELD_NAME) {
            if (!firstTime(names, scanner.currentName(), path, index)) {
                return false;
            }
            skip(next());
        }
        return true;
    }

    private void embeddings() throws JsonScanException {
        readTopLevel(RequestPeek::embeddingsField);
        if (error == null && !sawInput) {
            missing("input");
        }
    }

    private void embeddingsField(String name, JsonToken v) throws JsonScanException {
        switch (name) {
            case "model" -> readModel(v);
            case "input" -> {
                sawInput = true;
                readEmbeddingInput(v);
            }
            case "encoding_format" -> {
                if (v != JsonToken.VALUE_STRING) {
                    invalidType("encoding_format", "a string", v);
                } else {
                    encodingFormat = scanner.text();
                    encodingFormatStart = scanner.tokenStart();
                    encodingFormatEnd = scanner.tokenEnd();
                    if (!encodingFormat.equals("float") && !encodingFormat.equals("base64")) {
                        fail(GatewayError.invalid("Invalid value for 'encoding_format': expected 'float' or "
                                + "'base64'.", "encoding_format", "invalid_value"));
                    }
                }
            }
            case "dimensions" -> dimensions = readPositiveInt(v, "dimensions");
            default -> skip(v);
        }
    }

    private void requireCommon(Endpoint endpoint) {
        if (model == null) {
            missing("model");
        } else if (model.isEmpty()) {
            fail(GatewayError.invalid("Invalid value for 'model': must not be empty.", "model", "invalid_value"));
        }
    }

    /**
     * Reads one top-level member of {@code peek} whose value starts with token {@code v} (never null: null means
     * absent). The peek is a parameter so that the readers are {@code RequestPeek::chatField} and the like, made once,
     * not a lambda bound to each peek.
     */
    @FunctionalInterface
    private interface FieldReader {
        void read(RequestPeek peek, String name, JsonToken v) throws JsonScanException;
    }

    /** Visits every top-level member until the object ends or a field fails validation. */
    private void readTopLevel(FieldReader reader) throws JsonScanException {
        while (next() == JsonToken.FIELD_NAME && error == null) {
            String name = scanner.currentName();
            if (!scratch.topNames.add(name)) {
                fail(DuplicateKeys.error(name));
                return;
            }
            memberStart = scanner.nameStart();
            JsonToken v = next();
            if (v != JsonToken.VALUE_NULL) { // an optional field sent as null is absent (1.3)
                reader.read(this, name, v);
            } else if (name.equals("stream")) {
                streamMemberStart = memberStart; // absent, but its bytes are there for whoever must remove them
                streamMemberEnd = scanner.tokenEnd();
            }
        }
    }

    // ---------------------------------------------------------------- fields

    private void readModel(JsonToken v) throws JsonScanException {
        if (v != JsonToken.VALUE_STRING) {
            invalidType("model", "a string", v);
            return;
        }
        model = scanner.cachedText(); // the same few names over and over: the same String each time
        modelMemberStart = memberStart;
        modelStart = scanner.tokenStart();
        modelEnd = scanner.tokenEnd();
    }

    private void readMessages(JsonToken v, boolean anthropic, boolean systemRoleAllowed) throws JsonScanException {
        if (v != JsonToken.START_ARRAY) {
            invalidType("messages", "an array", v);
            return;
        }
        int i = 0;
        JsonToken t;
        while ((t = next()) != JsonToken.END_ARRAY) {
            // The path (messages[i]) is made only for an error: a request's messages do not each cost a String.
            if (t != JsonToken.START_OBJECT) {
                invalidType(messagePath(i), "an object", t);
                return;
            }
            String role = null;
            DuplicateKeys.Names names = innerNames();
            while (next() == JsonToken.FIELD_NAME) {
                String field = scanner.currentName();
                if (!firstTime(names, field, "messages", i)) {
                    return;
                }
                JsonToken fv = next();
                if (field.equals("role") && fv == JsonToken.VALUE_STRING) {
                    role = roleText();
                } else if (field.equals("role") && fv != JsonToken.VALUE_NULL) {
                    invalidType(messagePath(i) + ".role", "a string", fv);
                    return;
                } else {
                    skip(fv);
                }
            }
            if (role == null) {
                missing(messagePath(i) + ".role");
                return;
            }
            if (!roleAllowed(role, anthropic, systemRoleAllowed)) {
                String path = messagePath(i);
                String code = "function".equals(role) ? "unsupported_value" : "invalid_value";
                String allowed = anthropic
                        ? (systemRoleAllowed ? "'user', 'assistant' or 'system'" : "'user' or 'assistant'")
                        : "'system', 'developer', 'user', 'assistant' or 'tool'";
                fail(GatewayError.invalid("Invalid value for '" + path + ".role': '" + role + "'; expected "
                        + allowed + ".", path + ".role", code));
                return;
            }
            i++;
        }
        if (i == 0) {
            fail(GatewayError.invalid("Invalid value for 'messages': must contain at least one message.",
                    "messages", "invalid_value"));
        }
    }

    /** The roles {@link #roleAllowed} knows (and one it names in a refusal), matched without making a String. */
    private static final String[] ROLES = {"user", "assistant", "system", "developer", "tool", "function"};

    /** The current string value: one of {@link #ROLES} when it spells one, else a new String of it. */
    private String roleText() throws JsonScanException {
        int length = scanner.textLength();
        for (String r : ROLES) {
            if (r.length() == length && scanner.textEquals(r)) {
                return r;
            }
        }
        return scanner.text();
    }

    private static String messagePath(int i) {
        return "messages[" + i + "]";
    }

    private static boolean roleAllowed(String role, boolean anthropic, boolean systemRoleAllowed) {
        if (anthropic) {
            return role.equals("user") || role.equals("assistant") || (systemRoleAllowed && role.equals("system"));
        }
        return switch (role) {
            case "system", "developer", "user", "assistant", "tool" -> true;
            default -> false;
        };
    }

    private void readStreamOptions(JsonToken v) throws JsonScanException {
        if (v != JsonToken.START_OBJECT) {
            invalidType("stream_options", "an object", v);
            return;
        }
        hasStreamOptions = true;
        streamOptionsInner = scanner.tokenEnd();
        DuplicateKeys.Names names = innerNames();
        while (next() == JsonToken.FIELD_NAME) {
            streamOptionsMembers++;
            String field = scanner.currentName();
            if (!firstTime(names, field, "stream_options", -1)) {
                return;
            }
            JsonToken fv = next();
            if (field.equals("include_usage") && (fv == JsonToken.VALUE_NULL || fv == JsonToken.VALUE_FALSE)) {
                includeUsageStart = scanner.tokenStart();
                includeUsageEnd = scanner.tokenEnd();
            } else if (field.equals("include_usage")) {
                includeUsage = readBoolean(fv, "stream_options.include_usage");
            } else {
                skip(fv);
            }
        }
    }

    private void readStop(JsonToken v) throws JsonScanException {
        if (v == JsonToken.VALUE_STRING) {
            return;
        }
        if (v != JsonToken.START_ARRAY) {
            invalidType("stop", "a string or an array of strings", v);
            return;
        }
        int count = 0;
        JsonToken t;
        while ((t = next()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_STRING) {
                invalidType("stop[" + count + "]", "a string", t);
                return;
            }
            count++;
        }
        if (count > 4) {
            fail(GatewayError.invalid("Invalid value for 'stop': at most 4 sequences are allowed.", "stop",
                    "invalid_value"));
        }
    }

    private void readStopSequences(JsonToken v) throws JsonScanException {
        if (v != JsonToken.START_ARRAY) {
            invalidType("stop_sequences", "an array of strings", v);
            return;
        }
        int i = 0;
        JsonToken t;
        while ((t = next()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_STRING) {
                invalidType("stop_sequences[" + i + "]", "a string", t);
                return;
            }
            if (scanner.text().isBlank()) {
                fail(GatewayError.invalid("stop_sequences[" + i + "]: each stop sequence must contain "
                        + "non-whitespace.", "stop_sequences", "invalid_value"));
                return;
            }
            i++;
        }
    }

    private void readThinking(JsonToken v) throws JsonScanException {
        if (v != JsonToken.START_OBJECT) {
            invalidType("thinking", "an object", v);
            return;
        }
        String type = null;
        DuplicateKeys.Names names = innerNames();
        while (next() == JsonToken.FIELD_NAME) {
            String field = scanner.currentName();
            if (!firstTime(names, field, "thinking", -1)) {
                return;
            }
            JsonToken fv = next();
            if (field.equals("type") && fv == JsonToken.VALUE_STRING) {
                type = scanner.text();
            } else if (field.equals("budget_tokens") && fv != JsonToken.VALUE_NULL) {
                if (fv != JsonToken.VALUE_NUMBER_INT) {
                    invalidType("thinking.budget_tokens", "an integer", fv);
                    return;
                }
                thinkingBudget = clampInt(scanner.longValue());
            } else {
                skip(fv);
            }
        }
        if (type == null) {
            missing("thinking.type");
        } else if (!type.equals("enabled") && !type.equals("adaptive") && !type.equals("disabled")) {
            fail(GatewayError.invalid("thinking.type: expected 'enabled', 'adaptive' or 'disabled'.",
                    "thinking.type", "invalid_value"));
        } else if (type.equals("enabled") && thinkingBudget < 0) {
            missing("thinking.budget_tokens");
        } else if (!type.equals("enabled")) {
            thinkingBudget = -1;
        }
    }

    private void readEmbeddingInput(JsonToken v) throws JsonScanException {
        if (v == JsonToken.VALUE_STRING) {
            if (scanner.textLength() == 0) {
                emptyInput();
            }
            return;
        }
        if (v != JsonToken.START_ARRAY) {
            invalidType("input", "a string or an array", v);
            return;
        }
        int count = 0;
        JsonToken kind = null;
        JsonToken t;
        while ((t = next()) != JsonToken.END_ARRAY) {
            if (kind == null) {
                kind = t;
            } else if (kind != t) {
                fail(GatewayError.invalid("Invalid 'input': an array must hold only strings, only token ids or "
                        + "only arrays of token ids.", "input", "invalid_value"));
                return;
            }
            if (t == JsonToken.VALUE_STRING) {
                if (scanner.textLength() == 0) {
                    emptyInput();
                    return;
                }
            } else if (t == JsonToken.START_ARRAY) {
                int inner = 0;
                JsonToken it;
                while ((it = next()) != JsonToken.END_ARRAY) {
                    if (it != JsonToken.VALUE_NUMBER_INT) {
                        invalidType("input[" + count + "][" + inner + "]", "an integer token id", it);
                        return;
                    }
                    inner++;
                }
                if (inner == 0) {
                    emptyInput();
                    return;
                }
            } else if (t != JsonToken.VALUE_NUMBER_INT) {
                invalidType("input[" + count + "]", "a string, a token id or an array of token ids", t);
                return;
            }
            if (++count > MAX_EMBEDDING_INPUTS) {
                fail(GatewayError.invalid("Invalid 'input': at most " + MAX_EMBEDDING_INPUTS
                        + " inputs are allowed per request.", "input", "invalid_value"));
                return;
            }
        }
        if (count == 0) {
            emptyInput();
        }
    }

    private void emptyInput() {
        fail(GatewayError.invalid("Invalid 'input': must not be empty.", "input", "invalid_value"));
    }

    private boolean readBoolean(JsonToken v, String path) throws JsonScanException {
        if (v == JsonToken.VALUE_TRUE) {
            return true;
        }
        if (v != JsonToken.VALUE_FALSE) {
            invalidType(path, "a boolean", v);
        }
        return false;
    }

    private int readPositiveInt(JsonToken v, String path) throws JsonScanException {
        if (v != JsonToken.VALUE_NUMBER_INT) {
            invalidType(path, "an integer", v);
            return -1;
        }
        long value = scanner.longValue();
        if (value < 1) {
            fail(GatewayError.invalid("Invalid value for '" + path + "': must be at least 1.", path,
                    "invalid_value"));
            return -1;
        }
        return clampInt(value);
    }

    /**
     * Chat and Responses: {@code temperature} and its member's offsets, for GD-19 to remove when the model takes
     * none.
     */
    private void readRemovableTemperature(JsonToken v) throws JsonScanException {
        hasTemperature = true;
        temperatureStart = memberStart;
        readRange(v, "temperature", 0, 2);
        temperatureEnd = scanner.tokenEnd();
    }

    private void readRange(JsonToken v, String path, double min, double max) throws JsonScanException {
        if (v != JsonToken.VALUE_NUMBER_INT && v != JsonToken.VALUE_NUMBER_FLOAT) {
            invalidType(path, "a number", v);
            return;
        }
        double d = scanner.doubleValue();
        if (!(d >= min && d <= max)) {
            fail(GatewayError.invalid("Invalid value for '" + path + "': must be between " + fmt(min) + " and "
                    + fmt(max) + ".", path, "invalid_value"));
        }
    }

    // ---------------------------------------------------------------- plumbing

    /**
     * The thread's scanner, reset to the body. A heap body is scanned in place; any other body is first copied into
     * a per-thread scratch array: one memcpy of a few KiB is cheap next to scanning, and a scanner over one array
     * keeps the hot loops plain.
     */
    private static JsonScanner scanner(ByteBuf body, Scratch s) {
        int len = body.readableBytes();
        if (body.hasArray()) {
            s.scanner.reset(body.array(), body.arrayOffset() + body.readerIndex(), len);
            return s.scanner;
        }
        byte[] bytes = s.bytes;
        if (bytes.length < len) {
            bytes = new byte[Math.max(len, bytes.length * 2)];
            if (bytes.length <= MAX_SCRATCH) {
                s.bytes = bytes;
            }
        }
        body.getBytes(body.readerIndex(), bytes, 0, len);
        s.scanner.reset(bytes, 0, len);
        return s.scanner;
    }

    /** Largest scratch array kept per thread; larger bodies get a one-off array. */
    private static final int MAX_SCRATCH = 1 << 20;
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * Per-thread state a peek needs only while it runs (a peek never runs inside another on one thread), kept so
     * that no request pays for allocating it: the scanner (and its names cache), the scratch copy of a body, the top
     * level's names and those of the nested object being read.
     */
    private static final class Scratch {
        final JsonScanner scanner = new JsonScanner(MAX_DEPTH, MAX_NUMBER_DIGITS);
        byte[] bytes = new byte[16 * 1024];
        final DuplicateKeys.Names topNames = new DuplicateKeys.Names();
        final DuplicateKeys.Names innerNames = new DuplicateKeys.Names();
    }

    /** Next token. */
    private JsonToken next() throws JsonScanException {
        return scanner.next();
    }

    /** The names of a nested object about to be read, emptied (such objects are read one at a time). */
    private DuplicateKeys.Names innerNames() {
        scratch.innerNames.clear();
        return scratch.innerNames;
    }

    /**
     * Whether {@code field} is new in the nested object being read; a repeated one fails the request, named by its
     * path ({@code path[index].field}, or {@code path.field} for an index of -1), which is made only then.
     */
    private boolean firstTime(DuplicateKeys.Names names, String field, String path, int index) {
        if (names.add(field)) {
            return true;
        }
        fail(DuplicateKeys.error((index < 0 ? path : path + "[" + index + "]") + "." + field));
        return false;
    }

    /** Skips the value whose first token is {@code v} (the current token). */
    private void skip(JsonToken v) throws JsonScanException {
        if (v == JsonToken.START_OBJECT || v == JsonToken.START_ARRAY) {
            scanner.skipValue();
        }
    }

    private void missing(String path) {
        fail(GatewayError.invalid("Missing required parameter: '" + path + "'.", path,
                "missing_required_parameter"));
    }

    private void invalidType(String path, String expected, JsonToken got) throws JsonScanException {
        fail(GatewayError.invalid("Invalid type for '" + path + "': expected " + expected + ", but got "
                + describe(got) + " instead.", path, "invalid_type"));
        skip(got);
    }

    private void fail(GatewayError e) {
        if (error == null) {
            error = e;
        }
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "nothing";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a decimal number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> t.asString() == null ? t.name().toLowerCase() : t.asString();
        };
    }

    private static int clampInt(long v) {
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v));
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    /** The first line of a message, at most 200 characters (a scanner's message names an offset, never body bytes). */
    private static String conciseMessage(Exception e) {
        String m = e.getMessage();
        if (m == null) {
            return "invalid JSON";
        }
        int nl = m.indexOf('\n');
        String first = nl >= 0 ? m.substring(0, nl) : m;
        return first.length() > 200 ? first.substring(0, 200) : first;
    }
}
