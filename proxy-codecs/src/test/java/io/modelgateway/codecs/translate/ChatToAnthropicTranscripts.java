package io.modelgateway.codecs.translate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Golden transcripts of the chat → Anthropic direction (resources under {@code c2a/}), and JSON tree
 * comparison that ignores key order and how a number is spelled ({@code 1.0} = {@code 1}).
 */
final class ChatToAnthropicTranscripts {
    static final String ID = "chatcmpl-TEST0000000000000000000000";
    static final long CREATED = 1787300000L;
    static final String FALLBACK_MODEL = "claude-fallback";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ChatToAnthropicTranscripts() {
    }

    /** A resource under {@code c2a/} as text. */
    static String text(String path) {
        try (InputStream in = ChatToAnthropicTranscripts.class.getResourceAsStream("c2a/" + path)) {
            if (in == null) {
                throw new IllegalArgumentException("no resource c2a/" + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] bytes(String path) {
        return text(path).getBytes(StandardCharsets.UTF_8);
    }

    static ByteBuf buf(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }

    static JsonNode tree(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads and releases. */
    static String string(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }

    /** The same JSON tree, keys sorted and numbers normalised, pretty-printed for a readable diff. */
    static String canonical(String json) {
        try {
            return JSON.writeValueAsString(normalise(tree(json)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void assertSameJson(String actual, String expected) {
        assertThat(actual).as("compact JSON: no raw line breaks").doesNotContain("\n");
        assertThat(canonical(actual)).isEqualTo(canonical(expected));
    }

    private static JsonNode normalise(JsonNode n) {
        if (n.isObject()) {
            List<String> names = new ArrayList<>();
            n.fieldNames().forEachRemaining(names::add);
            Collections.sort(names);
            ObjectNode o = NODES.objectNode();
            for (String name : names) {
                o.set(name, normalise(n.get(name)));
            }
            return o;
        }
        if (n.isArray()) {
            ArrayNode a = NODES.arrayNode();
            n.forEach(e -> a.add(normalise(e)));
            return a;
        }
        if (n.isNumber()) {
            return NODES.numberNode(n.decimalValue().stripTrailingZeros());
        }
        return n;
    }
}
