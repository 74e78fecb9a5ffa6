package io.modelgateway.codecs.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestPeek} on its own scanner against {@link JacksonRequestPeek}, the previous implementation on a Jackson
 * parser: on seeded random request bodies (valid bodies of every API with random optional fields, wrong types,
 * nulls, duplicated names, unknown members holding random JSON) and byte-level mutations of them, every endpoint's
 * peek must give the same results: the same offsets, values and edit when both accept, the same error param and
 * code when both refuse. Messages may differ only for a body that is not JSON at all (the syntax error is worded by
 * each reader). A body that is not well-formed UTF-8 (or that Jackson would read as UTF-16 or UTF-32) must be
 * refused by the new peek; there the old one may have read on.
 *
 * <p>Run with {@code -Drequestpeek.seed=N} to replay a reported seed.
 */
class RequestPeekRegressionTest {
    private static final int BODIES = 10_000;

    @Test
    void peek_sameResultsAsTheJacksonPeek_onRandomBodiesAndMutations() {
        long seed = Long.getLong("requestpeek.seed", 0xB0D1E5L);
        int compared = 0;
        int bothOk = 0;
        for (int i = 0; i < BODIES; i++) {
            long bodySeed = seed + i;
            Random r = new Random(bodySeed);
            byte[] body = new BodyGenerator(r).body();
            for (int m = 0; m < 2; m++) {
                byte[] input = m == 0 ? body : JsonScannerDifferentialTest.mutate(body, r);
                boolean systemRoleAllowed = r.nextBoolean();
                int form = r.nextInt(3);
                for (Endpoint endpoint : Endpoint.values()) {
                    int mutation = m;
                    Supplier<String> where = () -> endpoint + ", seed " + bodySeed + " (base seed " + seed
                            + "), mutation " + mutation + ", system role " + systemRoleAllowed + ", buffer form "
                            + form + ", body " + JsonScannerDifferentialTest.show(input);
                    ByteBuf a = buffer(input, form);
                    ByteBuf b = buffer(input, form);
                    try {
                        JacksonRequestPeek old = JacksonRequestPeek.peek(endpoint, a, systemRoleAllowed);
                        RequestPeek now = RequestPeek.peek(endpoint, b, systemRoleAllowed);
                        if (compare(old, now, input, where)) {
                            bothOk++;
                        }
                        compared++;
                    } finally {
                        a.release();
                        b.release();
                    }
                }
            }
        }
        System.out.println("RequestPeekRegressionTest: base seed " + seed + ": " + compared + " peeks compared, "
                + bothOk + " accepted by both");
        // Most bodies are refused by most endpoints (each API has its own required fields), but enough must pass.
        assertTrue(bothOk > compared / 40 && bothOk < compared * 9 / 10, "accepted " + bothOk + " of " + compared);
    }

    /**
     * The body as a heap buffer read in place, a heap buffer at an offset into a larger array, or a direct one (a
     * wrapped NIO buffer: the leak detector, paranoid in tests, would record every byte the old peek reads of a
     * tracked one and make this test slow).
     */
    private static ByteBuf buffer(byte[] body, int form) {
        return switch (form) {
            case 0 -> Unpooled.wrappedBuffer(body);
            case 1 -> {
                byte[] padded = new byte[body.length + 11];
                System.arraycopy(body, 0, padded, 7, body.length);
                yield Unpooled.wrappedBuffer(padded).slice(7, body.length);
            }
            default -> {
                ByteBuffer direct = ByteBuffer.allocateDirect(body.length + 1).put(body).flip();
                yield Unpooled.wrappedBuffer(direct);
            }
        };
    }

    /** Asserts the two peeks agree; true when both accepted the body. */
    private static boolean compare(JacksonRequestPeek old, RequestPeek now, byte[] input, Supplier<String> where) {
        GatewayError was = old.error();
        GatewayError is = now.error();
        if (!JsonScannerDifferentialTest.wellFormedUtf8(input) || (input.length >= 2 && (input[0] == 0 || input[1] == 0))) {
            assertNotNull(is, () -> "must refuse a body that is not UTF-8: " + where.get());
            if (!"invalid_json".equals(is.code())) {
                assertNotNull(was, where);
                assertEquals(was.param(), is.param(), where);
                assertEquals(was.code(), is.code(), where);
            }
            return false;
        }
        assertEquals(was == null, is == null, () -> "old error " + was + ", new error " + is + "; " + where.get());
        if (was != null) {
            assertEquals(was.kind(), is.kind(), where);
            assertEquals(was.param(), is.param(), () -> was + " / " + is + "; " + where.get());
            assertEquals(was.code(), is.code(), () -> was + " / " + is + "; " + where.get());
            if (!syntaxMessage(was) || !syntaxMessage(is)) {
                assertEquals(was.message(), is.message(), where);
            }
            return false;
        }
        assertEquals(old.model(), now.model(), where);
        assertEquals(old.modelStart(), now.modelStart(), where);
        assertEquals(old.modelEnd(), now.modelEnd(), where);
        assertEquals(old.modelMemberStart(), now.modelMemberStart(), where);
        assertEquals(old.stream(), now.stream(), where);
        assertEquals(old.streamMemberStart(), now.streamMemberStart(), where);
        assertEquals(old.streamMemberEnd(), now.streamMemberEnd(), where);
        assertEquals(old.bodyInner(), now.bodyInner(), where);
        assertEquals(old.maxTokens(), now.maxTokens(), where);
        assertEquals(old.n(), now.n(), where);
        assertEquals(old.encodingFormat(), now.encodingFormat(), where);
        assertEquals(old.encodingFormatStart(), now.encodingFormatStart(), where);
        assertEquals(old.encodingFormatEnd(), now.encodingFormatEnd(), where);
        assertEquals(old.dimensions(), now.dimensions(), where);
        assertEquals(old.hasTemperature(), now.hasTemperature(), where);
        assertEquals(old.temperatureMemberStart(), now.temperatureMemberStart(), where);
        assertEquals(old.temperatureMemberEnd(), now.temperatureMemberEnd(), where);
        assertEquals(old.previousResponseId(), now.previousResponseId(), where);
        BodySplicer.Edit e1 = old.includeUsageEdit();
        BodySplicer.Edit e2 = now.includeUsageEdit();
        assertEquals(e1 == null, e2 == null, where);
        if (e1 != null) {
            assertEquals(e1.start(), e2.start(), where);
            assertEquals(e1.end(), e2.end(), where);
            assertArrayEquals(e1.bytes(), e2.bytes(), where);
        }
        return true;
    }

    /** A refusal of a body that is not JSON: each reader words its own syntax errors. */
    private static boolean syntaxMessage(GatewayError e) {
        return "invalid_json".equals(e.code()) && e.param() == null
                && (e.message().startsWith("We could not parse the JSON body")
                        || e.message().equals("Unexpected data after the JSON object."));
    }

    /** Random request bodies for all endpoints, mostly valid, with the mistakes a caller makes. */
    static final class BodyGenerator {
        private static final String[] MODELS = {"sim-chat", "gpt-4o", "claude-x", "", "a\\\"b", "m\\u00e9", "\u6a21\u578b"};
        private static final String[] ROLES = {"user", "assistant", "system", "developer", "tool", "function", "bot",
            "", "us\\u0065r", "USER", "assistant "};
        private final Random r;
        private final StringBuilder sb = new StringBuilder();

        BodyGenerator(Random r) {
            this.r = r;
        }

        byte[] body() {
            List<String> members = new ArrayList<>();
            int style = r.nextInt(4); // chat, messages, embeddings, responses
            if (r.nextInt(20) != 0) {
                members.add(member("model", r.nextInt(15) == 0 ? wrong() : string(MODELS[r.nextInt(MODELS.length)])));
            }
            switch (style) {
                case 0 -> {
                    maybe(members, "messages", this::messages, 20);
                    maybe(members, "stream", this::bool, 2);
                    maybe(members, "stream_options", this::streamOptions, 3);
                    maybe(members, "max_tokens", this::count, 4);
                    maybe(members, "max_completion_tokens", this::count, 6);
                    maybe(members, "n", this::count, 6);
                    maybe(members, "temperature", () -> number(0, 2), 3);
                    maybe(members, "top_p", () -> number(0, 1), 5);
                    maybe(members, "presence_penalty", () -> number(-2, 2), 6);
                    maybe(members, "frequency_penalty", () -> number(-2, 2), 6);
                    maybe(members, "stop", this::stop, 5);
                }
                case 1 -> {
                    maybe(members, "messages", this::messages, 20);
                    maybe(members, "max_tokens", this::count, 10);
                    maybe(members, "stream", this::bool, 3);
                    maybe(members, "temperature", () -> number(0, 1), 3);
                    maybe(members, "top_p", () -> number(0, 1), 5);
                    maybe(members, "thinking", this::thinking, 4);
                    maybe(members, "stop_sequences", this::stopSequences, 5);
                    maybe(members, "system", () -> string("be brief"), 4);
                }
                case 2 -> {
                    maybe(members, "input", this::embeddingInput, 20);
                    maybe(members, "encoding_format", this::encodingFormat, 3);
                    maybe(members, "dimensions", this::count, 4);
                    maybe(members, "user", () -> string("u-1"), 5);
                }
                default -> {
                    maybe(members, "input", this::responsesInput, 10);
                    maybe(members, "stream", this::bool, 3);
                    maybe(members, "max_output_tokens", this::count, 4);
                    maybe(members, "previous_response_id", this::previousResponseId, 4);
                    maybe(members, "instructions", () -> r.nextInt(10) == 0 ? wrong() : string("be brief"), 4);
                    maybe(members, "temperature", () -> number(0, 2), 4);
                    maybe(members, "top_p", () -> number(0, 1), 5);
                    maybe(members, "reasoning", () -> names("effort", "summary"), 5);
                    maybe(members, "text", () -> names("format", "verbosity"), 5);
                    maybe(members, "tools", () -> r.nextInt(8) == 0 ? wrong() : "[" + randomJson() + "]", 5);
                }
            }
            for (int k = r.nextInt(3); k > 0; k--) {
                members.add(member("x_extra" + k, randomJson()));
            }
            if (r.nextInt(15) == 0 && !members.isEmpty()) {
                members.add(members.get(r.nextInt(members.size()))); // a duplicated member
            }
            Collections.shuffle(members, r);
            sb.setLength(0);
            sb.append(blank()).append('{');
            for (int k = 0; k < members.size(); k++) {
                sb.append(k == 0 ? "" : ",").append(blank()).append(members.get(k)).append(blank());
            }
            sb.append('}').append(blank());
            return sb.toString().getBytes(StandardCharsets.UTF_8);
        }

        private void maybe(List<String> members, String name, Supplier<String> value, int absentOneIn) {
            if (r.nextInt(absentOneIn) == 0 && absentOneIn > 0) {
                if (r.nextInt(3) == 0) {
                    members.add(member(name, "null"));
                }
                return;
            }
            members.add(member(name, value.get()));
        }

        private String member(String name, String value) {
            String written = r.nextInt(40) == 0 ? escapeFirst(name) : name;
            return "\"" + written + "\"" + blank() + ":" + blank() + value;
        }

        /** The name with its first character written as a unicode escape. */
        private static String escapeFirst(String name) {
            return String.format("\\u%04x", (int) name.charAt(0)) + name.substring(1);
        }

        private String blank() {
            return r.nextInt(4) == 0 ? new String[] {" ", "\n", "\t", " \r\n "}[r.nextInt(4)] : "";
        }

        private static String string(String raw) {
            return "\"" + raw + "\"";
        }

        /** A value of a type no field takes, or of a type the field does not take. */
        private String wrong() {
            return switch (r.nextInt(7)) {
                case 0 -> "1";
                case 1 -> "2.5";
                case 2 -> "true";
                case 3 -> "{\"a\":1}";
                case 4 -> "[1,\"x\"]";
                case 5 -> "\"text\"";
                default -> "null";
            };
        }

        private String bool() {
            return r.nextInt(8) == 0 ? wrong() : r.nextBoolean() ? "true" : "false";
        }

        private String count() {
            return switch (r.nextInt(12)) {
                case 0 -> "0";
                case 1 -> "-3";
                case 2 -> "1099511627776";
                case 3 -> "123456789012345678901234"; // out of the range of a long
                case 4 -> "5.0";
                case 5 -> wrong();
                default -> Integer.toString(1 + r.nextInt(5000));
            };
        }

        private String number(double min, double max) {
            return switch (r.nextInt(10)) {
                case 0 -> wrong();
                case 1 -> Double.toString(max + 0.5);
                case 2 -> "-1e-3";
                case 3 -> Long.toString((long) max);
                case 4 -> "1E0";
                case 5 -> "0." + "0".repeat(r.nextInt(30)) + "1";
                default -> String.format(java.util.Locale.ROOT, "%.3f", min + r.nextDouble() * (max - min));
            };
        }

        private String messages() {
            if (r.nextInt(15) == 0) {
                return wrong();
            }
            int n = r.nextInt(12) == 0 ? 0 : 1 + r.nextInt(4);
            StringBuilder m = new StringBuilder("[");
            for (int k = 0; k < n; k++) {
                if (k > 0) {
                    m.append(',');
                }
                if (r.nextInt(40) == 0) {
                    m.append(wrong());
                    continue;
                }
                List<String> fields = new ArrayList<>();
                if (r.nextInt(25) != 0) {
                    String role = r.nextInt(25) == 0 ? wrong() : string(ROLES[r.nextInt(ROLES.length)]);
                    fields.add(member("role", role));
                }
                fields.add(member("content", r.nextInt(4) == 0
                        ? "[{\"type\":\"text\",\"text\":" + text() + "}]" : text()));
                if (r.nextInt(8) == 0) {
                    fields.add(member("name", string("bob")));
                }
                if (r.nextInt(30) == 0) {
                    fields.add(fields.get(0));
                }
                Collections.shuffle(fields, r);
                m.append('{').append(String.join(",", fields)).append('}');
            }
            return m.append(']').toString();
        }

        private String text() {
            return switch (r.nextInt(5)) {
                case 0 -> string("h\\u00e9llo \\\"there\\\"\\n");
                case 1 -> string("caf\u00e9 \ud83d\ude00 \u6f22\u5b57");
                case 2 -> string("");
                default -> string("Write a short note about load testing a proxy.");
            };
        }

        private String streamOptions() {
            if (r.nextInt(10) == 0) {
                return wrong();
            }
            List<String> fields = new ArrayList<>();
            if (r.nextInt(4) != 0) {
                fields.add(member("include_usage", switch (r.nextInt(5)) {
                    case 0 -> "true";
                    case 1 -> "false";
                    case 2 -> "null";
                    case 3 -> wrong();
                    default -> "false";
                }));
            }
            if (r.nextInt(3) == 0) {
                fields.add(member("other", randomJson()));
            }
            if (r.nextInt(20) == 0 && !fields.isEmpty()) {
                fields.add(fields.get(0));
            }
            Collections.shuffle(fields, r);
            return "{" + blank() + String.join("," + blank(), fields) + blank() + "}";
        }

        private String stop() {
            if (r.nextInt(4) == 0) {
                return r.nextBoolean() ? string("END") : wrong();
            }
            return array(r.nextInt(7), () -> r.nextInt(15) == 0 ? wrong() : string("s" + r.nextInt(9)));
        }

        private String stopSequences() {
            if (r.nextInt(10) == 0) {
                return wrong();
            }
            return array(r.nextInt(4), () -> r.nextInt(12) == 0 ? string(r.nextBoolean() ? " \\t" : "")
                    : r.nextInt(15) == 0 ? wrong() : string("STOP"));
        }

        private String thinking() {
            if (r.nextInt(10) == 0) {
                return wrong();
            }
            List<String> fields = new ArrayList<>();
            if (r.nextInt(8) != 0) {
                fields.add(member("type", r.nextInt(10) == 0 ? wrong()
                        : string(new String[] {"enabled", "adaptive", "disabled", "on"}[r.nextInt(4)])));
            }
            if (r.nextInt(3) != 0) {
                fields.add(member("budget_tokens", r.nextInt(6) == 0 ? count()
                        : Integer.toString(512 + r.nextInt(4000))));
            }
            if (r.nextInt(20) == 0 && !fields.isEmpty()) {
                fields.add(fields.get(0));
            }
            Collections.shuffle(fields, r);
            return "{" + String.join(",", fields) + "}";
        }

        private String embeddingInput() {
            return switch (r.nextInt(9)) {
                case 0 -> wrong();
                case 1 -> string("");
                case 2 -> array(r.nextInt(4), () -> string(r.nextInt(8) == 0 ? "" : "text"));
                case 3 -> array(r.nextInt(4), () -> Integer.toString(r.nextInt(100000)));
                case 4 -> array(r.nextInt(3), () -> array(r.nextInt(3), () -> r.nextInt(15) == 0 ? "\"x\""
                        : Integer.toString(r.nextInt(1000))));
                case 5 -> array(3, () -> r.nextBoolean() ? "\"a\"" : "7");
                case 6 -> r.nextInt(20) == 0 ? array(2049, () -> "1") : array(2, () -> "true");
                default -> text();
            };
        }

        private String encodingFormat() {
            return switch (r.nextInt(6)) {
                case 0 -> wrong();
                case 1 -> string("hex");
                case 2 -> string("b\\u0061se64");
                case 3 -> string("base64");
                default -> string("float");
            };
        }

        private String responsesInput() {
            if (r.nextInt(3) == 0) {
                return r.nextInt(6) == 0 ? wrong() : text();
            }
            return array(r.nextInt(4), () -> {
                if (r.nextInt(20) == 0) {
                    return wrong();
                }
                List<String> fields = new ArrayList<>();
                fields.add(member("role", string(ROLES[r.nextInt(ROLES.length)])));
                fields.add(member("content", r.nextBoolean() ? text() : "[" + randomJson() + "]"));
                if (r.nextInt(15) == 0) {
                    fields.add(fields.get(0));
                }
                return "{" + String.join(",", fields) + "}";
            });
        }

        private String previousResponseId() {
            return switch (r.nextInt(5)) {
                case 0 -> wrong();
                case 1 -> string("");
                default -> string("resp_" + r.nextInt(1000));
            };
        }

        private String names(String a, String b) {
            if (r.nextInt(8) == 0) {
                return wrong();
            }
            List<String> fields = new ArrayList<>();
            fields.add(member(a, randomJson()));
            if (r.nextBoolean()) {
                fields.add(member(b, randomJson()));
            }
            if (r.nextInt(10) == 0) {
                fields.add(fields.get(0));
            }
            return "{" + String.join(",", fields) + "}";
        }

        private String array(int n, Supplier<String> element) {
            StringBuilder a = new StringBuilder("[");
            for (int k = 0; k < n; k++) {
                a.append(k == 0 ? "" : ",").append(blank()).append(element.get());
            }
            return a.append(']').toString();
        }

        /** Random JSON of any kind, as the scanner's differential test makes it. */
        private String randomJson() {
            return new String(new JsonScannerDifferentialTest.DocumentGenerator(new Random(r.nextLong())).document(),
                    StandardCharsets.UTF_8).replace("\uFEFF", "");
        }
    }
}
