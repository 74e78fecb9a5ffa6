package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.usage.InputTokenCounter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An OpenAI-style embeddings request served by Google (GD-31, contract 4.5), and the translator of its answer:
 * <ul>
 *   <li>Vertex AI ({@link Api#VERTEX_PREDICT}): {@code POST …/publishers/google/models/{model}:predict} with
 *       {@code {"instances":[{"content":…}…],"parameters":{"outputDimensionality":N}}}; the answer's
 *       {@code predictions[i].embeddings.values} are the vectors and {@code …statistics.token_count} the input tokens
 *       of each (summed into {@code usage});</li>
 *   <li>the Gemini API ({@link Api#GEMINI_BATCH}): {@code POST /v1beta/models/{model}:batchEmbedContents} with
 *       {@code {"requests":[{"model":"models/{model}","content":{"parts":[{"text":…}]},"outputDimensionality":N}…]}};
 *       the answer's {@code embeddings[i].values} are the vectors. It reports no token count: {@code usage} is the
 *       gateway's own count of the inputs ({@link InputTokenCounter}), accounted as an estimate.</li>
 * </ul>
 * Only text inputs can be sent (a string or an array of strings; token ids are a 400). {@code dimensions} becomes
 * {@code outputDimensionality}; {@code user} is dropped. The answer is OpenAI's list, one element per input in input
 * order ({@code index} = its position), each vector as float32 numbers or, with {@code encoding_format: "base64"}, as
 * the Base64 of its little-endian float32 bytes (contract 4.4: the gateway encodes, Google returns numbers only).
 *
 * <p>The answer is read with a streaming parser and written as it is read, never as a tree: a batch of long vectors
 * is large (it is bounded by {@code max_collected_bytes} before it gets here). One per exchange; the request body is
 * borrowed, the bodies made here belong to the caller.
 */
public final class GoogleEmbeddings implements ResponseTranslator {
    /** Which Google API the request goes to. */
    public enum Api {
        /** Vertex AI's {@code :predict} of a publisher embedding model. */
        VERTEX_PREDICT,
        /** The Gemini API's {@code :batchEmbedContents}. */
        GEMINI_BATCH
    }

    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build();

    private final Api api;
    private final String model;
    private final int inputs;
    private final boolean base64;
    /** The gateway's count of the inputs: the Gemini API's usage, and Vertex's when it gives no statistics. */
    private final long estimate;
    private Usage usage;
    private boolean estimated;

    private GoogleEmbeddings(Api api, String model, int inputs, boolean base64, long estimate) {
        this.api = api;
        this.model = model;
        this.inputs = inputs;
        this.base64 = base64;
        this.estimate = estimate;
    }

    /**
     * Translates the embeddings request in {@code body} (already checked by the request peek: {@code input} is a
     * non-empty string, or 1 to 2048 strings or token ids) for {@code upstreamModel} at {@code api}.
     *
     * @throws TranslationException 400 for token-id inputs (Google embeds text only)
     */
    public static TranslatedRequest translate(ByteBufAllocator alloc, ByteBuf body, Api api, String upstreamModel)
            throws TranslationException {
        ObjectNode req = ChatRequestToMessages.parse(body);
        List<String> texts = texts(req.get("input"), upstreamModel);
        JsonNode d = req.get("dimensions");
        int dimensions = d != null && d.canConvertToInt() ? d.intValue() : 0;
        boolean base64 = "base64".equals(req.path("encoding_format").asText(null));
        long estimate;
        if (api == Api.GEMINI_BATCH) {
            estimate = InputTokenCounter.texts(texts);
        } else {
            long chars = 0;
            for (String t : texts) {
                chars += t.length();
            }
            estimate = (chars + 3) / 4; // Vertex reports its count; this stands in only when it does not
        }
        String resource = "models/" + (upstreamModel.startsWith("models/") ? upstreamModel.substring(7) : upstreamModel);
        ByteBuf out;
        try {
            out = JsonOut.write(alloc, 256 + body.readableBytes() + 64 * texts.size(), JSON, g -> {
                g.writeStartObject();
                if (api == Api.VERTEX_PREDICT) {
                    g.writeArrayFieldStart("instances");
                    for (String t : texts) {
                        g.writeStartObject();
                        g.writeStringField("content", t);
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    if (dimensions > 0) {
                        g.writeObjectFieldStart("parameters");
                        g.writeNumberField("outputDimensionality", dimensions);
                        g.writeEndObject();
                    }
                } else {
                    g.writeArrayFieldStart("requests");
                    for (String t : texts) {
                        g.writeStartObject();
                        g.writeStringField("model", resource);
                        g.writeObjectFieldStart("content");
                        g.writeArrayFieldStart("parts");
                        g.writeStartObject();
                        g.writeStringField("text", t);
                        g.writeEndObject();
                        g.writeEndArray();
                        g.writeEndObject();
                        if (dimensions > 0) {
                            g.writeNumberField("outputDimensionality", dimensions);
                        }
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            });
        } catch (IOException e) {
            throw new TranslationException(GatewayError.invalid("The embeddings request could not be written for "
                    + "the provider.", "input", "invalid_value"));
        }
        return new TranslatedRequest(out, false, new GoogleEmbeddings(api, upstreamModel, texts.size(), base64,
                estimate));
    }

    /** The inputs as texts, in order; token ids (an integer or an array of them) are a 400. */
    private static List<String> texts(JsonNode input, String upstreamModel) throws TranslationException {
        if (input != null && input.isTextual()) {
            return List.of(input.textValue());
        }
        List<String> texts = new ArrayList<>(input == null ? 0 : input.size());
        if (input != null && input.isArray()) {
            for (JsonNode e : input) {
                if (!e.isTextual()) {
                    throw new TranslationException(GatewayError.invalid("Invalid 'input': the model is served by "
                            + "Google (`" + upstreamModel + "`), which embeds text only; send strings, not token ids.",
                            "input", "unsupported_value"));
                }
                texts.add(e.textValue());
            }
        }
        if (texts.isEmpty()) {
            throw new TranslationException(GatewayError.invalid("Invalid 'input': must not be empty.", "input",
                    "invalid_value"));
        }
        return texts;
    }

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        long[] tokens = {0, 0}; // the sum of the reported counts, and how many inputs reported one
        int[] count = {0};
        ByteBuf out;
        try (JsonParser p = JSON.createParser((InputStream) new ByteBufInputStream(upstreamBody.duplicate()))) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw unreadable();
            }
            out = JsonOut.write(alloc, Math.max(256, upstreamBody.readableBytes() / (base64 ? 2 : 1)), JSON, g -> {
                g.writeStartObject();
                g.writeStringField("object", "list");
                g.writeArrayFieldStart("data");
                String list = api == Api.VERTEX_PREDICT ? "predictions" : "embeddings";
                JsonToken t;
                while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    JsonToken v = p.nextToken();
                    if (name.equals(list) && v == JsonToken.START_ARRAY) {
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            if (count[0] == inputs) {
                                throw unreadable(); // more vectors than inputs
                            }
                            g.writeStartObject();
                            g.writeStringField("object", "embedding");
                            g.writeNumberField("index", count[0]++);
                            g.writeFieldName("embedding");
                            if (api == Api.VERTEX_PREDICT) {
                                prediction(p, g, tokens);
                            } else {
                                vectorObject(p, g);
                            }
                            g.writeEndObject();
                        }
                        if (p.currentToken() != JsonToken.END_ARRAY) {
                            throw unreadable();
                        }
                    } else {
                        p.skipChildren();
                    }
                }
                if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                    throw unreadable();
                }
                if (count[0] != inputs) {
                    throw unreadable(); // a vector missing
                }
                g.writeEndArray();
                g.writeStringField("model", model);
                boolean reported = api == Api.VERTEX_PREDICT && tokens[1] == inputs;
                long prompt = reported ? tokens[0] : estimate;
                g.writeObjectFieldStart("usage");
                g.writeNumberField("prompt_tokens", prompt);
                g.writeNumberField("total_tokens", prompt);
                g.writeEndObject();
                g.writeEndObject();
                usage = new Usage(prompt, 0, 0, 0, 0);
                estimated = !reported;
            });
        } catch (TranslationException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw unreadable();
        }
        return out;
    }

    /** One Vertex prediction: {@code {"embeddings":{"values":[…],"statistics":{"token_count":N,…}}}}. */
    private void prediction(JsonParser p, JsonGenerator g, long[] tokens) throws IOException, TranslationException {
        boolean written = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (name.equals("embeddings") && v == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String inner = p.currentName();
                    JsonToken iv = p.nextToken();
                    if (inner.equals("values") && iv == JsonToken.START_ARRAY && !written) {
                        vector(p, g);
                        written = true;
                    } else if (inner.equals("statistics") && iv == JsonToken.START_OBJECT) {
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String s = p.currentName();
                            JsonToken sv = p.nextToken();
                            if (s.equals("token_count") && sv.isNumeric()) {
                                double n = p.getDoubleValue();
                                if (n >= 0 && n < 1e12) {
                                    tokens[0] += (long) n;
                                    tokens[1]++;
                                }
                            } else {
                                p.skipChildren();
                            }
                        }
                    } else {
                        p.skipChildren();
                    }
                }
            } else {
                p.skipChildren();
            }
        }
        if (!written) {
            throw unreadable();
        }
    }

    /** One Gemini API embedding: {@code {"values":[…]}}. */
    private void vectorObject(JsonParser p, JsonGenerator g) throws IOException, TranslationException {
        boolean written = false;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (name.equals("values") && v == JsonToken.START_ARRAY && !written) {
                vector(p, g);
                written = true;
            } else {
                p.skipChildren();
            }
        }
        if (!written) {
            throw unreadable();
        }
    }

    /** The numbers of a {@code values} array (the parser on its start), as float32 numbers or their Base64. */
    private void vector(JsonParser p, JsonGenerator g) throws IOException, TranslationException {
        if (!base64) {
            g.writeStartArray();
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t == null || !t.isNumeric()) {
                    throw unreadable();
                }
                g.writeNumber(p.getFloatValue());
            }
            g.writeEndArray();
            return;
        }
        float[] v = new float[256];
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t == null || !t.isNumeric()) {
                throw unreadable();
            }
            if (n == v.length) {
                v = Arrays.copyOf(v, n * 2);
            }
            v[n++] = p.getFloatValue();
        }
        g.writeString(EmbeddingsBase64.encode(v, n));
    }

    private static TranslationException unreadable() {
        return new TranslationException(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                "The upstream provider returned an embeddings response the gateway could not read.", null, null));
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        throw new UnsupportedOperationException("embeddings do not stream");
    }

    @Override
    public Usage usage() {
        return usage == null ? Usage.ZERO : usage;
    }

    @Override
    public Usage answeredUsage() {
        return usage;
    }

    @Override
    public boolean answeredUsageEstimated() {
        return estimated;
    }
}
