package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An Anthropic messages stream → the Responses API's typed events (contract 12.5), one upstream event at a time
 * ({@link MessagesStreamEvent}) through {@link ResponsesEvents}: {@code message_start} → {@code response.created} and
 * {@code response.in_progress}; a text block → an {@code output_text} part of the current message (consecutive text
 * blocks share one message, which stays open until another item or the end); a thinking block → a reasoning item whose
 * summary streams as {@code response.reasoning_summary_text.delta} and whose signature becomes its
 * {@code encrypted_content} (GD-29); redacted_thinking → an opaque reasoning item; tool_use → a function call item,
 * its {@code input_json_delta} fragments the argument deltas — or, for the GD-14 {@code json_response} tool, the
 * answer's text; {@code message_stop} → {@code response.completed}, or {@code response.incomplete} after a
 * {@code max_tokens} or {@code refusal} stop. An upstream {@code error}, an unreadable event or an early end →
 * {@code response.failed} (GD-28); {@code ping} → {@code : keep-alive}.
 *
 * <p>Ownership: input events are borrowed; every buffer handed to {@code out} is new and owned by the consumer. One
 * instance per stream, confined to the exchange's event loop; {@link #onEvent} never throws.
 */
final class MessagesStreamToResponses implements StreamTranslator {
    private enum Block { TEXT, JSON_RESPONSE, TOOL, THINKING, OTHER }

    private final ResponsesEvents events;
    private final boolean jsonResponse;
    private final MessagesStreamEvent event = new MessagesStreamEvent();
    /** Open blocks by Anthropic index (blocks do not interleave, so this holds one, but tolerates more). */
    private final Map<Integer, Block> blocks = new HashMap<>();
    private boolean jsonBlockSeen;
    private String stopReason;
    private final MessagesUsage usage = new MessagesUsage();

    /** @param jsonResponse the GD-14 {@code json_response} tool was added for {@code text.format} */
    MessagesStreamToResponses(ResponsesEvents events, boolean jsonResponse) {
        this.events = events;
        this.jsonResponse = jsonResponse;
    }

    @Override
    public void onEvent(ByteBuf buf, Consumer<ByteBuf> out) {
        if (events.finished()) {
            return;
        }
        try {
            if (event.read(buf)) {
                handle(out);
            }
        } catch (IOException | RuntimeException e) {
            fail(out, MessagesStreamToChat.UNREADABLE);
        }
    }

    @Override
    public void onEnd(boolean clean, Consumer<ByteBuf> out) {
        if (!events.finished()) {
            fail(out, clean ? MessagesStreamToChat.ENDED_EARLY : MessagesStreamToChat.CONNECTION_LOST);
        }
    }

    @Override
    public void onFailure(GatewayError error, Consumer<ByteBuf> out) {
        fail(out, error);
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
        return usage.usage();
    }

    private void handle(Consumer<ByteBuf> out) {
        MessagesStreamEvent e = event;
        if (e.isError()) {
            fail(out, e.error());
            return;
        }
        String type = e.kind();
        if (type == null) {
            return;
        }
        switch (type) {
            case "message_start" -> {
                usage.update(e);
                events.start(out, e.messageModel);
            }
            case "content_block_start" -> {
                events.start(out, null);
                blockStart(out);
            }
            case "content_block_delta" -> {
                events.start(out, null);
                blockDelta(out);
            }
            case "content_block_stop" -> {
                Block b = e.hasIndex ? blocks.remove(e.index) : null;
                if (b == Block.TOOL || b == Block.THINKING) {
                    events.closeItem(out, null); // a message stays open: the next text block may join it
                }
            }
            case "message_delta" -> {
                usage.update(e);
                if (e.deltaStopReason != null) {
                    stopReason = e.deltaStopReason;
                }
            }
            case "message_stop" -> {
                events.start(out, null);
                events.finish(out, MessagesResponseToResponses.incompleteReason(stopReason), usage.usage());
            }
            case "ping" -> events.keepAlive(out);
            default -> {
                // unknown event types are skipped, as the Anthropic SDKs do
            }
        }
    }

    private void blockStart(Consumer<ByteBuf> out) {
        MessagesStreamEvent e = event;
        if (!e.hasIndex || e.blockType == null) {
            return;
        }
        switch (e.blockType) {
            case "text" -> {
                blocks.put(e.index, Block.TEXT);
                events.newTextPart(out);
                events.text(out, e.blockText);
            }
            case "thinking" -> {
                blocks.put(e.index, Block.THINKING);
                events.closeItem(out, null); // each thinking block is its own reasoning item
                events.reasoning(out, e.blockThinking);
                events.signature(out, e.blockSignature);
            }
            case "redacted_thinking" -> {
                blocks.put(e.index, Block.OTHER);
                events.redacted(out, e.blockData);
            }
            case "tool_use" -> {
                if (jsonResponse && ChatRequestToMessages.JSON_RESPONSE_TOOL.equals(e.blockName)) {
                    // GD-14: the first json_response call is the answer; its input streams as the text.
                    blocks.put(e.index, jsonBlockSeen ? Block.OTHER : Block.JSON_RESPONSE);
                    if (!jsonBlockSeen) {
                        events.newTextPart(out);
                    }
                    jsonBlockSeen = true;
                    return;
                }
                blocks.put(e.index, Block.TOOL);
                events.functionCall(out, e.blockId != null && !e.blockId.isEmpty() ? e.blockId
                        : Ids.withPrefix("call_"), e.blockName);
            }
            default -> blocks.put(e.index, Block.OTHER); // server tools and their results
        }
    }

    private void blockDelta(Consumer<ByteBuf> out) {
        MessagesStreamEvent e = event;
        Block block = e.hasIndex ? blocks.get(e.index) : null;
        if (e.deltaType == null || block == null) {
            return;
        }
        switch (e.deltaType) {
            case "text_delta" -> {
                if (block == Block.TEXT) {
                    events.text(out, e.deltaText);
                }
            }
            case "input_json_delta" -> {
                if (block == Block.JSON_RESPONSE) {
                    events.text(out, e.deltaPartialJson);
                } else if (block == Block.TOOL) {
                    events.arguments(out, e.deltaPartialJson);
                }
            }
            case "thinking_delta" -> {
                if (block == Block.THINKING) {
                    events.reasoning(out, e.deltaThinking);
                }
            }
            case "signature_delta" -> {
                if (block == Block.THINKING) {
                    events.signature(out, e.deltaSignature);
                }
            }
            default -> {
                // citations_delta and future delta types have no Responses form here
            }
        }
    }

    private void fail(Consumer<ByteBuf> out, GatewayError error) {
        events.fail(out, error, usage.counted() ? usage.usage() : null);
    }
}
