package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.Ids;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One Responses API answer as a translator builds it (contract 12.6): its output items in order (messages with
 * {@code output_text} / {@code refusal} parts, function calls, reasoning), and the writing of an item, of the usage
 * and of the whole {@code response} object — the same bytes for a non-stream answer, for the items of the stream's
 * {@code .done} events and for its final {@code response.completed} / {@code response.incomplete} /
 * {@code response.failed}. The request's settings the response object repeats are in its {@link Head}.
 *
 * <p>Text is kept as it comes (the final events repeat all of it), and {@link #grow} counts what is kept so a
 * translator can bound it (design rule 8). One instance per answer, confined to the exchange's event loop.
 */
final class ResponsesOutput {
    /** Contract 12.7 (GD-29): a reasoning item made from a signed Anthropic thinking block (or signed reasoning). */
    static final String THINKING_PREFIX = "mgw1:thinking:";
    /** A reasoning item made from a redacted_thinking block (or an encrypted reasoning entry). */
    static final String REDACTED_PREFIX = "mgw1:redacted:";

    enum Kind { MESSAGE, FUNCTION_CALL, REASONING }

    /** A content part of a message item: {@code output_text}, or {@code refusal}. */
    static final class Part {
        final boolean refusal;
        final StringBuilder text = new StringBuilder();

        Part(boolean refusal) {
            this.refusal = refusal;
        }
    }

    /** One output item; the fields of its kind are used, the others stay empty. */
    static final class Item {
        final Kind kind;
        final String id;
        /** Its place in {@code output}. */
        final int index;
        /** {@code in_progress} until closed; then {@code completed} or {@code incomplete}. */
        String status = "in_progress";
        final List<Part> parts = new ArrayList<>(1);
        String callId;
        String name;
        final StringBuilder arguments = new StringBuilder();
        /** Reasoning: the one summary part's text, null when the item has no summary part. */
        StringBuilder summary;
        /** Reasoning: what the caller sends back to continue (GD-29); null when none. */
        String encrypted;

        Item(Kind kind, String id, int index) {
            this.kind = kind;
            this.id = id;
            this.index = index;
        }

        Part lastPart() {
            return parts.isEmpty() ? null : parts.get(parts.size() - 1);
        }

        boolean open() {
            return "in_progress".equals(status);
        }
    }

    /**
     * What every response object of one exchange repeats: its id and creation time, the model (the upstream's own
     * string once it is known, GD-17), and the request's settings ({@link ResponsesRequestToChat#echo}).
     */
    static final class Head {
        final String id;
        final long createdAt;
        final ObjectNode echo;
        String model;

        Head(String id, long createdAt, String fallbackModel, ObjectNode echo) {
            this.id = id;
            this.createdAt = createdAt;
            this.model = fallbackModel == null ? "" : fallbackModel;
            this.echo = echo;
        }
    }

    final List<Item> items = new ArrayList<>(4);
    /** Characters of text, arguments and reasoning kept so far. */
    private long kept;

    Item add(Kind kind) {
        String prefix = switch (kind) {
            case MESSAGE -> "msg_";
            case FUNCTION_CALL -> "fc_";
            case REASONING -> "rs_";
        };
        Item item = new Item(kind, Ids.withPrefix(prefix), items.size());
        items.add(item);
        return item;
    }

    /** Counts {@code chars} more kept; returns the total. */
    long grow(int chars) {
        kept += chars;
        return kept;
    }

    /** What the SDKs' {@code output_text} helper computes: every {@code output_text} part, in order. */
    String outputText() {
        StringBuilder sb = new StringBuilder();
        for (Item item : items) {
            if (item.kind == Kind.MESSAGE) {
                for (Part p : item.parts) {
                    if (!p.refusal) {
                        sb.append(p.text);
                    }
                }
            }
        }
        return sb.toString();
    }

    // ---- writing ------------------------------------------------------------------------------------------

    /** An item as it stands (its status included): in {@code output}, and in the item events. */
    static void writeItem(JsonGenerator g, Item item) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", item.id);
        switch (item.kind) {
            case MESSAGE -> {
                g.writeStringField("type", "message");
                g.writeStringField("status", item.status);
                g.writeArrayFieldStart("content");
                for (Part p : item.parts) {
                    writePart(g, p, p.text.toString());
                }
                g.writeEndArray();
                g.writeStringField("role", "assistant");
            }
            case FUNCTION_CALL -> {
                g.writeStringField("type", "function_call");
                g.writeStringField("status", item.status);
                g.writeStringField("arguments", item.arguments.toString());
                g.writeStringField("call_id", item.callId);
                g.writeStringField("name", item.name);
            }
            case REASONING -> {
                g.writeStringField("type", "reasoning");
                g.writeArrayFieldStart("summary");
                if (item.summary != null) {
                    summaryPart(g, item.summary.toString());
                }
                g.writeEndArray();
                if (item.encrypted != null) {
                    g.writeStringField("encrypted_content", item.encrypted);
                }
            }
        }
        g.writeEndObject();
    }

    /** A content part of a message with the given text: {@code output_text} or {@code refusal}. */
    static void writePart(JsonGenerator g, Part p, String text) throws IOException {
        g.writeStartObject();
        if (p.refusal) {
            g.writeStringField("type", "refusal");
            g.writeStringField("refusal", text);
        } else {
            g.writeStringField("type", "output_text");
            g.writeArrayFieldStart("annotations");
            g.writeEndArray();
            g.writeArrayFieldStart("logprobs");
            g.writeEndArray();
            g.writeStringField("text", text);
        }
        g.writeEndObject();
    }

    static void summaryPart(JsonGenerator g, String text) throws IOException {
        g.writeStartObject();
        g.writeStringField("type", "summary_text");
        g.writeStringField("text", text);
        g.writeEndObject();
    }

    /**
     * The response body of a whole answer translated from {@code upstream} (borrowed): every item completed but the
     * last when it is a message of an incomplete answer ({@code incompleteReason} not null), and the model the
     * upstream's own string when it named one (GD-17).
     */
    ByteBuf answer(ByteBufAllocator alloc, ByteBuf upstream, Head head, String model, String incompleteReason,
            Usage usage) {
        for (Item item : items) {
            item.status = "completed";
        }
        if (incompleteReason != null && !items.isEmpty()) {
            Item last = items.get(items.size() - 1);
            if (last.kind == Kind.MESSAGE) {
                last.status = "incomplete";
            }
        }
        if (model != null) {
            head.model = model;
        }
        try {
            return JsonOut.write(alloc, 512 + upstream.readableBytes(), ResponsesRequestToChat.JSON,
                    g -> writeResponse(g, head, incompleteReason == null ? "completed" : "incomplete",
                            incompleteReason, null, usage));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The {@code response} object. {@code status}: {@code in_progress}, {@code completed}, {@code incomplete} or
     * {@code failed}; {@code incompleteReason} ({@code max_output_tokens}, {@code content_filter}) with
     * {@code incomplete}; {@code error} with {@code failed}; {@code usage} null before the end.
     */
    void writeResponse(JsonGenerator g, Head head, String status, String incompleteReason, GatewayError error,
            Usage usage) throws IOException {
        ObjectNode echo = head.echo;
        g.writeStartObject();
        g.writeStringField("id", head.id);
        g.writeStringField("object", "response");
        g.writeNumberField("created_at", head.createdAt);
        g.writeStringField("status", status);
        if (error == null) {
            g.writeNullField("error");
        } else {
            g.writeObjectFieldStart("error");
            g.writeStringField("code", ErrorBodies.responsesErrorCode(error.kind()));
            g.writeStringField("message", error.message());
            g.writeEndObject();
        }
        if (incompleteReason == null) {
            g.writeNullField("incomplete_details");
        } else {
            g.writeObjectFieldStart("incomplete_details");
            g.writeStringField("reason", incompleteReason);
            g.writeEndObject();
        }
        echo(g, echo, "instructions");
        echo(g, echo, "max_output_tokens");
        g.writeStringField("model", head.model);
        g.writeArrayFieldStart("output");
        for (Item item : items) {
            writeItem(g, item);
        }
        g.writeEndArray();
        g.writeStringField("output_text", outputText());
        echo(g, echo, "parallel_tool_calls");
        g.writeNullField("previous_response_id");
        echo(g, echo, "reasoning");
        g.writeBooleanField("store", false); // nothing is kept: the gateway is stateless (contract 12.1)
        echo(g, echo, "temperature");
        echo(g, echo, "text");
        echo(g, echo, "tool_choice");
        echo(g, echo, "tools");
        echo(g, echo, "top_p");
        g.writeStringField("truncation", "disabled");
        g.writeFieldName("usage");
        if (usage == null) {
            g.writeNull();
        } else {
            UsageJson.writeResponses(g, usage);
        }
        JsonNode user = echo.get("user");
        if (user != null) {
            g.writeFieldName("user");
            g.writeTree(user);
        }
        echo(g, echo, "metadata");
        g.writeEndObject();
    }

    private static void echo(JsonGenerator g, ObjectNode echo, String field) throws IOException {
        g.writeFieldName(field);
        JsonNode v = echo.get(field);
        if (v == null) {
            g.writeNull();
        } else {
            g.writeTree(v);
        }
    }

    /** {@code status} and {@code incomplete_details.reason} of a finished answer, from its chat finish reason. */
    static String incompleteReason(String finishReason) {
        if (finishReason == null) {
            return null;
        }
        return switch (finishReason) {
            case "length" -> "max_output_tokens";
            case "content_filter" -> "content_filter";
            default -> null;
        };
    }
}
