package io.modelgateway.codecs.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link JsonScanner} against jackson-core, an independent implementation with the same strictness (its default
 * features, the peek's limits): on many seeded random documents and byte-level mutations of them, both must accept
 * or both refuse, and when they accept they must agree on every token, its value and its start offset.
 *
 * <p>The one allowed disagreement: a body that is not well-formed UTF-8 (as the JDK's strict decoder judges it), or
 * that Jackson would read as UTF-16 or UTF-32 (a zero among its first two bytes). Jackson passes over some malformed
 * UTF-8 in strings it skips and decodes other encodings; the scanner must refuse all of these.
 *
 * <p>Run with {@code -Djsonscanner.seed=N} to replay a reported seed.
 */
class JsonScannerDifferentialTest {
    private static final int DOCUMENTS = 20_000;
    private static final int MUTATIONS_PER_DOCUMENT = 3;
    private static final JsonFactory JACKSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(RequestPeek.MAX_DEPTH)
                    .maxNumberLength(64)
                    .build())
            .build();

    @Test
    void scanner_agreesWithJackson_onRandomDocumentsAndTheirMutations() {
        long seed = Long.getLong("jsonscanner.seed", 0x5CA77E5L);
        JsonScanner scanner = new JsonScanner(RequestPeek.MAX_DEPTH, 64);
        int accepted = 0;
        int refused = 0;
        int notUtf8 = 0;
        for (int i = 0; i < DOCUMENTS; i++) {
            long docSeed = seed + i;
            Random r = new Random(docSeed);
            byte[] doc = new DocumentGenerator(r).document();
            for (int m = 0; m <= MUTATIONS_PER_DOCUMENT; m++) {
                byte[] input = m == 0 ? doc : mutate(doc, r);
                int document = i;
                int mutation = m;
                Supplier<String> where = () -> "seed " + docSeed + " (base seed " + seed + "), document " + document
                        + ", mutation " + mutation + ", input " + show(input);
                Outcome expected = jackson(input);
                Outcome actual = scan(scanner, input, where);
                if (!wellFormedUtf8(input) || (input.length >= 2 && (input[0] == 0 || input[1] == 0))) {
                    assertFalse(actual.ok, () -> "the scanner must refuse a body that is not UTF-8: " + where.get());
                    notUtf8++;
                    continue;
                }
                assertEquals(expected.ok, actual.ok, () -> "accepted? Jackson: " + expected.error + "; scanner: "
                        + actual.error + "; " + where.get());
                if (expected.ok) {
                    assertEquals(expected.tokens, actual.tokens, where);
                    accepted++;
                } else {
                    refused++;
                }
            }
        }
        System.out.println("JsonScannerDifferentialTest: base seed " + seed + ": accepted " + accepted + ", refused "
                + refused + ", not UTF-8 " + notUtf8);
        // The generator must keep producing all three kinds, or the test proves little.
        assertTrue(accepted > DOCUMENTS / 2 && refused > DOCUMENTS / 2 && notUtf8 > 100,
                "accepted " + accepted + ", refused " + refused + ", not UTF-8 " + notUtf8);
    }

    // ---------------------------------------------------------------- the two readers

    private static final class Outcome {
        boolean ok;
        String error;
        final List<String> tokens = new ArrayList<>();
    }

    private static Outcome jackson(byte[] b) {
        Outcome o = new Outcome();
        try (JsonParser p = JACKSON.createParser(b, 0, b.length)) {
            int depth = 0;
            boolean rootDone = false;
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (rootDone) {
                    o.error = "data after the root value: " + t;
                    return o;
                }
                long at = p.currentTokenLocation().getByteOffset();
                String value = switch (t) {
                    case FIELD_NAME -> p.currentName();
                    case VALUE_STRING -> p.getText();
                    case VALUE_NUMBER_INT -> p.getText() + " long " + jacksonLong(p) + " double "
                            + Double.doubleToLongBits(p.getDoubleValue());
                    case VALUE_NUMBER_FLOAT -> p.getText() + " double " + Double.doubleToLongBits(p.getDoubleValue());
                    default -> "";
                };
                o.tokens.add(t + "@" + at + " " + value);
                if (t.isStructStart()) {
                    depth++;
                } else if (t.isStructEnd()) {
                    depth--;
                }
                rootDone = depth == 0;
            }
            o.ok = true;
        } catch (IOException e) {
            o.error = e.getClass().getSimpleName() + ": " + e.getMessage().lines().findFirst().orElse("");
        }
        return o;
    }

    private static String jacksonLong(JsonParser p) throws IOException {
        try {
            return Long.toString(p.getLongValue());
        } catch (InputCoercionException e) {
            return "out of range";
        }
    }

    private static Outcome scan(JsonScanner s, byte[] b, Supplier<String> where) {
        Outcome o = new Outcome();
        // Scanned from inside a larger array, so that offsets relative to the range are checked too.
        byte[] padded = new byte[b.length + 7];
        Arrays.fill(padded, (byte) '"');
        System.arraycopy(b, 0, padded, 3, b.length);
        s.reset(padded, 3, b.length);
        try {
            JsonToken t;
            while ((t = s.next()) != null) {
                int at = s.tokenStart();
                int end = s.tokenEnd();
                String value = switch (t) {
                    case FIELD_NAME -> {
                        assertEquals(at, s.nameStart(), where);
                        assertEquals('"', b[end - 1], where);
                        yield s.currentName();
                    }
                    case VALUE_STRING -> {
                        String text = s.text();
                        assertEquals(text.length(), s.textLength(), where);
                        assertTrue(s.textEquals(text), where);
                        assertFalse(s.textEquals(text + "x"), where);
                        assertEquals('"', b[at], where);
                        assertEquals('"', b[end - 1], where);
                        yield text;
                    }
                    case VALUE_NUMBER_INT -> numberText(b, at, end) + " long " + scannerLong(s) + " double "
                            + Double.doubleToLongBits(s.doubleValue());
                    case VALUE_NUMBER_FLOAT -> numberText(b, at, end) + " double "
                            + Double.doubleToLongBits(s.doubleValue());
                    default -> {
                        assertEquals(t.asString(), new String(b, at, end - at, StandardCharsets.ISO_8859_1), where);
                        yield "";
                    }
                };
                o.tokens.add(t + "@" + at + " " + value);
            }
            assertTrue(s.atEnd(), where);
            o.ok = true;
        } catch (JsonScanException e) {
            o.error = e.getMessage();
        }
        return o;
    }

    private static String numberText(byte[] b, int from, int to) {
        return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
    }

    private static String scannerLong(JsonScanner s) {
        try {
            return Long.toString(s.longValue());
        } catch (JsonScanException e) {
            return "out of range";
        }
    }

    static boolean wellFormedUtf8(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------- inputs

    /** Bytes likely to matter to a JSON reader, for insertions. */
    private static final byte[] INTERESTING = "{}[],:\"\\ \t\n\r0123456789-+.eEtfnulra/".getBytes(StandardCharsets.US_ASCII);

    static byte[] mutate(byte[] doc, Random r) {
        if (doc.length == 0) {
            return new byte[] {(byte) r.nextInt(256)};
        }
        int at = r.nextInt(doc.length);
        switch (r.nextInt(5)) {
            case 0 -> { // delete a byte
                byte[] out = new byte[doc.length - 1];
                System.arraycopy(doc, 0, out, 0, at);
                System.arraycopy(doc, at + 1, out, at, doc.length - at - 1);
                return out;
            }
            case 1 -> { // insert a byte
                byte[] out = new byte[doc.length + 1];
                System.arraycopy(doc, 0, out, 0, at);
                out[at] = r.nextBoolean() ? INTERESTING[r.nextInt(INTERESTING.length)] : (byte) r.nextInt(256);
                System.arraycopy(doc, at, out, at + 1, doc.length - at);
                return out;
            }
            case 2 -> { // flip a bit
                byte[] out = doc.clone();
                out[at] ^= (byte) (1 << r.nextInt(8));
                return out;
            }
            case 3 -> { // truncate
                return Arrays.copyOf(doc, at);
            }
            default -> { // overwrite a byte
                byte[] out = doc.clone();
                out[at] = (byte) r.nextInt(256);
                return out;
            }
        }
    }

    static String show(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length + 16).append('<');
        for (byte x : b) {
            int c = x & 0xFF;
            if (c >= 0x20 && c < 0x7F && c != '\\') {
                sb.append((char) c);
            } else {
                sb.append(String.format("\\x%02X", c));
            }
        }
        return sb.append('>').toString();
    }

    /** Random JSON documents: all value kinds, escapes, multi-byte characters, numbers of every shape, blanks. */
    static final class DocumentGenerator {
        private static final String[] NAMES = {"model", "messages", "role", "content", "a", "b", "stream", "x_y",
            "n\u00e4me", "\u540d\u524d", "", "\\u006dodel", "mo\\\"del"};
        private final Random r;
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        DocumentGenerator(Random r) {
            this.r = r;
        }

        byte[] document() {
            if (r.nextInt(30) == 0) {
                out.write(0xEF);
                out.write(0xBB);
                out.write(0xBF);
            }
            blanks();
            if (r.nextInt(10) == 0) {
                deep(120 + r.nextInt(21));
            } else if (r.nextInt(8) == 0) {
                scalar();
            } else {
                container(0);
            }
            blanks();
            return out.toByteArray();
        }

        private void deep(int levels) {
            boolean[] objects = new boolean[levels];
            for (int k = 0; k < levels; k++) {
                objects[k] = r.nextBoolean();
                write(objects[k] ? "{" : "[");
                blanks();
                if (objects[k]) {
                    name();
                    blanks();
                    write(":");
                    blanks();
                }
            }
            scalar();
            for (int k = levels - 1; k >= 0; k--) {
                blanks();
                write(objects[k] ? "}" : "]");
            }
        }

        private void value(int depth) {
            int containerOdds = depth < 3 ? 40 : depth < 6 ? 15 : 0;
            if (r.nextInt(100) < containerOdds) {
                container(depth);
            } else {
                scalar();
            }
        }

        private void container(int depth) {
            boolean object = r.nextBoolean();
            write(object ? "{" : "[");
            int n = r.nextInt(6);
            for (int k = 0; k < n; k++) {
                blanks();
                if (k > 0) {
                    write(",");
                    blanks();
                }
                if (object) {
                    name();
                    blanks();
                    write(":");
                    blanks();
                }
                value(depth + 1);
            }
            blanks();
            write(object ? "}" : "]");
        }

        private void name() {
            if (r.nextBoolean()) {
                write("\"" + NAMES[r.nextInt(NAMES.length)] + "\"");
            } else {
                string();
            }
        }

        private void scalar() {
            switch (r.nextInt(6)) {
                case 0, 1 -> string();
                case 2, 3 -> number();
                case 4 -> write(r.nextBoolean() ? "true" : "false");
                default -> write("null");
            }
        }

        private void string() {
            write("\"");
            int n = r.nextInt(5) == 0 ? r.nextInt(80) : r.nextInt(10);
            for (int k = 0; k < n; k++) {
                int kind = r.nextInt(20);
                if (kind < 12) {
                    char c;
                    do {
                        c = (char) (0x20 + r.nextInt(0x60));
                    } while (c == '"' || c == '\\');
                    out.write(c);
                } else if (kind < 16) {
                    escape();
                } else {
                    int cp = switch (r.nextInt(3)) {
                        case 0 -> 0x80 + r.nextInt(0x800 - 0x80);
                        case 1 -> {
                            int c;
                            do {
                                c = 0x800 + r.nextInt(0x10000 - 0x800);
                            } while (c >= 0xD800 && c <= 0xDFFF);
                            yield c;
                        }
                        default -> 0x10000 + r.nextInt(0x110000 - 0x10000);
                    };
                    write(new String(Character.toChars(cp)));
                }
            }
            write("\"");
        }

        private void escape() {
            switch (r.nextInt(12)) {
                case 0 -> write("\\\"");
                case 1 -> write("\\\\");
                case 2 -> write("\\/");
                case 3 -> write("\\b");
                case 4 -> write("\\f");
                case 5 -> write("\\n");
                case 6 -> write("\\r");
                case 7 -> write("\\t");
                case 8 -> write("\\ud83d\\ude00"); // a surrogate pair
                case 9 -> write(String.format("\\u%04x", 0xD800 + r.nextInt(0x800))); // a lone surrogate
                case 10 -> write(String.format("\\u%04X", r.nextInt(0x10000)));
                default -> write(String.format("\\u%04x", r.nextInt(0x80)));
            }
        }

        private void number() {
            StringBuilder sb = new StringBuilder();
            if (r.nextInt(3) == 0) {
                sb.append('-');
            }
            int intDigits = r.nextInt(10) == 0 ? 1 + r.nextInt(70) : 1 + r.nextInt(20);
            if (r.nextInt(5) == 0) {
                sb.append('0');
            } else {
                sb.append((char) ('1' + r.nextInt(9)));
                digits(sb, intDigits - 1);
            }
            if (r.nextInt(3) == 0) {
                sb.append('.');
                digits(sb, r.nextInt(10) == 0 ? 1 + r.nextInt(40) : 1 + r.nextInt(8));
            }
            if (r.nextInt(4) == 0) {
                sb.append(r.nextBoolean() ? 'e' : 'E');
                int sign = r.nextInt(3);
                if (sign > 0) {
                    sb.append(sign == 1 ? '+' : '-');
                }
                digits(sb, r.nextInt(10) == 0 ? 1 + r.nextInt(30) : 1 + r.nextInt(3));
            }
            write(sb.toString());
        }

        private void digits(StringBuilder sb, int n) {
            for (int k = 0; k < n; k++) {
                sb.append((char) ('0' + r.nextInt(10)));
            }
        }

        private void blanks() {
            if (r.nextInt(10) < 7) {
                return;
            }
            int n = 1 + r.nextInt(3);
            for (int k = 0; k < n; k++) {
                out.write(" \t\n\r".charAt(r.nextInt(4)));
            }
        }

        private void write(String s) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        }
    }
}
