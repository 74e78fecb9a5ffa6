package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reading the translators share: the members of an object and the objects of an array with jackson-core's
 * streaming parser (anything of another shape is skipped whole, so a reader only names what it wants), and the
 * lenient field reads of a parsed tree. Not for the pass-through hot path (the peek and the usage scanners keep
 * their own loops); the translators read one event or one answer at a time.
 */
final class JsonFields {
    private JsonFields() {
    }

    /** Reads one member; the parser is on the value's first token {@code t}, and must be left on its last. */
    @FunctionalInterface
    interface Member {
        void read(JsonParser p, String name, JsonToken t) throws IOException;
    }

    /** Reads one array element that is an object; the parser is on its {@code START_OBJECT}. */
    @FunctionalInterface
    interface Element {
        void read(JsonParser p) throws IOException;
    }

    /**
     * The members of a value whose first token is {@code t}: each goes to {@code member}; a value that is not
     * an object is skipped. Returns whether it was an object.
     */
    static boolean members(JsonParser p, JsonToken t, Member member) throws IOException {
        if (t != JsonToken.START_OBJECT) {
            p.skipChildren();
            return false;
        }
        members(p, member);
        return true;
    }

    /** The members of the object whose {@code START_OBJECT} the parser is on; it is left on the {@code END_OBJECT}. */
    static void members(JsonParser p, Member member) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            member.read(p, name, p.nextToken());
        }
    }

    /** The object elements of an array value whose first token is {@code t}; other elements and values are skipped. */
    static void objects(JsonParser p, JsonToken t, Element element) throws IOException {
        if (t != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
            if (e != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            element.read(p);
        }
    }

    /** A string value; anything else is skipped and reads as absent (null). */
    static String string(JsonParser p, JsonToken t) throws IOException {
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }

    /**
     * A whole upstream answer (borrowed, left untouched) read as a tree by {@code mapper}, whose settings decide the
     * numbers it keeps; anything but one JSON object is {@link TranslationException#unreadableAnswer()}.
     */
    static JsonNode answer(ObjectMapper mapper, ByteBuf body) throws TranslationException {
        JsonNode root;
        try (InputStream in = new ByteBufInputStream(body.duplicate())) {
            root = mapper.readTree(in);
        } catch (IOException | RuntimeException e) {
            throw TranslationException.unreadableAnswer();
        }
        if (root == null || !root.isObject()) {
            throw TranslationException.unreadableAnswer();
        }
        return root;
    }

    /** A tree node's string, null when it is absent or not a string. */
    static String text(JsonNode n) {
        return n != null && n.isTextual() ? n.textValue() : null;
    }
}
