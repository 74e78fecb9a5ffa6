package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Contract 8.4: an Anthropic messages stream → OpenAI chat completion chunks, one upstream event at a
 * time (nothing is held back, so time to first token is the upstream's). Sits behind the
 * {@code SseEventScanner} of a translated stream exchange; one instance per stream, confined to that
 * exchange's event loop.
 *
 * <p>Output, written by {@link ChatChunks}: the model is taken from {@code message_start}; the stream ends with
 * {@code data: [DONE]} after {@code message_stop}, or with one {@code data: {"error":…}} event (GD-10). An
 * upstream {@code ping} after the role chunk becomes a {@code : keep-alive} comment (GD-11), which SDKs skip
 * and which keeps idle intermediaries from closing the stream.
 *
 * <p>Ownership: input events are borrowed; each buffer handed to {@code out} is new and owned by the consumer.
 * {@link #onEvent} never throws for anything the upstream sends: unreadable events end the stream with an
 * error chunk.
 */
final class MessagesStreamToChat implements StreamTranslator {
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

    private final ChatChunks chunks;
    private final boolean jsonResponse;
    private final MessagesStreamEvent event = new MessagesStreamEvent();

    private boolean finishSent;
    private String stopReason;
    /** Next OpenAI {@code tool_calls[].index}; next {@code reasoning_details[].index}. */
    private int toolOrdinal;
    private int reasoningOrdinal;
    private boolean jsonBlockSeen;
    /** Open blocks by Anthropic index (blocks do not interleave, so this holds one, but tolerates more). */
    private final Map<Integer, Block> blocks = new HashMap<>();

    private final MessagesUsage usage = new MessagesUsage();

    MessagesStreamToChat(ByteBufAllocator alloc, String id, long created, String fallbackModel, boolean includeUsage,
            boolean excludeReasoning, boolean jsonResponse) {
        this.chunks = new ChatChunks(alloc, id, created, fallbackModel, includeUsage, excludeReasoning);
        this.jsonResponse = jsonResponse;
    }

    @Override
    public void onEvent(ByteBuf buf, Consumer<ByteBuf> out) {
        if (chunks.finished()) {
            return;
        }
        try {
            if (event.read(buf)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            chunks.fail(out, UNREADABLE);
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (!chunks.finished()) {
            chunks.fail(out, clean ? ENDED_EARLY : CONNECTION_LOST);
        }
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        if (!chunks.finished()) {
            chunks.fail(out, error);
        }
    }

    @Override
    public boolean finished() {
        return chunks.finished();
    }

    @Override
    public boolean failed() {
        return chunks.failed();
    }

    @Override
    public Usage usage() {
        return usage.usage();
    }

    private void handle(Consumer<ByteBuf> out) throws IOException {
        MessagesStreamEvent e = event;
        if (e.isError()) {
            chunks.fail(out, e.error());
            return;
        }
        String type = e.kind();
        if (type == null) {
            return;
        }
        switch (type) {
            case "message_start" -> {
                if (!chunks.started() && e.messageModel != null && !e.messageModel.isEmpty()) {
                    chunks.model(e.messageModel);
                }
                usage.update(e);
                chunks.start(out);
            }
            case "content_block_start" -> {
                chunks.start(out);
                blockStart(out);
            }
            case "content_block_delta" -> {
                chunks.start(out);
                blockDelta(out);
            }
            case "content_block_stop" -> {
                if (e.hasIndex) {
                    blocks.remove(e.index);
                }
            }
            case "message_delta" -> {
                chunks.start(out);
                usage.update(e);
                if (e.deltaStopReason != null) {
                    stopReason = e.deltaStopReason;
                    finish(out);
                }
            }
            case "message_stop" -> {
                chunks.start(out);
                finish(out); // when no message_delta carried a stop reason: 8.7 null → stop
                if (chunks.includesUsage()) {
                    chunks.usage(out, usage.usage(), usage.thinkingReported());
                }
                chunks.done(out);
            }
            case "ping" -> {
                if (chunks.started()) {
                    chunks.keepAlive(out);
                }
            }
            default -> {
                // unknown event types are skipped, as the Anthropic SDKs do
            }
        }
    }

    private void blockStart(Consumer<ByteBuf> out) throws IOException {
        MessagesStreamEvent e = event;
        if (!e.hasIndex || e.blockType == null) {
            return;
        }
        switch (e.blockType) {
            case "text" -> {
                blocks.put(e.index, new Block(Kind.TEXT, 0));
                chunks.content(out, e.blockText);
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
                chunks.toolCall(out, k, callId, e.blockName != null ? e.blockName : "", "");
            }
            case "thinking" -> {
                int k = reasoningOrdinal++;
                blocks.put(e.index, new Block(Kind.THINKING, k));
                chunks.reasoning(out, k, e.blockThinking);
                chunks.signature(out, k, e.blockSignature);
            }
            case "redacted_thinking" -> {
                int k = reasoningOrdinal++;
                blocks.put(e.index, new Block(Kind.REDACTED, k));
                chunks.encrypted(out, k, e.blockData != null ? e.blockData : "");
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
            case "text_delta" -> chunks.content(out, e.deltaText);
            case "input_json_delta" -> {
                String fragment = e.deltaPartialJson;
                if (block == null || fragment == null || fragment.isEmpty()) {
                    return;
                }
                if (block.kind == Kind.JSON_RESPONSE) {
                    chunks.content(out, fragment);
                } else if (block.kind == Kind.TOOL) {
                    chunks.toolArguments(out, block.ordinal, fragment);
                }
            }
            case "thinking_delta" -> {
                if (block != null && block.kind == Kind.THINKING) {
                    chunks.reasoning(out, block.ordinal, e.deltaThinking);
                }
            }
            case "signature_delta" -> {
                if (block != null && block.kind == Kind.THINKING) {
                    chunks.signature(out, block.ordinal, e.deltaSignature);
                }
            }
            default -> {
                // citations_delta and future delta types have no chat form
            }
        }
    }

    /** The finishing chunk ({@code delta {}} + finish_reason, 8.7), once. */
    private void finish(Consumer<ByteBuf> out) throws IOException {
        if (finishSent) {
            return;
        }
        finishSent = true;
        chunks.finish(out, StopReasons.toFinishReason(stopReason, jsonBlockSeen && toolOrdinal == 0));
    }
}
