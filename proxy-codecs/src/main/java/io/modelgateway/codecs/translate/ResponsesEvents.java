package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ResponsesOutput.Item;
import io.modelgateway.codecs.translate.ResponsesOutput.Kind;
import io.modelgateway.codecs.translate.ResponsesOutput.Part;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The caller's side of a translated Responses API stream (contract 12.5): the typed events, numbered from 0 by
 * {@code sequence_number}, that the two stream translators ({@link ChatStreamToResponses},
 * {@link MessagesStreamToResponses}) produce by telling it what the upstream said — text, a refusal, reasoning and
 * its signature, a function call and its arguments, the end or a failure. It keeps the output items
 * ({@link ResponsesOutput}) so that each {@code .done} event and the final response repeat them whole, as the SDKs'
 * accumulators need (they replace their snapshot with the final response).
 *
 * <p>Lifecycle: {@code response.created}, {@code response.in_progress}; per item
 * {@code response.output_item.added}, its parts' events, {@code response.output_item.done}; one item is open at a
 * time, opened by what comes and closed by the next item or the end; then {@code response.completed} or
 * {@code response.incomplete} — or {@code response.failed} (GD-28), after which nothing follows.
 *
 * <p>Bounded (design rule 8): past {@code maxChars} characters of kept output the stream fails. Every buffer handed to
 * {@code out} is a new, complete SSE event owned by the consumer. One per stream, confined to its event loop.
 */
final class ResponsesEvents {
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);

    /** The event types written here, each with its {@code event:} line made once. */
    private enum Type {
        CREATED("response.created"),
        IN_PROGRESS("response.in_progress"),
        ITEM_ADDED("response.output_item.added"),
        ITEM_DONE("response.output_item.done"),
        PART_ADDED("response.content_part.added"),
        PART_DONE("response.content_part.done"),
        TEXT_DELTA("response.output_text.delta"),
        TEXT_DONE("response.output_text.done"),
        REFUSAL_DELTA("response.refusal.delta"),
        REFUSAL_DONE("response.refusal.done"),
        ARGUMENTS_DELTA("response.function_call_arguments.delta"),
        ARGUMENTS_DONE("response.function_call_arguments.done"),
        SUMMARY_PART_ADDED("response.reasoning_summary_part.added"),
        SUMMARY_PART_DONE("response.reasoning_summary_part.done"),
        SUMMARY_DELTA("response.reasoning_summary_text.delta"),
        SUMMARY_DONE("response.reasoning_summary_text.done"),
        COMPLETED("response.completed"),
        INCOMPLETE("response.incomplete"),
        FAILED("response.failed");

        final String name;
        final String prefix;

        Type(String name) {
            this.name = name;
            this.prefix = JsonOut.eventPrefix(name);
        }
    }

    private final ByteBufAllocator alloc;
    private final ResponsesOutput.Head head;
    private final ResponsesOutput output = new ResponsesOutput();
    private final long maxChars;
    private long sequence;
    private boolean started;
    private boolean finished;
    private boolean failed;
    /** The open item, null when none; and whether its last part (a message's) is still open. */
    private Item open;
    private boolean partOpen;

    /**
     * @param head     the response's id, creation time, fallback model and echoed request settings
     * @param maxChars the most characters of output kept (text, arguments, reasoning) before the stream fails
     */
    ResponsesEvents(ByteBufAllocator alloc, ResponsesOutput.Head head, long maxChars) {
        this.alloc = alloc;
        this.head = head;
        this.maxChars = maxChars;
    }

    boolean started() {
        return started;
    }

    boolean finished() {
        return finished;
    }

    boolean failed() {
        return failed;
    }

    /** {@code response.created} and {@code response.in_progress}, once; {@code model} the upstream's (GD-17). */
    void start(Consumer<ByteBuf> out, String model) {
        if (started || finished) {
            return;
        }
        started = true;
        if (model != null && !model.isEmpty()) {
            head.model = model;
        }
        emit(out, Type.CREATED, g -> response(g, "in_progress", null, null, null));
        emit(out, Type.IN_PROGRESS, g -> response(g, "in_progress", null, null, null));
    }

    /** A fragment of the answer's text, in the open message's {@code output_text} part (opened as needed). */
    void text(Consumer<ByteBuf> out, String delta) {
        content(out, false, delta);
    }

    /** A fragment of a refusal, in a {@code refusal} part of the open message. */
    void refusal(Consumer<ByteBuf> out, String delta) {
        content(out, true, delta);
    }

    private void content(Consumer<ByteBuf> out, boolean refusal, String delta) {
        if (finished || delta == null || delta.isEmpty()) {
            return;
        }
        if (open == null || open.kind != Kind.MESSAGE) {
            close(out, null);
            openItem(out, Kind.MESSAGE);
        }
        Part part = open.lastPart();
        if (!partOpen || part.refusal != refusal) {
            closePart(out);
            openPart(out, refusal);
            part = open.lastPart();
        }
        if (!keep(out, delta.length())) {
            return;
        }
        part.text.append(delta);
        Item item = open;
        int index = item.parts.size() - 1;
        emit(out, refusal ? Type.REFUSAL_DELTA : Type.TEXT_DELTA, g -> {
            partFields(g, item, index);
            g.writeStringField("delta", delta);
            if (!refusal) {
                g.writeArrayFieldStart("logprobs");
                g.writeEndArray();
            }
        });
    }

    /** A new part closes the message's previous one: consecutive text blocks stay one item, several parts. */
    void newTextPart(Consumer<ByteBuf> out) {
        if (!finished && open != null && open.kind == Kind.MESSAGE) {
            closePart(out);
        }
    }

    /** Reasoning text, as the summary of the open reasoning item; a new item after a signed one. */
    void reasoning(Consumer<ByteBuf> out, String delta) {
        if (finished || delta == null || delta.isEmpty()) {
            return;
        }
        if (open == null || open.kind != Kind.REASONING || open.encrypted != null) {
            close(out, null);
            openItem(out, Kind.REASONING);
        }
        Item item = open;
        if (item.summary == null) {
            item.summary = new StringBuilder();
            emit(out, Type.SUMMARY_PART_ADDED, g -> {
                summaryFields(g, item);
                g.writeFieldName("part");
                ResponsesOutput.summaryPart(g, "");
            });
        }
        if (!keep(out, delta.length())) {
            return;
        }
        item.summary.append(delta);
        emit(out, Type.SUMMARY_DELTA, g -> {
            summaryFields(g, item);
            g.writeStringField("delta", delta);
        });
    }

    /**
     * The signature of the reasoning just streamed (GD-29: {@code encrypted_content} = {@code mgw1:thinking:} + it), on
     * the open reasoning item, or an item of its own when none is open (thinking shown as nothing). It ends that
     * item's reasoning: more reasoning opens a new item.
     */
    void signature(Consumer<ByteBuf> out, String signature) {
        if (finished || signature == null || signature.isEmpty()) {
            return;
        }
        if (open == null || open.kind != Kind.REASONING || open.encrypted != null) {
            close(out, null);
            openItem(out, Kind.REASONING);
        }
        if (keep(out, signature.length())) {
            open.encrypted = ResponsesOutput.THINKING_PREFIX + signature;
        }
    }

    /** An opaque reasoning item (GD-29: {@code mgw1:redacted:} + the data), complete at once. */
    void redacted(Consumer<ByteBuf> out, String data) {
        if (finished || data == null || data.isEmpty()) {
            return;
        }
        close(out, null);
        if (!keep(out, data.length())) {
            return;
        }
        openItem(out, Kind.REASONING);
        open.encrypted = ResponsesOutput.REDACTED_PREFIX + data;
        close(out, null);
    }

    /** A function call begins (its item opened with empty arguments). */
    void functionCall(Consumer<ByteBuf> out, String callId, String name) {
        if (finished) {
            return;
        }
        close(out, null);
        Item item = output.add(Kind.FUNCTION_CALL);
        item.callId = callId;
        item.name = name == null ? "" : name;
        opened(out, item);
    }

    /** A fragment of the open function call's arguments. */
    void arguments(Consumer<ByteBuf> out, String delta) {
        if (finished || delta == null || delta.isEmpty() || open == null || open.kind != Kind.FUNCTION_CALL) {
            return;
        }
        if (!keep(out, delta.length())) {
            return;
        }
        Item item = open;
        item.arguments.append(delta);
        emit(out, Type.ARGUMENTS_DELTA, g -> {
            itemFields(g, item);
            g.writeStringField("delta", delta);
        });
    }

    /** Whether an item is open and of this kind. */
    boolean isOpen(Kind kind) {
        return open != null && open.kind == kind;
    }

    /**
     * Closes the open item (if any): complete, or — a message, with {@code incompleteReason} set — incomplete, as
     * the answer was cut there.
     */
    void closeItem(Consumer<ByteBuf> out, String incompleteReason) {
        if (!finished) {
            close(out, incompleteReason);
        }
    }

    /**
     * The answer ended: the open item closed ({@code incomplete} when the answer was cut, {@code incompleteReason}
     * {@code max_output_tokens} or {@code content_filter}), then {@code response.completed} or
     * {@code response.incomplete} with the whole output and {@code usage}.
     */
    void finish(Consumer<ByteBuf> out, String incompleteReason, Usage usage) {
        if (finished) {
            return;
        }
        close(out, incompleteReason);
        finished = true;
        boolean complete = incompleteReason == null;
        emit(out, complete ? Type.COMPLETED : Type.INCOMPLETE, g -> response(g, complete ? "completed" : "incomplete",
                incompleteReason, null, usage));
    }

    /**
     * GD-28: {@code response.failed} with the output so far (an open item marked incomplete) and the error; nothing
     * follows. A failure before the stream began is preceded by {@code response.created} and
     * {@code response.in_progress}, as every Responses stream begins. {@code usage}: what the upstream reported before it failed, null when nothing.
     */
    void fail(Consumer<ByteBuf> out, GatewayError error, Usage usage) {
        if (finished) {
            return;
        }
        if (!started) {
            // The SDKs' stream helpers build their snapshot from response.created and refuse any other first event:
            // a failure before anything else still opens the stream, so the caller reads a failed response.
            start(out, null);
        }
        finished = true;
        failed = true;
        if (open != null) {
            open.status = "incomplete";
            open = null;
        }
        emit(out, Type.FAILED, g -> response(g, "failed", null, error, usage));
    }

    /** An upstream keep-alive, once the stream has begun: an SSE comment, which the SDKs skip (GD-11). */
    void keepAlive(Consumer<ByteBuf> out) {
        if (started && !finished) {
            out.accept(alloc.buffer(KEEP_ALIVE.length).writeBytes(KEEP_ALIVE));
        }
    }

    // ---- items ------------------------------------------------------------------------------------------------

    private void openItem(Consumer<ByteBuf> out, Kind kind) {
        opened(out, output.add(kind));
    }

    private void opened(Consumer<ByteBuf> out, Item item) {
        open = item;
        partOpen = false;
        emit(out, Type.ITEM_ADDED, g -> {
            g.writeNumberField("output_index", item.index);
            g.writeFieldName("item");
            ResponsesOutput.writeItem(g, item);
        });
    }

    private void openPart(Consumer<ByteBuf> out, boolean refusal) {
        Part part = new Part(refusal);
        Item item = open;
        item.parts.add(part);
        partOpen = true;
        int index = item.parts.size() - 1;
        emit(out, Type.PART_ADDED, g -> {
            partFields(g, item, index);
            g.writeFieldName("part");
            ResponsesOutput.writePart(g, part, "");
        });
    }

    private void closePart(Consumer<ByteBuf> out) {
        if (!partOpen) {
            return;
        }
        partOpen = false;
        Item item = open;
        int index = item.parts.size() - 1;
        Part part = item.parts.get(index);
        String text = part.text.toString();
        emit(out, part.refusal ? Type.REFUSAL_DONE : Type.TEXT_DONE, g -> {
            partFields(g, item, index);
            if (part.refusal) {
                g.writeStringField("refusal", text);
            } else {
                g.writeStringField("text", text);
                g.writeArrayFieldStart("logprobs");
                g.writeEndArray();
            }
        });
        emit(out, Type.PART_DONE, g -> {
            partFields(g, item, index);
            g.writeFieldName("part");
            ResponsesOutput.writePart(g, part, text);
        });
    }

    /** Closes the open item: its last part or summary, then {@code output_item.done}. */
    private void close(Consumer<ByteBuf> out, String incompleteReason) {
        Item item = open;
        if (item == null) {
            return;
        }
        switch (item.kind) {
            case MESSAGE -> closePart(out);
            case FUNCTION_CALL -> {
                String arguments = item.arguments.toString();
                emit(out, Type.ARGUMENTS_DONE, g -> {
                    itemFields(g, item);
                    g.writeStringField("name", item.name);
                    g.writeStringField("arguments", arguments);
                });
            }
            case REASONING -> {
                if (item.summary != null) {
                    String text = item.summary.toString();
                    emit(out, Type.SUMMARY_DONE, g -> {
                        summaryFields(g, item);
                        g.writeStringField("text", text);
                    });
                    emit(out, Type.SUMMARY_PART_DONE, g -> {
                        summaryFields(g, item);
                        g.writeFieldName("part");
                        ResponsesOutput.summaryPart(g, text);
                    });
                }
            }
        }
        item.status = incompleteReason != null && item.kind == Kind.MESSAGE ? "incomplete" : "completed";
        open = null;
        emit(out, Type.ITEM_DONE, g -> {
            g.writeNumberField("output_index", item.index);
            g.writeFieldName("item");
            ResponsesOutput.writeItem(g, item);
        });
    }

    /** Counts kept output; past the bound the stream fails (and false is returned). */
    private boolean keep(Consumer<ByteBuf> out, int chars) {
        if (output.grow(chars) <= maxChars) {
            return true;
        }
        fail(out, new GatewayError(ErrorKind.UPSTREAM_ERROR, "The upstream provider's answer is larger than "
                + maxChars + " characters, too large to translate.", null, null), null);
        return false;
    }

    // ---- writing ----------------------------------------------------------------------------------------------

    private void response(JsonGenerator g, String status, String incompleteReason, GatewayError error, Usage usage)
            throws IOException {
        g.writeFieldName("response");
        output.writeResponse(g, head, status, incompleteReason, error, usage);
    }

    private void itemFields(JsonGenerator g, Item item) throws IOException {
        g.writeStringField("item_id", item.id);
        g.writeNumberField("output_index", item.index);
    }

    private void partFields(JsonGenerator g, Item item, int contentIndex) throws IOException {
        itemFields(g, item);
        g.writeNumberField("content_index", contentIndex);
    }

    private void summaryFields(JsonGenerator g, Item item) throws IOException {
        itemFields(g, item);
        g.writeNumberField("summary_index", 0);
    }

    /** {@code event: <type>\ndata: {"type":"<type>","sequence_number":n, …}\n\n}, numbered in order from 0. */
    private void emit(Consumer<ByteBuf> out, Type type, JsonOut.Fields fields) {
        long n = sequence++;
        try {
            out.accept(JsonOut.write(alloc, 192, ResponsesRequestToChat.JSON, type.prefix, g -> {
                g.writeStartObject();
                g.writeStringField("type", type.name);
                g.writeNumberField("sequence_number", n);
                fields.write(g);
                g.writeEndObject();
            }, "\n\n"));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to a buffer does not fail
        }
    }
}
