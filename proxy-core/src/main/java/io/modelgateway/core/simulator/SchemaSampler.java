package io.modelgateway.core.simulator;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * Writes a JSON value that a JSON Schema accepts, for tool-call arguments and {@code json_schema}
 * answers. Covers the schemas tools are written with: {@code type} (also as an array),
 * {@code enum}/{@code const} (first value), {@code properties} (all of them), {@code items},
 * {@code minItems}, numeric bounds, string {@code format}/{@code minLength}/{@code maxLength},
 * {@code anyOf}/{@code oneOf}/{@code allOf} (first branch) and local {@code $ref}s. Depth is bounded,
 * so recursive schemas end in empty objects and arrays.
 */
final class SchemaSampler {

    private static final int MAX_DEPTH = 6;
    private static final int MAX_ITEMS = 8;

    private final ObjectMapper mapper;
    private final JsonNode root;
    private final Prng rng;

    private SchemaSampler(ObjectMapper mapper, JsonNode root, Prng rng) {
        this.mapper = mapper;
        this.root = root;
        this.rng = rng;
    }

    /** Compact JSON of an object for {@code schema}; {@code {}} when the schema names no properties. */
    static String object(ObjectMapper mapper, JsonNode schema, Prng rng) {
        return write(mapper, schema, rng, true);
    }

    /** Compact JSON of any value for {@code schema} (an object when the schema does not say). */
    static String value(ObjectMapper mapper, JsonNode schema, Prng rng) {
        return write(mapper, schema, rng, false);
    }

    private static String write(ObjectMapper mapper, JsonNode schema, Prng rng, boolean forceObject) {
        StringWriter w = new StringWriter(64);
        try (JsonGenerator g = mapper.getFactory().createGenerator(w)) {
            SchemaSampler s = new SchemaSampler(mapper, schema, rng);
            if (forceObject) {
                s.writeObject(g, schema, 0);
            } else {
                s.writeValue(g, schema, 0);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    private void writeValue(JsonGenerator g, JsonNode schema, int depth) throws IOException {
        schema = resolve(schema, depth);
        if (schema == null || !schema.isObject()) {
            // true / {} / absent: anything goes; an object is the friendliest answer at the top.
            if (depth == 0) {
                writeObject(g, null, depth);
            } else {
                g.writeString(word());
            }
            return;
        }
        JsonNode constant = schema.get("const");
        if (constant != null) {
            mapper.writeTree(g, constant);
            return;
        }
        JsonNode en = schema.get("enum");
        if (en != null && en.isArray() && !en.isEmpty()) {
            mapper.writeTree(g, en.get(0));
            return;
        }
        for (String combinator : new String[] {"anyOf", "oneOf", "allOf"}) {
            JsonNode branches = schema.get(combinator);
            if (branches != null && branches.isArray() && !branches.isEmpty() && !schema.has("type")) {
                writeValue(g, firstNonNull(branches, depth), depth + 1);
                return;
            }
        }
        switch (typeOf(schema)) {
            case "object" -> writeObject(g, schema, depth);
            case "array" -> writeArray(g, schema, depth);
            case "integer" -> g.writeNumber(integer(schema));
            case "number" -> g.writeNumber(number(schema));
            case "boolean" -> g.writeBoolean(true);
            case "null" -> g.writeNull();
            default -> g.writeString(string(schema));
        }
    }

    private void writeObject(JsonGenerator g, JsonNode schema, int depth) throws IOException {
        schema = resolve(schema, depth);
        g.writeStartObject();
        JsonNode props = schema == null ? null : schema.get("properties");
        if (props != null && props.isObject() && depth < MAX_DEPTH) {
            for (var e : props.properties()) {
                g.writeFieldName(e.getKey());
                writeValue(g, e.getValue(), depth + 1);
            }
        }
        g.writeEndObject();
    }

    private void writeArray(JsonGenerator g, JsonNode schema, int depth) throws IOException {
        int min = schema.path("minItems").asInt(1);
        int max = schema.path("maxItems").asInt(MAX_ITEMS);
        int count = depth >= MAX_DEPTH ? 0 : Math.min(Math.min(Math.max(1, min), MAX_ITEMS), Math.max(0, max));
        JsonNode items = schema.get("items");
        g.writeStartArray();
        for (int i = 0; i < count; i++) {
            if (items != null && items.isObject()) {
                writeValue(g, items, depth + 1);
            } else {
                g.writeString(word());
            }
        }
        g.writeEndArray();
    }

    private long integer(JsonNode schema) {
        long lo = schema.has("minimum") ? (long) Math.ceil(schema.get("minimum").asDouble())
                : schema.has("exclusiveMinimum") ? (long) Math.floor(schema.get("exclusiveMinimum").asDouble()) + 1
                : 1;
        long hi = schema.has("maximum") ? (long) Math.floor(schema.get("maximum").asDouble())
                : schema.has("exclusiveMaximum") ? (long) Math.ceil(schema.get("exclusiveMaximum").asDouble()) - 1
                : lo + 99;
        if (hi < lo) {
            return lo;
        }
        return lo + rng.nextInt((int) Math.min(hi - lo + 1, 1000));
    }

    private double number(JsonNode schema) {
        double lo = schema.has("minimum") ? schema.get("minimum").asDouble()
                : schema.has("exclusiveMinimum") ? schema.get("exclusiveMinimum").asDouble() : 0;
        double hi = schema.has("maximum") ? schema.get("maximum").asDouble()
                : schema.has("exclusiveMaximum") ? schema.get("exclusiveMaximum").asDouble() : lo + 100;
        if (!(hi > lo)) {
            return lo;
        }
        // Two decimals look like data; the midpoint band keeps exclusive bounds satisfied.
        double v = lo + (hi - lo) * (0.25 + 0.5 * rng.nextDouble());
        double rounded = Math.round(v * 100) / 100.0;
        return rounded > lo && rounded < hi ? rounded : v;
    }

    private String string(JsonNode schema) {
        String format = schema.path("format").asText("");
        String s = switch (format) {
            case "date" -> "2026-08-21";
            case "date-time" -> "2026-08-21T12:41:00Z";
            case "time" -> "12:41:00";
            case "email" -> "user@example.com";
            case "uri", "url" -> "https://example.com/" + Vocabulary.ASCII_WORDS[rng.nextInt(Vocabulary.ASCII_WORDS.length)];
            case "uuid" -> "3f2a9c1e-7b4d-4e8a-9c2f-1d5e6a7b8c9d";
            default -> word();
        };
        int minLength = schema.path("minLength").asInt(0);
        StringBuilder b = new StringBuilder(s);
        while (b.length() < minLength) {
            b.append(' ').append(word());
        }
        int maxLength = schema.path("maxLength").asInt(Integer.MAX_VALUE);
        if (b.length() > maxLength) {
            b.setLength(Math.max(0, maxLength));
        }
        return b.toString();
    }

    private String word() {
        return Vocabulary.WORDS[rng.nextInt(Vocabulary.WORDS.length)];
    }

    /** Follows local {@code $ref}s ("#/$defs/x"); an unresolvable or too deep one means "anything". */
    private JsonNode resolve(JsonNode schema, int depth) {
        for (int hops = 0; schema != null && schema.isObject() && schema.has("$ref") && hops < MAX_DEPTH; hops++) {
            String ref = schema.get("$ref").asText("");
            if (!ref.startsWith("#") || root == null || depth >= MAX_DEPTH) {
                return null;
            }
            JsonNode target = root.at(ref.substring(1));
            schema = target.isMissingNode() ? null : target;
        }
        return schema;
    }

    private JsonNode firstNonNull(JsonNode branches, int depth) {
        for (JsonNode b : branches) {
            JsonNode r = resolve(b, depth);
            if (r == null || !"null".equals(r.path("type").asText())) {
                return b;
            }
        }
        return branches.get(0);
    }

    private static String typeOf(JsonNode schema) {
        JsonNode type = schema.get("type");
        if (type != null && type.isTextual()) {
            return type.textValue();
        }
        if (type != null && type.isArray()) {
            for (JsonNode t : type) {
                if (t.isTextual() && !"null".equals(t.textValue())) {
                    return t.textValue();
                }
            }
            return "null";
        }
        if (schema.has("properties")) {
            return "object";
        }
        if (schema.has("items")) {
            return "array";
        }
        return "string";
    }
}
