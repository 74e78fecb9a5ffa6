package io.modelgateway.core.simulator;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelgateway.codecs.ApiStyle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Answers {@code POST /v1/embeddings} like OpenAI (contract 4): one unit vector per input, in
 * input order, seeded by the input's content so the same text always maps to the same vector.
 *
 * <p>The native size is {@value #NATIVE_DIMENSIONS}. With {@code dimensions = d} the answer is the
 * first d components of the native vector, renormalised — computed directly as the normalised
 * first d draws of the same sequence, which is the same vector without making the other 1536 − d.
 */
final class EmbeddingsResponder {

    static final int NATIVE_DIMENSIONS = 1536;
    private static final int MAX_INPUTS = 2048;

    private final JsonFactory factory;

    EmbeddingsResponder(JsonFactory factory) {
        this.factory = factory;
    }

    SimulatedResponse answer(JsonNode root, RequestPlan plan) {
        RequestReader r = new RequestReader(ApiStyle.OPENAI);
        String model = r.requireString(root, "model", "model");
        List<Object> inputs = inputs(r, RequestReader.get(root, "input"));
        String encoding = r.optString(root, "encoding_format", "encoding_format");
        boolean base64;
        if (encoding == null || "float".equals(encoding)) {
            base64 = false;
        } else if ("base64".equals(encoding)) {
            base64 = true;
        } else {
            throw r.value("encoding_format", "'" + encoding + "' is not one of float, base64");
        }
        Integer dimensionsField = r.optInt(root, "dimensions", "dimensions", 1, NATIVE_DIMENSIONS);
        int dimensions = dimensionsField == null ? NATIVE_DIMENSIONS : dimensionsField;

        long tokens = 0;
        ByteArrayBuilder out = new ByteArrayBuilder(inputs.size() * dimensions * (base64 ? 6 : 12) + 128);
        try (JsonGenerator g = factory.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("object", "list");
            g.writeStringField("model", model);
            g.writeArrayFieldStart("data");
            ByteBuffer le = base64 ? ByteBuffer.allocate(4 * dimensions).order(ByteOrder.LITTLE_ENDIAN) : null;
            for (int i = 0; i < inputs.size(); i++) {
                Object in = inputs.get(i);
                long seed;
                if (in instanceof String s) {
                    seed = Prng.hash(Prng.hashStart(), s);
                    tokens += RequestReader.tokensFor(Vocabulary.utf8Length(s));
                } else {
                    long[] ids = (long[]) in;
                    seed = Prng.hash(Prng.hashStart(), 't');
                    for (long id : ids) {
                        seed = Prng.hash(seed, id);
                    }
                    tokens += ids.length;
                }
                float[] v = vector(Prng.mix(seed), dimensions);
                g.writeStartObject();
                g.writeStringField("object", "embedding");
                g.writeNumberField("index", i);
                g.writeFieldName("embedding");
                if (base64) {
                    le.clear();
                    for (float f : v) {
                        le.putFloat(f);
                    }
                    g.writeString(Base64.getEncoder().encodeToString(le.array()));
                } else {
                    g.writeStartArray();
                    for (float f : v) {
                        g.writeNumber(f);
                    }
                    g.writeEndArray();
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("usage");
            g.writeNumberField("prompt_tokens", tokens);
            g.writeNumberField("total_tokens", tokens);
            g.writeEndObject();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> headers = SimErrors.idHeaders(ApiStyle.OPENAI, SimErrors.requestId());
        return plan.nonStream(ApiStyle.OPENAI, headers, out.toByteArray());
    }

    /** A unit vector of {@code dimensions} float32 values, uniform in direction-ish, fixed by the seed. */
    static float[] vector(long seed, int dimensions) {
        Prng rng = new Prng(seed);
        double[] raw = new double[dimensions];
        double sum = 0;
        for (int i = 0; i < dimensions; i++) {
            double x = rng.nextDouble() * 2 - 1;
            raw[i] = x;
            sum += x * x;
        }
        double scale = 1 / Math.sqrt(sum);
        float[] out = new float[dimensions];
        for (int i = 0; i < dimensions; i++) {
            out[i] = (float) (raw[i] * scale);
        }
        return out;
    }

    /** The inputs as Strings or long[] token ids (contract 4.2). */
    private static List<Object> inputs(RequestReader r, JsonNode input) {
        if (input == null) {
            throw r.missing("input");
        }
        if (input.isTextual()) {
            if (input.textValue().isEmpty()) {
                throw r.value("input", "must not be empty");
            }
            return List.of(input.textValue());
        }
        if (!input.isArray()) {
            throw r.type("input", "a string, an array of strings, or an array of token arrays");
        }
        if (input.isEmpty()) {
            throw r.value("input", "must not be empty");
        }
        JsonNode first = input.get(0);
        List<Object> out = new ArrayList<>(input.size());
        if (first.isIntegralNumber()) {
            out.add(tokenIds(r, input, "input"));
            return out;
        }
        if (input.size() > MAX_INPUTS) {
            throw r.value("input", "at most " + MAX_INPUTS + " inputs are allowed");
        }
        for (int i = 0; i < input.size(); i++) {
            JsonNode item = input.get(i);
            String path = r.index("input", i);
            if (first.isTextual() && item.isTextual()) {
                if (item.textValue().isEmpty()) {
                    throw r.value(path, "must not be empty");
                }
                out.add(item.textValue());
            } else if (first.isArray() && item.isArray()) {
                out.add(tokenIds(r, item, path));
            } else {
                throw r.type(path, "the same kind of input as input[0] (strings or token arrays, not mixed)");
            }
        }
        return out;
    }

    private static long[] tokenIds(RequestReader r, JsonNode array, String path) {
        if (array.isEmpty()) {
            throw r.value(path, "must not be empty");
        }
        long[] ids = new long[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = array.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToLong() || t.longValue() < 0) {
                throw r.type(r.index(path, i), "a non-negative integer token id");
            }
            ids[i] = t.longValue();
        }
        return ids;
    }
}
