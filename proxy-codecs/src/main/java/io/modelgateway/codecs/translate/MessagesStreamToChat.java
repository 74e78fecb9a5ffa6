package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Contract 8.4: an Anthropic messages stream → OpenAI chat completion chunks, one upstream event at a
 * time (nothing is held back, so time to first token is the upstream's). Sits behind the
 * {@code SseEventScanner} of a translated stream exchange; one instance per stream, confined to that
 * exchange's event loop.
 *
 * <p>Output: every chunk is {@code data: <compact JSON>\n\n} with the same id, created and model (taken from
 * {@code message_start}); the role chunk comes first; {@code usage} is {@code null} on every chunk but the usage
 * chunk when {@code include_usage} was asked for, and absent otherwise; the stream ends with
 * {@code data: [DONE]} after {@code message_stop}, or with one {@code data: {"error":…}} event (GD-10). An
 * upstream {@code ping} after the role chunk becomes a {@code : keep-alive} comment (GD-11), which SDKs skip
 * and which keeps idle intermediaries from closing the stream.
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer.
 * {@link #onEvent} never throws for anything the upstream sends: unreadable events end the stream with an
 * error chunk.
 */
final class MessagesStreamToChat implements StreamTranslator {
    private static final JsonFactory JSON = ChatRequestToMessages.JSON.getFactory();
    private static final String DATA = "data: ";
    private static final String EVENT_END = "\n\n";
    private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);

    static final GatewayError UNREADABLE = new GatewayError(ErrorKind.UPSTREAM_ERROR,
            "The upstream provider sent a stream event the gateway could not read.", null, null);
    static final GatewayError ENDED_EARLY =
            new GatewayError(ErrorKind.UPSTREAM_ERROR, "Upstream stream ended early", null, null);
    static final GatewayError CONNECTION_LOST =
            new GatewayError(ErrorKind.UPSTREAM_ERROR, "Upstream connection lost", null, null);

    private enum Kind { TEXT, TOOL, JSON_RESPONSE, THINKING, REDACTED, OTHER }

    /** A content block between its start and stop: what its deltas become. */
    private record Block(Kind kind, int ordinal) {
    }

    private final ByteBufAllocator alloc;
    private final String id;
    private final long created;
    private final String fallbackModel;
    private final boolean includeUsage;
    private final boolean excludeReasoning;
    private final boolean jsonResponse;
    private final MessagesStreamEvent event = new MessagesStreamEvent();

    private String model;
    private boolean started;
    private boolean finishSent;
    private boolean finished;
    private boolean failed;
    private String stopReason;
    /** Next OpenAI {@code tool_calls[].index}; next {@code reasoning_details[].index}. */
    private int toolOrdinal;
    private int reasoningOrdinal;
    private boolean jsonBlockSeen;
    /** Open blocks by Anthropic index (blocks do not interleave, so this holds one, but tolerates more). */
    private final Map<Integer, Block> blocks = new HashMap<>();

    private long input;
    private long output;
    private long cacheCreation;
    private long cacheRead;
    private long thinking;
    private boolean thinkingReported;

    MessagesStreamToChat(ByteBufAllocator alloc, String id, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning, boolean jsonResponse) {
        this.alloc = alloc;
        this.id = id;
        this.created = created;
        this.fallbackModel = fallbackModel;
        this.includeUsage = includeUsage;
        this.excludeReasoning = excludeReasoning;
        this.jsonResponse = jsonResponse;
    }

    @Override
    public void onEvent(ByteBuf buf, Consumer<ByteBuf> out) {
        if (finished) {
            return;
        }
        try {
            if (event.read(buf)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            fail(out, UNREADABLE);
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (!finished) {
            fail(out, clean ? ENDED_EARLY : CONNECTION_LOST);
        }
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!finished) {
            fail(out, error);
        }
    }

    @Override
    public boolean finished() {
        return finished;
    }

    @Override
    public boolean failed() {
        return failed;
    }

    @Override
    public Usage usage() {
        return new Usage(input, output, cacheCreation, cacheRead, thinking);
    }

    private void handle(Consumer<ByteBuf> out) throws IOException {
        MessagesStreamEvent e = event;
        String type = e.type != null ? e.type : e.eventName;
        if ("error".equals(e.eventName) || "error".equals(type)) {
            upstreamError(out);
            return;
        }
        if (type == null) {
            return;
        }
        switch (type) {
            case "message_start" -> {
                if (!started && e.messageModel != null && !e.messageModel.isEmpty()) {
                    model = e.messageModel;
                }
                updateUsage();
                start(out);
            }
            case "content_block_start" -> {
                start(out);
                blockStart(out);
            }
            case "content_block_delta" -> {
                start(out);
                blockDelta(out);
            }
            case "content_block_stop" -> {
                if (e.hasIndex) {
                    blocks.remove(e.index);
                }
            }
            case "message_delta" -> {
                start(out);
                updateUsage();
                if (e.deltaStopReason != null) {
                    stopReason = e.deltaStopReason;
                    finish(out);
                }
            }
            case "message_stop" -> {
                start(out);
                finish(out); // when no message_delta carried a stop reason: 8.7 null → stop
                if (includeUsage) {
                    usageChunk(out);
                }
                finished = true;
                emit(out, DONE);
            }
            case "ping" -> {
                if (started) {
                    emit(out, KEEP_ALIVE);
                }
            }
            default -> {
                // unknown event types are skipped, as the Anthropic SDKs do
            }
        }
    }

    /** The role chunk, once, before anything else the caller sees. */
    private void start(Consumer<ByteBuf> out) throws IOException {
        if (started) {
            return;
        }
        started = true;
        if (model == null) {
            model = fallbackModel;
        }
        chunk(out, g -> {
            g.writeStringField("role", "assistant");
            g.writeStringField("content", "");
        }, null);
    }

    private void blockStart(Consumer<ByteBuf> out) throws IOException {
        MessagesStreamEvent e = event;
        if (!e.hasIndex || e.blockType == null) {
            return;
        }
        switch (e.blockType) {
            case "text" -> {
                blocks.put(e.index, new Block(Kind.TEXT, 0));
                content(out, e.blockText);
            }
            case "tool_use" -> {
                if (jsonResponse && ChatRequestToMessages.JSON_RESPONSE_TOOL.equals(e.blockName)) {
                    // GD-14: the first json_response call is the answer; its input streams as content.
                    blocks.put(e.index, new Block(jsonBlockSeen ? Kind.OTHER : Kind.JSON_RESPONSE, 0));
                    jsonBlockSeen = true;
                    return;
                }
                int k = toolOrdinal++;
                blocks.put(e.index, new Block(Kind.TOOL, k));
                String callId = e.blockId != null && !e.blockId.isEmpty() ? e.blockId : Ids.withPrefix("call_");
                String name = e.blockName != null ? e.blockName : "";
                chunk(out, g -> {
                    g.writeArrayFieldStart("tool_calls");
                    g.writeStartObject();
                    g.writeNumberField("index", k);
                    JsonOut.toolCallFields(g, callId, name, "");
                    g.writeEndObject();
                    g.writeEndArray();
                }, null);
            }
            case "thinking" -> {
                int k = reasoningOrdinal++;
                blocks.put(e.index, new Block(Kind.THINKING, k));
                reasoning(out, k, e.blockThinking);
                signature(out, k, e.blockSignature);
            }
            case "redacted_thinking" -> {
                int k = reasoningOrdinal++;
                blocks.put(e.index, new Block(Kind.REDACTED, k));
                if (!excludeReasoning) {
                    String data = e.blockData != null ? e.blockData : "";
                    chunk(out, g -> {
                        g.writeArrayFieldStart("reasoning_details");
                        JsonOut.reasoningEncrypted(g, data, k);
                        g.writeEndArray();
                    }, null);
                }
            }
            default -> blocks.put(e.index, new Block(Kind.OTHER, 0)); // server tools and their results
        }
    }

    private void blockDelta(Consumer<ByteBuf> out) throws IOException {
        MessagesStreamEvent e = event;
        if (e.deltaType == null) {
            return;
        }
        Block block = e.hasIndex ? blocks.get(e.index) : null;
        switch (e.deltaType) {
            case "text_delta" -> content(out, e.deltaText);
            case "input_json_delta" -> {
                String fragment = e.deltaPartialJson;
                if (block == null || fragment == null || fragment.isEmpty()) {
                    return;
                }
                if (block.kind == Kind.JSON_RESPONSE) {
                    content(out, fragment);
                } else if (block.kind == Kind.TOOL) {
                    int k = block.ordinal;
                    chunk(out, g -> {
                        g.writeArrayFieldStart("tool_calls");
                        g.writeStartObject();
                        g.writeNumberField("index", k);
                        g.writeObjectFieldStart("function");
                        g.writeStringField("arguments", fragment);
                        g.writeEndObject();
                        g.writeEndObject();
                        g.writeEndArray();
                    }, null);
                }
            }
            case "thinking_delta" -> {
                if (block != null && block.kind == Kind.THINKING) {
                    reasoning(out, block.ordinal, e.deltaThinking);
                }
            }
            case "signature_delta" -> {
                if (block != null && block.kind == Kind.THINKING) {
                    signature(out, block.ordinal, e.deltaSignature);
                }
            }
            default -> {
                // citations_delta and future delta types have no chat form
            }
        }
    }

    private void content(Consumer<ByteBuf> out, String text) throws IOException {
        if (text == null || text.isEmpty()) {
            return;
        }
        chunk(out, g -> g.writeStringField("content", text), null);
    }

    private void reasoning(Consumer<ByteBuf> out, int k, String text) throws IOException {
        if (excludeReasoning || text == null || text.isEmpty()) {
            return;
        }
        chunk(out, g -> {
            g.writeStringField("reasoning", text);
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningText(g, text, null, k);
            g.writeEndArray();
        }, null);
    }

    private void signature(Consumer<ByteBuf> out, int k, String signature) throws IOException {
        if (excludeReasoning || signature == null || signature.isEmpty()) {
            return;
        }
        chunk(out, g -> {
            g.writeArrayFieldStart("reasoning_details");
            JsonOut.reasoningText(g, null, signature, k);
            g.writeEndArray();
        }, null);
    }

    /** The finishing chunk ({@code delta {}} + finish_reason, 8.7), once. */
    private void finish(Consumer<ByteBuf> out) throws IOException {
        if (finishSent) {
            return;
        }
        finishSent = true;
        String reason = StopReasons.toFinishReason(stopReason, jsonBlockSeen && toolOrdinal == 0);
        chunk(out, g -> {
        }, reason);
    }

    /** message_start carries input and cache counts; message_delta cumulative output and any replacements. */
    private void updateUsage() {
        MessagesStreamEvent e = event;
        if (e.inputTokens != MessagesStreamEvent.ABSENT) {
            input = e.inputTokens;
        }
        if (e.outputTokens != MessagesStreamEvent.ABSENT) {
            output = e.outputTokens;
        }
        if (e.cacheCreationTokens != MessagesStreamEvent.ABSENT) {
            cacheCreation = e.cacheCreationTokens;
        }
        if (e.cacheReadTokens != MessagesStreamEvent.ABSENT) {
            cacheRead = e.cacheReadTokens;
        }
        if (e.thinkingTokens != MessagesStreamEvent.ABSENT) {
            thinking = e.thinkingTokens;
            thinkingReported = true;
        }
    }

    private void upstreamError(Consumer<ByteBuf> out) {
        MessagesStreamEvent e = event;
        String message = e.errorMessage == null ? null : ErrorTranslator.clean(e.errorMessage, null, null);
        ErrorKind kind = ErrorTranslator.kindOfAnthropicType(e.errorType);
        fail(out, new GatewayError(kind, message != null ? message : "The upstream provider reported an error.",
                null, null));
    }

    /** GD-10: one error event, then nothing (no [DONE]). */
    private void fail(Consumer<ByteBuf> out, GatewayError error) {
        finished = true;
        failed = true;
        out.accept(ErrorBodies.streamEvent(alloc, ApiStyle.OPENAI, error));
    }

    private void emit(Consumer<ByteBuf> out, byte[] bytes) {
        out.accept(alloc.buffer(bytes.length).writeBytes(bytes));
    }

    @FunctionalInterface
    private interface DeltaWriter {
        void write(JsonGenerator g) throws IOException;
    }

    /** One {@code chat.completion.chunk} with the given delta fields and finish reason (null: not finished). */
    private void chunk(Consumer<ByteBuf> out, DeltaWriter delta, String finishReason) throws IOException {
        out.accept(JsonOut.write(alloc, 256, JSON, DATA, g -> {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeStartObject();
            g.writeNumberField("index", 0);
            g.writeObjectFieldStart("delta");
            delta.write(g);
            g.writeEndObject();
            g.writeNullField("logprobs");
            if (finishReason == null) {
                g.writeNullField("finish_reason");
            } else {
                g.writeStringField("finish_reason", finishReason);
            }
            g.writeEndObject();
            g.writeEndArray();
            if (includeUsage) {
                g.writeNullField("usage");
            }
            g.writeEndObject();
        }, EVENT_END));
    }

    /** 3.11 step 5: {@code choices: []} and the whole request's usage (8.8). */
    private void usageChunk(Consumer<ByteBuf> out) throws IOException {
        out.accept(JsonOut.write(alloc, 320, JSON, DATA, g -> {
            writeHead(g);
            g.writeArrayFieldStart("choices");
            g.writeEndArray();
            g.writeFieldName("usage");
            UsageJson.writeChat(g, usage(), thinkingReported);
            g.writeEndObject();
        }, EVENT_END));
    }

    private void writeHead(JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", id);
        g.writeStringField("object", "chat.completion.chunk");
        g.writeNumberField("created", created);
        g.writeStringField("model", model);
    }
}
