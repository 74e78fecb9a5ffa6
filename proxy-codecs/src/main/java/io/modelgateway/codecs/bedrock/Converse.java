package io.modelgateway.codecs.bedrock;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Bedrock's Converse API for the models that are not Claude (Llama, Mistral, Nova, …), seen from the gateway's
 * Anthropic side: an Anthropic Messages request becomes a Converse request ({@link #request}), a Converse answer an
 * Anthropic message ({@link #answer}), and the events of ConverseStream Anthropic stream events ({@link Stream}), so a
 * Bedrock provider answers every model as an Anthropic-style upstream and the existing translators serve chat
 * callers (contract 6.1).
 *
 * <p>Mapped: {@code system} (string or text blocks) → {@code system[].text}; messages with text, base64 images,
 * {@code tool_use} → {@code toolUse}, {@code tool_result} → {@code toolResult} (text, or JSON, {@code is_error} →
 * {@code status: error}); {@code max_tokens}, {@code temperature}, {@code top_p}, {@code stop_sequences} →
 * {@code inferenceConfig}; {@code tools} → {@code toolConfig.tools[].toolSpec} and {@code tool_choice} (auto, any,
 * tool) → {@code toolChoice}; {@code thinking} and {@code redacted_thinking} blocks sent back →
 * {@code reasoningContent} ({@code reasoningText} with its {@code signature}, or {@code redactedContent}); a thinking
 * request → the model's own reasoning switch where Bedrock documents one (GD-32: Amazon Nova 2's
 * {@code reasoningConfig}); stop sequences also ask for {@code additionalModelResponseFieldPaths: ["/stop_sequence"]}.
 * Back: text, {@code toolUse} and {@code reasoningContent} blocks ({@code reasoningText} → {@code thinking} with its
 * signature, {@code redactedContent} → {@code redacted_thinking}), the stop reason ({@code guardrail_intervened} and
 * {@code content_filtered} → {@code refusal}) with the matched stop sequence (the model's
 * {@code additionalModelResponseFields.stop_sequence}, else the only one asked for, else null), and usage with cache
 * reads and writes. Not mapped (dropped): {@code metadata}, {@code top_k}, documents and images by URL, and a thinking
 * request to a model without a documented switch (GD-32).
 */
public final class Converse {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The pointer that asks a model for the stop sequence it matched (in {@code additionalModelResponseFields}). */
    static final String STOP_SEQUENCE_PATH = "/stop_sequence";

    private Converse() {
    }

    /**
     * A Converse request: its body, and the stop sequences it asked for (empty when none), which the answer needs to
     * name the one that matched.
     */
    public record Request(byte[] body, List<String> stopSequences) {
    }

    /** As {@link #request(ByteBuf, String)} for a model without a documented reasoning switch. */
    public static byte[] request(ByteBuf messagesBody) {
        return request(messagesBody, "").body();
    }

    /**
     * The Converse request of a Messages request body (borrowed) for {@code modelId}. Throws IllegalArgumentException
     * when not JSON.
     */
    public static Request request(ByteBuf messagesBody, String modelId) {
        JsonNode in;
        try (ByteBufInputStream s = new ByteBufInputStream(messagesBody.duplicate())) {
            in = JSON.readTree((java.io.InputStream) s);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON", e);
        }
        ObjectNode out = JSON.createObjectNode();
        ArrayNode messages = out.putArray("messages");
        for (JsonNode m : in.path("messages")) {
            ObjectNode cm = messages.addObject();
            cm.put("role", m.path("role").asText());
            ArrayNode content = cm.putArray("content");
            JsonNode c = m.path("content");
            if (c.isTextual()) {
                content.addObject().put("text", c.asText());
            } else {
                for (JsonNode block : c) {
                    block(block, content);
                }
            }
        }
        JsonNode system = in.path("system");
        if (system.isTextual() && !system.asText().isEmpty()) {
            out.putArray("system").addObject().put("text", system.asText());
        } else if (system.isArray() && !system.isEmpty()) {
            ArrayNode s = out.putArray("system");
            for (JsonNode b : system) {
                if (b.has("text")) {
                    s.addObject().put("text", b.path("text").asText());
                }
            }
        }
        ObjectNode inference = JSON.createObjectNode();
        if (in.has("max_tokens")) {
            inference.set("maxTokens", in.get("max_tokens"));
        }
        if (in.has("temperature")) {
            inference.set("temperature", in.get("temperature"));
        }
        if (in.has("top_p")) {
            inference.set("topP", in.get("top_p"));
        }
        List<String> stops = new ArrayList<>();
        if (in.path("stop_sequences").isArray() && !in.path("stop_sequences").isEmpty()) {
            inference.set("stopSequences", in.get("stop_sequences"));
            in.get("stop_sequences").forEach(s -> stops.add(s.asText()));
        }
        if (!inference.isEmpty()) {
            out.set("inferenceConfig", inference);
        }
        ObjectNode reasoning = reasoning(in, modelId);
        if (reasoning != null) {
            out.putObject("additionalModelRequestFields").set("reasoningConfig", reasoning);
        }
        if (!stops.isEmpty()) {
            // A model that reports the sequence it matched gives it back here; one that does not is ignored (GD-32).
            out.putArray("additionalModelResponseFieldPaths").add(STOP_SEQUENCE_PATH);
        }
        JsonNode tools = in.path("tools");
        String choice = in.path("tool_choice").path("type").asText("auto");
        if (tools.isArray() && !tools.isEmpty() && !choice.equals("none")) {
            ObjectNode config = out.putObject("toolConfig");
            ArrayNode list = config.putArray("tools");
            for (JsonNode t : tools) {
                ObjectNode spec = list.addObject().putObject("toolSpec");
                spec.put("name", t.path("name").asText());
                if (t.hasNonNull("description")) {
                    spec.put("description", t.path("description").asText());
                }
                spec.putObject("inputSchema").set("json", t.path("input_schema").isObject()
                        ? t.get("input_schema") : JSON.createObjectNode().put("type", "object"));
            }
            switch (choice) {
                case "any" -> config.putObject("toolChoice").putObject("any");
                case "tool" -> config.putObject("toolChoice").putObject("tool")
                        .put("name", in.path("tool_choice").path("name").asText());
                default -> config.putObject("toolChoice").putObject("auto");
            }
        }
        try {
            return new Request(JSON.writeValueAsBytes(out), List.copyOf(stops));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Amazon Nova 2 ({@code amazon.nova-2…}, with or without a region prefix or an ARN in front). */
    static boolean isNova2(String modelId) {
        String id = modelId.substring(modelId.lastIndexOf('/') + 1);
        int at = id.indexOf("amazon.nova-2");
        return at == 0 || at > 0 && id.charAt(at - 1) == '.' && id.indexOf('.') == at - 1;
    }

    /**
     * GD-32: the Converse reasoning switch of a Messages {@code thinking} request, or null. Only Amazon Nova 2 has one
     * Bedrock documents ({@code reasoningConfig} with {@code maxReasoningEffort}); the budget becomes an effort by
     * GD-15 ({@code < 2048} low, {@code < 4096} medium, else high), {@code adaptive} takes
     * {@code output_config.effort} ({@code xhigh} and {@code max} as high; medium when none).
     */
    private static ObjectNode reasoning(JsonNode in, String modelId) {
        JsonNode thinking = in.path("thinking");
        String type = thinking.path("type").asText("");
        if (!isNova2(modelId) || !(type.equals("enabled") || type.equals("adaptive"))) {
            return null;
        }
        String effort;
        if (type.equals("enabled")) {
            long budget = thinking.path("budget_tokens").asLong(0);
            effort = budget < 2048 ? "low" : budget < 4096 ? "medium" : "high";
        } else {
            effort = switch (in.path("output_config").path("effort").asText("medium")) {
                case "low" -> "low";
                case "high", "xhigh", "max" -> "high";
                default -> "medium";
            };
        }
        ObjectNode r = JSON.createObjectNode();
        r.put("type", "enabled");
        r.put("maxReasoningEffort", effort);
        return r;
    }

    /**
     * The stop sequence an answer matched: the model's own word ({@code additionalModelResponseFields.stop_sequence}),
     * else the only one asked for; null when the stop was not a stop sequence or several were asked and the model did
     * not say which.
     */
    static String matched(String stopReason, JsonNode additional, List<String> asked) {
        if (!"stop_sequence".equals(stopReason)) {
            return null;
        }
        JsonNode own = additional == null ? null : additional.get("stop_sequence");
        if (own != null && own.isTextual()) {
            return own.textValue();
        }
        return asked.size() == 1 ? asked.get(0) : null;
    }

    private static void block(JsonNode block, ArrayNode content) {
        switch (block.path("type").asText()) {
            case "text" -> content.addObject().put("text", block.path("text").asText());
            case "image" -> {
                JsonNode source = block.path("source");
                if ("base64".equals(source.path("type").asText())) {
                    String media = source.path("media_type").asText("image/png");
                    ObjectNode image = content.addObject().putObject("image");
                    image.put("format", media.substring(media.indexOf('/') + 1));
                    image.putObject("source").put("bytes", source.path("data").asText());
                }
            }
            case "tool_use" -> {
                ObjectNode use = content.addObject().putObject("toolUse");
                use.put("toolUseId", block.path("id").asText());
                use.put("name", block.path("name").asText());
                use.set("input", block.path("input").isObject() ? block.get("input") : JSON.createObjectNode());
            }
            case "tool_result" -> {
                ObjectNode result = content.addObject().putObject("toolResult");
                result.put("toolUseId", block.path("tool_use_id").asText());
                ArrayNode rc = result.putArray("content");
                JsonNode c = block.path("content");
                if (c.isTextual()) {
                    rc.addObject().put("text", c.asText());
                } else {
                    for (JsonNode part : c) {
                        if ("text".equals(part.path("type").asText())) {
                            rc.addObject().put("text", part.path("text").asText());
                        }
                    }
                }
                if (rc.isEmpty()) {
                    rc.addObject().put("text", "");
                }
                result.put("status", block.path("is_error").asBoolean(false) ? "error" : "success");
            }
            case "thinking" -> {
                // Reasoning goes back as it came: its text with its signature (none for unsigned reasoning).
                ObjectNode text = content.addObject().putObject("reasoningContent").putObject("reasoningText");
                text.put("text", block.path("thinking").asText());
                String signature = block.path("signature").asText("");
                if (!signature.isEmpty()) {
                    text.put("signature", signature);
                }
            }
            case "redacted_thinking" -> content.addObject().putObject("reasoningContent")
                    .put("redactedContent", block.path("data").asText());
            default -> {
                // documents and the rest: not sent to Converse
            }
        }
    }

    /** Converse's stop reason as Anthropic's. */
    static String stopReason(String converse) {
        if (converse == null) {
            return "end_turn";
        }
        return switch (converse) {
            case "tool_use", "max_tokens", "stop_sequence", "end_turn" -> converse;
            case "guardrail_intervened", "content_filtered" -> "refusal";
            default -> "end_turn";
        };
    }

    /** As {@link #answer(ByteBufAllocator, ByteBuf, String, String, List)} for a request without stop sequences. */
    public static ByteBuf answer(ByteBufAllocator alloc, ByteBuf converseAnswer, String model, String id) {
        return answer(alloc, converseAnswer, model, id, List.of());
    }

    /**
     * The Anthropic message of a Converse answer (borrowed), in a new buffer; {@code model} names it, {@code stops} are
     * the stop sequences the request asked for.
     */
    public static ByteBuf answer(ByteBufAllocator alloc, ByteBuf converseAnswer, String model, String id,
            List<String> stops) {
        JsonNode in;
        try (ByteBufInputStream s = new ByteBufInputStream(converseAnswer.duplicate())) {
            in = JSON.readTree((java.io.InputStream) s);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON", e);
        }
        return write(alloc, g -> {
            g.writeStartObject();
            g.writeStringField("id", id);
            g.writeStringField("type", "message");
            g.writeStringField("role", "assistant");
            g.writeStringField("model", model);
            g.writeArrayFieldStart("content");
            for (JsonNode b : in.path("output").path("message").path("content")) {
                if (b.has("text")) {
                    g.writeStartObject();
                    g.writeStringField("type", "text");
                    g.writeStringField("text", b.path("text").asText());
                    g.writeEndObject();
                } else if (b.has("toolUse")) {
                    JsonNode u = b.get("toolUse");
                    g.writeStartObject();
                    g.writeStringField("type", "tool_use");
                    g.writeStringField("id", u.path("toolUseId").asText());
                    g.writeStringField("name", u.path("name").asText());
                    g.writeFieldName("input");
                    JSON.writeTree(g, u.path("input").isObject() ? u.get("input") : JSON.createObjectNode());
                    g.writeEndObject();
                } else if (b.has("reasoningContent")) {
                    JsonNode rc = b.get("reasoningContent");
                    g.writeStartObject();
                    if (rc.has("redactedContent")) {
                        g.writeStringField("type", "redacted_thinking");
                        g.writeStringField("data", rc.path("redactedContent").asText());
                    } else {
                        JsonNode r = rc.path("reasoningText");
                        g.writeStringField("type", "thinking");
                        g.writeStringField("thinking", r.path("text").asText());
                        g.writeStringField("signature", r.path("signature").asText(""));
                    }
                    g.writeEndObject();
                }
            }
            g.writeEndArray();
            String reason = stopReason(in.path("stopReason").asText(null));
            g.writeStringField("stop_reason", reason);
            String matched = matched(reason, in.get("additionalModelResponseFields"), stops);
            if (matched == null) {
                g.writeNullField("stop_sequence");
            } else {
                g.writeStringField("stop_sequence", matched);
            }
            usage(g, in.path("usage"));
            g.writeEndObject();
        });
    }

    private static void usage(JsonGenerator g, JsonNode u) throws IOException {
        g.writeObjectFieldStart("usage");
        g.writeNumberField("input_tokens", u.path("inputTokens").asLong(0));
        g.writeNumberField("cache_read_input_tokens", u.path("cacheReadInputTokens").asLong(0));
        g.writeNumberField("cache_creation_input_tokens", u.path("cacheWriteInputTokens").asLong(0));
        g.writeNumberField("output_tokens", u.path("outputTokens").asLong(0));
        g.writeEndObject();
    }

    @FunctionalInterface
    private interface Body {
        void write(JsonGenerator g) throws IOException;
    }

    private static ByteBuf write(ByteBufAllocator alloc, Body body) {
        ByteBuf buf = alloc.buffer(256);
        boolean ok = false;
        try (OutputStream os = new ByteBufOutputStream(buf);
                JsonGenerator g = JSON.getFactory().createGenerator(os, JsonEncoding.UTF8)) {
            body.write(g);
            g.flush();
            ok = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (!ok) {
                buf.release();
            }
        }
        return buf;
    }

    /**
     * ConverseStream's events → Anthropic SSE events, one stream per instance: {@code messageStart} →
     * {@code message_start}; a content block's first delta (or its {@code contentBlockStart} for a tool) →
     * {@code content_block_start}; {@code contentBlockDelta} → {@code content_block_delta} (text, tool input JSON,
     * reasoning text and signature); {@code contentBlockStop} → {@code content_block_stop}; {@code messageStop}'s stop
     * reason and {@code metadata}'s usage → {@code message_delta} and {@code message_stop}.
     */
    public static final class Stream {
        private final String model;
        private final String id;
        private final List<String> stops;
        private String stopReason;
        private String stopSequence;
        private int openBlock = -1;
        private boolean stopped;

        public Stream(String model, String id) {
            this(model, id, List.of());
        }

        /** {@code stops}: the stop sequences the request asked for. */
        public Stream(String model, String id, List<String> stops) {
            this.model = model;
            this.id = id;
            this.stops = stops;
        }

        /** Whether {@code message_stop} went out. */
        public boolean stopped() {
            return stopped;
        }

        /** The SSE events of one Converse event (its payload borrowed), in a new buffer; null for none. */
        public ByteBuf event(ByteBufAllocator alloc, String type, ByteBuf payload) {
            JsonNode e;
            try (ByteBufInputStream s = new ByteBufInputStream(payload.duplicate())) {
                e = JSON.readTree((java.io.InputStream) s);
            } catch (IOException ex) {
                throw new IllegalArgumentException("not JSON", ex);
            }
            ByteBuf out = alloc.buffer(256);
            boolean ok = false;
            try {
                switch (type) {
                    case "messageStart" -> sse(out, "message_start", g -> {
                        g.writeStringField("type", "message_start");
                        g.writeObjectFieldStart("message");
                        g.writeStringField("id", id);
                        g.writeStringField("type", "message");
                        g.writeStringField("role", "assistant");
                        g.writeStringField("model", model);
                        g.writeArrayFieldStart("content");
                        g.writeEndArray();
                        g.writeNullField("stop_reason");
                        g.writeNullField("stop_sequence");
                        g.writeObjectFieldStart("usage");
                        g.writeNumberField("input_tokens", 0);
                        g.writeNumberField("output_tokens", 0);
                        g.writeEndObject();
                        g.writeEndObject();
                    });
                    case "contentBlockStart" -> {
                        int index = e.path("contentBlockIndex").asInt();
                        JsonNode use = e.path("start").path("toolUse");
                        if (!use.isMissingNode()) {
                            openBlock = index;
                            sse(out, "content_block_start", g -> {
                                g.writeStringField("type", "content_block_start");
                                g.writeNumberField("index", index);
                                g.writeObjectFieldStart("content_block");
                                g.writeStringField("type", "tool_use");
                                g.writeStringField("id", use.path("toolUseId").asText());
                                g.writeStringField("name", use.path("name").asText());
                                g.writeObjectFieldStart("input");
                                g.writeEndObject();
                                g.writeEndObject();
                            });
                        }
                    }
                    case "contentBlockDelta" -> delta(out, e);
                    case "contentBlockStop" -> {
                        int index = e.path("contentBlockIndex").asInt();
                        openBlock = -1;
                        sse(out, "content_block_stop", g -> {
                            g.writeStringField("type", "content_block_stop");
                            g.writeNumberField("index", index);
                        });
                    }
                    case "messageStop" -> {
                        stopReason = stopReason(e.path("stopReason").asText(null));
                        stopSequence = matched(stopReason, e.get("additionalModelResponseFields"), stops);
                    }
                    case "metadata" -> end(out, e.path("usage"));
                    default -> {
                    }
                }
                ok = true;
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            } finally {
                if (!ok) {
                    out.release();
                }
            }
            if (!out.isReadable()) {
                out.release();
                return null;
            }
            return out;
        }

        /** The end of a stream that had its {@code messageStop} but no {@code metadata}: null when nothing is owed. */
        public ByteBuf finish(ByteBufAllocator alloc) {
            if (stopped || stopReason == null) {
                return null;
            }
            ByteBuf out = alloc.buffer(128);
            try {
                end(out, JSON.createObjectNode());
            } catch (IOException ex) {
                out.release();
                throw new UncheckedIOException(ex);
            }
            return out;
        }

        private void delta(ByteBuf out, JsonNode e) throws IOException {
            int index = e.path("contentBlockIndex").asInt();
            JsonNode d = e.path("delta");
            if (d.has("text")) {
                startIfNeeded(out, index, "text");
                sse(out, "content_block_delta", g -> {
                    g.writeStringField("type", "content_block_delta");
                    g.writeNumberField("index", index);
                    g.writeObjectFieldStart("delta");
                    g.writeStringField("type", "text_delta");
                    g.writeStringField("text", d.path("text").asText());
                    g.writeEndObject();
                });
            } else if (d.has("toolUse")) {
                sse(out, "content_block_delta", g -> {
                    g.writeStringField("type", "content_block_delta");
                    g.writeNumberField("index", index);
                    g.writeObjectFieldStart("delta");
                    g.writeStringField("type", "input_json_delta");
                    g.writeStringField("partial_json", d.path("toolUse").path("input").asText());
                    g.writeEndObject();
                });
            } else if (d.has("reasoningContent") && d.get("reasoningContent").has("redactedContent")) {
                // Redacted reasoning is one whole block in Anthropic's stream: its start carries the data.
                if (openBlock == index) {
                    return; // a second piece of a block already given whole cannot be added to it
                }
                openBlock = index;
                String data = d.get("reasoningContent").path("redactedContent").asText();
                sse(out, "content_block_start", g -> {
                    g.writeStringField("type", "content_block_start");
                    g.writeNumberField("index", index);
                    g.writeObjectFieldStart("content_block");
                    g.writeStringField("type", "redacted_thinking");
                    g.writeStringField("data", data);
                    g.writeEndObject();
                });
            } else if (d.has("reasoningContent")) {
                JsonNode r = d.get("reasoningContent");
                startIfNeeded(out, index, "thinking");
                boolean signature = r.has("signature");
                sse(out, "content_block_delta", g -> {
                    g.writeStringField("type", "content_block_delta");
                    g.writeNumberField("index", index);
                    g.writeObjectFieldStart("delta");
                    if (signature) {
                        g.writeStringField("type", "signature_delta");
                        g.writeStringField("signature", r.path("signature").asText());
                    } else {
                        g.writeStringField("type", "thinking_delta");
                        g.writeStringField("thinking", r.path("text").asText());
                    }
                    g.writeEndObject();
                });
            }
        }

        private void startIfNeeded(ByteBuf out, int index, String kind) throws IOException {
            if (openBlock == index) {
                return;
            }
            openBlock = index;
            sse(out, "content_block_start", g -> {
                g.writeStringField("type", "content_block_start");
                g.writeNumberField("index", index);
                g.writeObjectFieldStart("content_block");
                g.writeStringField("type", kind);
                if (kind.equals("text")) {
                    g.writeStringField("text", "");
                } else {
                    g.writeStringField("thinking", "");
                    g.writeStringField("signature", "");
                }
                g.writeEndObject();
            });
        }

        private void end(ByteBuf out, JsonNode usage) throws IOException {
            if (stopped) {
                return;
            }
            stopped = true;
            String reason = stopReason == null ? "end_turn" : stopReason;
            String sequence = stopSequence;
            sse(out, "message_delta", g -> {
                g.writeStringField("type", "message_delta");
                g.writeObjectFieldStart("delta");
                g.writeStringField("stop_reason", reason);
                if (sequence == null) {
                    g.writeNullField("stop_sequence");
                } else {
                    g.writeStringField("stop_sequence", sequence);
                }
                g.writeEndObject();
                usage(g, usage);
            });
            sse(out, "message_stop", g -> g.writeStringField("type", "message_stop"));
        }

        private static void sse(ByteBuf out, String event, Body fields) throws IOException {
            out.writeCharSequence("event: " + event + "\ndata: ", StandardCharsets.US_ASCII);
            try (OutputStream os = new ByteBufOutputStream(out);
                    JsonGenerator g = JSON.getFactory().createGenerator(os, JsonEncoding.UTF8)) {
                g.writeStartObject();
                fields.write(g);
                g.writeEndObject();
            }
            out.writeCharSequence("\n\n", StandardCharsets.US_ASCII);
        }
    }
}
