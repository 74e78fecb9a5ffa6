package io.modelgateway.codecs.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.HashSet;

/**
 * Duplicate member names in a request body are refused (a 400 naming the key): two parsers that resolve them
 * differently — one keeps the first, another the last — would let a caller be authorized and accounted for one
 * value while the upstream acts on the other. The gateway refuses them wherever it reads or rewrites an object:
 * the peek checks the top-level object and the nested ones it reads ({@link Names}, cheap enough for every
 * request); a translated request, which is rebuilt from a tree, is checked everywhere by the tree reader, and
 * {@link #find} then names the key and where it is.
 */
public final class DuplicateKeys {
    /** The parser of {@link #find}: as deep as any reader of request bodies allows, numbers of any length. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxStringLength(Integer.MAX_VALUE)
                    .build())
            .build();
    private static final int MAX_SHOWN = 100;

    private DuplicateKeys() {
    }

    /**
     * The 400 for a duplicated key at {@code path} ({@code model}, {@code messages[2].role}): the path is the
     * OpenAI-style {@code param} and the message names the key, for both styles.
     */
    public static GatewayError error(String path) {
        String shown = path.length() > MAX_SHOWN ? path.substring(0, MAX_SHOWN) + "…" : path;
        return GatewayError.invalid("Duplicate key '" + shown + "' in the request body: each key may appear only "
                + "once in a JSON object.", shown, "duplicate_key");
    }

    /**
     * The path of the first duplicated key in {@code body} (as {@link #error} takes it), or null when there is
     * none or the body is not JSON. Walks the whole body with a set of names per open object: for the error path
     * only (a request already refused), never for every request. The body is borrowed, its indexes untouched.
     */
    public static String find(ByteBuf body) {
        try (InputStream in = new ByteBufInputStream(body.duplicate());
                JsonParser p = JSON.createParser(in)) {
            return find(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** As {@link #find(ByteBuf)}, for a JSON text (a tool call's {@code arguments}). */
    public static String find(String json) {
        try (JsonParser p = JSON.createParser(json)) {
            return find(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String find(JsonParser p) throws IOException {
        // One frame per open object or array: an object's names so far and its current key, an array's index.
        ArrayDeque<Frame> open = new ArrayDeque<>();
        JsonToken t;
        while ((t = p.nextToken()) != null) {
            Frame top = open.peek();
            switch (t) {
                case START_OBJECT, START_ARRAY -> {
                    if (top != null && top.names == null) {
                        top.index++;
                    }
                    open.push(new Frame(t == JsonToken.START_OBJECT));
                }
                case END_OBJECT, END_ARRAY -> open.pop();
                case FIELD_NAME -> {
                    top.key = p.currentName();
                    if (!top.names.add(top.key)) {
                        return path(open);
                    }
                }
                default -> {
                    if (top != null && top.names == null) {
                        top.index++;
                    }
                }
            }
        }
        return null;
    }

    /** {@code a.b[2].c}, outermost first, from the open frames (innermost first in the deque). */
    private static String path(ArrayDeque<Frame> open) {
        StringBuilder sb = new StringBuilder();
        var it = open.descendingIterator();
        boolean first = true;
        while (it.hasNext()) {
            Frame f = it.next();
            if (f.names != null) {
                if (!first) {
                    sb.append('.');
                }
                sb.append(f.key);
            } else {
                sb.append('[').append(f.index).append(']');
            }
            first = false;
        }
        return sb.toString();
    }

    private static final class Frame {
        final HashSet<String> names;
        String key;
        /** Arrays: index of the element being read (-1 before the first). */
        int index = -1;

        Frame(boolean object) {
            names = object ? new HashSet<>() : null;
        }
    }

    /**
     * The member names of one JSON object as the peek reads it, to refuse the second of two equal names. Made for
     * the few names of a request's top level or of a message: a 64-bit mask of name hashes answers "certainly new"
     * for most names with one bit test; a set bit is confirmed against the names so far, compared by hash first.
     * Past {@link #LINEAR_MAX} names (an unusually wide object) it moves to a hash set, so a hostile body of
     * thousands of names costs linear time, not quadratic. Reused for consecutive objects, and by the peek for
     * consecutive requests on one thread, with {@link #clear}: the arrays are made once.
     */
    static final class Names {
        static final int LINEAR_MAX = 32;
        private final String[] names = new String[LINEAR_MAX];
        private final int[] hashes = new int[LINEAR_MAX];
        private int size;
        private long mask;
        private HashSet<String> many;

        void clear() {
            // Names left in the array are not cleared: the peek's scanner keeps most of them in its names cache
            // anyway, and the rest (at most LINEAR_MAX) stay reachable only until the next object overwrites them.
            size = 0;
            mask = 0;
            many = null;
        }

        /** Adds {@code name}; false when the object already had it. */
        boolean add(String name) {
            if (many != null) {
                return many.add(name);
            }
            int h = name.hashCode();
            long bit = 1L << ((h ^ (h >>> 16)) & 63);
            if ((mask & bit) != 0) {
                for (int i = 0; i < size; i++) {
                    if (hashes[i] == h && names[i].equals(name)) {
                        return false;
                    }
                }
            }
            mask |= bit;
            if (size == LINEAR_MAX) {
                many = new HashSet<>(4 * LINEAR_MAX);
                for (int i = 0; i < size; i++) {
                    many.add(names[i]);
                }
                return many.add(name);
            }
            names[size] = name;
            hashes[size] = h;
            size++;
            return true;
        }
    }
}
