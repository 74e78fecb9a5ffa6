package io.modelgateway.codecs.json;

import static com.fasterxml.jackson.core.JsonToken.END_ARRAY;
import static com.fasterxml.jackson.core.JsonToken.END_OBJECT;
import static com.fasterxml.jackson.core.JsonToken.FIELD_NAME;
import static com.fasterxml.jackson.core.JsonToken.START_ARRAY;
import static com.fasterxml.jackson.core.JsonToken.START_OBJECT;
import static com.fasterxml.jackson.core.JsonToken.VALUE_FALSE;
import static com.fasterxml.jackson.core.JsonToken.VALUE_NULL;
import static com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_FLOAT;
import static com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_INT;
import static com.fasterxml.jackson.core.JsonToken.VALUE_STRING;
import static com.fasterxml.jackson.core.JsonToken.VALUE_TRUE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonScannerTest {
    private final JsonScanner s = new JsonScanner(RequestPeek.MAX_DEPTH, 64);

    @Test
    void tokens_ofEveryKind() throws Exception {
        assertThat(tokens("{\"a\":[1,-2.5e3,true,false,null,\"x\",{},[]]}")).containsExactly(START_OBJECT, FIELD_NAME,
                START_ARRAY, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT, VALUE_TRUE, VALUE_FALSE, VALUE_NULL, VALUE_STRING,
                START_OBJECT, END_OBJECT, START_ARRAY, END_ARRAY, END_ARRAY, END_OBJECT);
        assertThat(tokens(" \t\r\n")).isEmpty();
        assertThat(tokens("")).isEmpty();
        assertThat(tokens(" \"root\" ")).containsExactly(VALUE_STRING);
        assertThat(tokens("7")).containsExactly(VALUE_NUMBER_INT);
        assertThat(tokens("null\n")).containsExactly(VALUE_NULL);
    }

    @Test
    void offsets_ofTokensAndMemberNames_withBlanksAroundColons() throws Exception {
        String json = "{ \"ab\" :\t\"cd\" ,\n\"n\"\r\n: 12 , \"t\":true,\"o\" : {} }";
        reset(json);
        assertToken(START_OBJECT, json.indexOf('{'), json.indexOf('{') + 1);
        assertToken(FIELD_NAME, 2, 6);
        assertThat(s.nameStart()).isEqualTo(2);
        assertThat(s.currentName()).isEqualTo("ab");
        assertToken(VALUE_STRING, json.indexOf("\"cd\""), json.indexOf("\"cd\"") + 4);
        assertThat(s.nameStart()).as("the member's name, while its value is read").isEqualTo(2);
        assertToken(FIELD_NAME, json.indexOf("\"n\""), json.indexOf("\"n\"") + 3);
        assertToken(VALUE_NUMBER_INT, json.indexOf("12"), json.indexOf("12") + 2);
        assertThat(s.nameStart()).isEqualTo(json.indexOf("\"n\""));
        assertToken(FIELD_NAME, json.indexOf("\"t\""), json.indexOf("\"t\"") + 3);
        assertToken(VALUE_TRUE, json.indexOf("true"), json.indexOf("true") + 4);
        assertToken(FIELD_NAME, json.indexOf("\"o\""), json.indexOf("\"o\"") + 3);
        assertToken(START_OBJECT, json.indexOf("{}"), json.indexOf("{}") + 1);
        assertToken(END_OBJECT, json.indexOf("{}") + 1, json.indexOf("{}") + 2);
        assertToken(END_OBJECT, json.length() - 1, json.length());
        assertThat(s.next()).isNull();
        assertThat(s.atEnd()).isTrue();
    }

    @Test
    void offsets_areFromTheStartOfTheRange() throws Exception {
        byte[] bytes = "xx{\"k\":\"v\"}yy".getBytes(StandardCharsets.UTF_8);
        s.reset(bytes, 2, bytes.length - 4);
        assertToken(START_OBJECT, 0, 1);
        assertToken(FIELD_NAME, 1, 4);
        assertToken(VALUE_STRING, 5, 8);
        assertToken(END_OBJECT, 8, 9);
        assertThat(s.next()).isNull();
    }

    @Test
    void escapes_decode_includingSurrogatePairsAndLoneSurrogates() throws Exception {
        assertThat(text("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041\\u00e9\\u20AC\"")).isEqualTo("\" \\ / \b \f \n \r \t A\u00e9\u20ac");
        assertThat(text("\"\\ud83d\\ude00\"")).isEqualTo("\ud83d\ude00");
        assertThat(s.textLength()).isEqualTo(2);
        assertThat(text("\"\\ud83d\"")).as("a lone surrogate escape in a value is accepted").isEqualTo("\ud83d");
        assertThat(text("\"\\ude00x\"")).isEqualTo("\ude00x");
        assertThat(text("\"caf\u00e9 \ud83d\ude00 \u6f22\"")).isEqualTo("caf\u00e9 \ud83d\ude00 \u6f22");
        assertThat(s.textLength()).isEqualTo(9);
        assertThat(text("\"\"")).isEmpty();
        assertThat(text("\"\u007f\"")).as("DEL is not a control character in JSON").isEqualTo("\u007f");
    }

    @Test
    void names_withEscapes_decode_andALoneSurrogateInANameIsRefused() throws Exception {
        reset("{\"mo\\u0064el\":1,\"\\ud83d\\ude00\":2}");
        s.next();
        s.next();
        assertThat(s.currentName()).isEqualTo("model");
        s.next();
        s.next();
        assertThat(s.currentName()).isEqualTo("\ud83d\ude00");
        refused("{\"\\ud83d\":1}", 2);
        refused("{\"\\ude00\":1}", 2);
        refused("{\"\\ud83dx\":1}", 2);
    }

    @Test
    void textEquals_andTextLength_withoutDecoding() throws Exception {
        text("\"user\"");
        assertThat(s.textEquals("user")).isTrue();
        assertThat(s.textEquals("users")).isFalse();
        assertThat(s.textEquals("usex")).isFalse();
        text("\"us\\u0065r\"");
        assertThat(s.textLength()).isEqualTo(4);
        assertThat(s.textEquals("user")).isTrue();
        assertThat(s.textEquals("uses")).isFalse();
        text("\"\u00fcser\"");
        assertThat(s.textEquals("user")).isFalse();
        assertThat(s.textEquals("\u00fcser")).isTrue();
    }

    @Test
    void names_repeated_comeFromTheCache_sameInstance() throws Exception {
        reset("[{\"model\":1,\"role\":2},{\"model\":3,\"role\":4}]");
        List<String> names = new ArrayList<>();
        JsonToken t;
        while ((t = s.next()) != null) {
            if (t == FIELD_NAME) {
                names.add(s.currentName());
            }
        }
        assertThat(names).containsExactly("model", "role", "model", "role");
        assertThat(names.get(2)).isSameAs(names.get(0));
        assertThat(names.get(3)).isSameAs(names.get(1));
        // And on the next body the scanner reads.
        reset("{\"role\":0}");
        s.next();
        s.next();
        assertThat(s.currentName()).isSameAs(names.get(1));
        // Escaped names are decoded each time.
        reset("[{\"r\\u006fle\":0},{\"r\\u006fle\":0}]");
        s.next();
        s.next();
        s.next();
        String first = s.currentName();
        s.next();
        s.next();
        s.next();
        s.next();
        assertThat(s.currentName()).isEqualTo(first).isNotSameAs(first);
    }

    @Test
    void cachedText_decodesAsText_andRepeatsTheSameInstance() throws Exception {
        String long40 = "m".repeat(40);
        reset("[\"gpt-4o\",\"gpt-4o\",\"caf\u00e9\",\"caf\u00e9\",\"a\\u0062\",\"a\\u0062\",\"" + long40 + "\",\""
                + long40 + "\",\"\"]");
        s.next();
        List<String> cached = new ArrayList<>();
        while (s.next() == VALUE_STRING) {
            cached.add(s.cachedText());
        }
        assertThat(cached).containsExactly("gpt-4o", "gpt-4o", "caf\u00e9", "caf\u00e9", "ab", "ab", long40, long40, "");
        assertThat(cached.get(1)).isSameAs(cached.get(0)); // short, unescaped: from the cache
        assertThat(cached.get(3)).isSameAs(cached.get(2)); // non-ASCII UTF-8 without escapes too
        assertThat(cached.get(5)).isNotSameAs(cached.get(4)); // escaped: decoded each time
        assertThat(cached.get(7)).isNotSameAs(cached.get(6)); // longer than a cached name: decoded each time
        // A name and a value spelled alike share the entry; the next body finds it still there.
        reset("{\"gpt-4o\":\"x\"}");
        s.next();
        s.next();
        assertThat(s.currentName()).isSameAs(cached.get(0));
    }

    @Test
    void numbers_values() throws Exception {
        assertThat(number("0").longValue()).isZero();
        assertThat(number("-0").longValue()).isZero();
        assertThat(number("9223372036854775807").longValue()).isEqualTo(Long.MAX_VALUE);
        assertThat(number("-9223372036854775808").longValue()).isEqualTo(Long.MIN_VALUE);
        assertThatThrownBy(() -> number("9223372036854775808").longValue()).isInstanceOf(JsonScanException.class)
                .matches(e -> !((JsonScanException) e).isLimit());
        assertThatThrownBy(() -> number("-9223372036854775809").longValue()).isInstanceOf(JsonScanException.class);
        assertThatThrownBy(() -> number("123456789012345678901234567890").longValue())
                .isInstanceOf(JsonScanException.class);
        assertThat(number("0.7").doubleValue()).isEqualTo(0.7);
        assertThat(number("-1.5E+2").doubleValue()).isEqualTo(-150.0);
        assertThat(number("1e-3").doubleValue()).isEqualTo(0.001);
        assertThat(number("2.2250738585072014E-308").doubleValue()).isEqualTo(Double.MIN_NORMAL);
        assertThat(number("0.30000000000000001").doubleValue()).isEqualTo(0.3);
        assertThat(number("1" + "0".repeat(40)).doubleValue()).isEqualTo(1e40);
        assertThat(number("1e99999").doubleValue()).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(number("-0.0").doubleValue()).isEqualTo(-0.0);
        assertThat(s.token()).isEqualTo(VALUE_NUMBER_FLOAT);
    }

    @Test
    void numbers_ofBadShape_areRefused() {
        refused("[01]", 1);
        refused("[-01]", 2);
        refused("[00]", 1);
        refused("[+1]", 1);
        refused("[.5]", 1);
        refused("[1.]", 3);
        refused("[1.e5]", 3);
        refused("[1e]", 3);
        refused("[1e+]", 4);
        refused("[-]", 2);
        refused("[-a]", 2);
        refused("[NaN]", 1);
        refused("[Infinity]", 1);
        refused("[-Infinity]", 2);
        refused("[0x10]", 2); // 0 is a number; the x is where a comma belongs
        refused("1x", 1); // at the root a number must be followed by a blank
    }

    @Test
    void numberLength_64DigitsAccepted_65Refused_asALimit() throws Exception {
        assertThat(tokens("[" + "1".repeat(64) + "]")).hasSize(3);
        assertThat(tokens("[-" + "1".repeat(64) + "]")).as("the sign is not a digit").hasSize(3);
        assertThat(tokens("[" + "1".repeat(32) + "." + "1".repeat(32) + "]")).hasSize(3);
        assertThat(limit("[" + "1".repeat(65) + "]")).isTrue();
        assertThat(limit("[" + "1".repeat(32) + "." + "1".repeat(33) + "]")).isTrue();
        assertThat(limit("[" + "1".repeat(30) + "." + "1".repeat(30) + "e-12345]")).isTrue();
    }

    @Test
    void depth_128Accepted_129RefusedAsALimit() throws Exception {
        assertThat(tokens("[".repeat(128) + "]".repeat(128))).hasSize(256);
        assertThat(tokens("{\"a\":".repeat(127) + "[]" + "}".repeat(127))).hasSize(127 * 3 + 2);
        assertThat(limit("[".repeat(129) + "]".repeat(129))).isTrue();
        assertThat(limit("{\"a\":".repeat(128) + "[]" + "}".repeat(128))).isTrue();
    }

    @Test
    void grammar_refusals() {
        refused("{\"a\":1,}", 7); // trailing comma
        refused("[1,]", 3);
        refused("[,1]", 1);
        refused("{,}", 1);
        refused("{'a':1}", 1); // single quotes
        refused("['a']", 1);
        refused("{a:1}", 1); // unquoted name
        refused("{\"a\" 1}", 5); // no colon
        refused("{\"a\":}", 5);
        refused("[1 2]", 3);
        refused("[1}", 2);
        refused("{\"a\":1]", 6);
        refused("[/* c */1]", 1); // comments
        refused("[1]// c", 3);
        refused("# c\n[1]", 0);
        refused("[tru]", 1);
        refused("[truex]", 1);
        refused("[nul]", 1);
        refused("[True]", 1);
        refused("[", 1);
        refused("{\"a\"", 4);
        refused("[\"abc", 5);
        refused("{} {}", 3); // a second root value
        refused("[1]]", 3);
        refused("[1,\u000b2]", 3); // only the four blanks of JSON between tokens
        refused("\u00a0[1]", 0);
    }

    @Test
    void strings_rawControlCharacters_andUnknownEscapes_areRefused() {
        refused("[\"a\u0001b\"]", 3);
        refused("[\"a\nb\"]", 3);
        refused("[\"a\tb\"]", 3);
        refused("{\"a\u0000\":1}", 3);
        refused("[\"\\x41\"]", 2);
        refused("[\"\\'\"]", 2);
        refused("[\"\\U0041\"]", 2);
        refused("[\"\\u00g1\"]", 6);
        refused("[\"\\u00\"]", 6);
        refused("[\"\\", 3);
    }

    @Test
    void strings_invalidUtf8_isRefused_alsoInSkippedStrings() {
        refusedBytes(bytes("[\"", 0xC3, "\"]"), 2); // truncated
        refusedBytes(bytes("[\"", 0x80, "\"]"), 2); // a lone continuation byte
        refusedBytes(bytes("[\"", 0xC0, 0xAF, "\"]"), 2); // overlong '/'
        refusedBytes(bytes("[\"", 0xE0, 0x80, 0xAF, "\"]"), 2); // overlong, three bytes
        refusedBytes(bytes("[\"", 0xF0, 0x80, 0x80, 0xAF, "\"]"), 2); // overlong, four bytes
        refusedBytes(bytes("[\"", 0xED, 0xA0, 0x80, "\"]"), 2); // a surrogate in UTF-8
        refusedBytes(bytes("[\"", 0xF4, 0x90, 0x80, 0x80, "\"]"), 2); // past U+10FFFF
        refusedBytes(bytes("[\"", 0xF5, 0x80, 0x80, 0x80, "\"]"), 2);
        refusedBytes(bytes("[\"", 0xFF, "\"]"), 2);
        refusedBytes(bytes("[\"", 0xE2, 0x82), 2); // truncated at the end of input
        refusedBytes(bytes("{\"", 0xC3, "\":1}"), 2); // in a name
        refusedBytes(bytes("[", 0xC3, 0xA9, "]"), 1); // outside a string
        // Only skipped, never read: still refused.
        byte[] skipped = bytes("[\"", 0xED, 0xBF, 0xBF, "\",1]");
        s.reset(skipped, 0, skipped.length);
        assertThatThrownBy(() -> {
            while (s.next() != null) {
                // skip everything
            }
        }).isInstanceOf(JsonScanException.class);
    }

    @Test
    void byteOrderMark_atTheStart_isSkipped_andCounted() throws Exception {
        byte[] b = bytes(0xEF, 0xBB, 0xBF, "{\"a\":1}");
        s.reset(b, 0, b.length);
        assertToken(START_OBJECT, 3, 4);
        assertToken(FIELD_NAME, 4, 7);
        refusedBytes(bytes("[", 0xEF, 0xBB, 0xBF, "1]"), 1);
        refusedBytes(bytes(0xEF, 0xBB, 0xBF), 0); // a mark with nothing after it, as Jackson
    }

    @Test
    void utf16AndUtf32_areRefused() {
        refusedBytes(bytes(0, '{', 0, '}'), 0);
        refusedBytes(bytes('{', 0, '}', 0), 1);
        refusedBytes(bytes(0xFE, 0xFF, 0, '{', 0, '}'), 0);
        refusedBytes(bytes(0, 0, 0, '['), 0);
    }

    @Test
    void error_messages_nameTheOffset_notTheContent() {
        reset("{\"secret\":\"password\" x}");
        assertThatThrownBy(() -> {
            while (s.next() != null) {
                // read on
            }
        }).isInstanceOf(JsonScanException.class).hasMessage("expected ',' or '}' at byte 21")
                .matches(e -> ((JsonScanException) e).offset() == 21);
    }

    @Test
    void reuse_afterAnError_withReset() throws Exception {
        refused("{\"a\":[1,}", 8);
        assertThat(tokens("{\"a\":[1]}")).containsExactly(START_OBJECT, FIELD_NAME, START_ARRAY, VALUE_NUMBER_INT,
                END_ARRAY, END_OBJECT);
        assertThat(limit("[".repeat(200))).isTrue();
        assertThat(tokens("[[]]")).hasSize(4);
    }

    @Test
    void atEnd_onlyAfterTheRootValue_andOnlyBlanksLeft() throws Exception {
        reset("{} x");
        s.next();
        s.next();
        assertThat(s.atEnd()).isFalse();
        reset("{}  \n");
        assertThat(s.atEnd()).as("nothing read yet is not an end").isFalse();
        s.next();
        assertThat(s.atEnd()).isFalse();
        s.next();
        assertThat(s.atEnd()).isTrue();
    }

    @Test
    void tokenEnd_ofAStringNotYetRead_readsIt() throws Exception {
        reset("{\"m\":\"a\\\"b\"}");
        s.next();
        s.next();
        s.next();
        assertThat(s.tokenStart()).isEqualTo(5);
        assertThat(s.tokenEnd()).isEqualTo(11);
        reset("{\"m\":\"a\u0001\"}");
        s.next();
        s.next();
        assertThat(s.next()).as("a string's content is checked when it is read").isEqualTo(VALUE_STRING);
        assertThatThrownBy(s::tokenEnd).isInstanceOf(JsonScanException.class);
    }

    @Test
    void memberValue_badFirstToken_isRefusedWithItsName() {
        // As Jackson does: the name is not returned when its value cannot start.
        reset("{\"stream\": tru}");
        assertThatThrownBy(() -> {
            s.next();
            s.next();
        }).isInstanceOf(JsonScanException.class).hasMessageContaining("at byte 11");
        // A literal followed by a byte that cannot continue it is returned; the next token refuses the byte.
        reset("{\"stream\": true@}");
        assertThatThrownBy(() -> {
            assertThat(s.next()).isEqualTo(START_OBJECT);
            assertThat(s.next()).isEqualTo(FIELD_NAME);
            assertThat(s.next()).isEqualTo(VALUE_TRUE);
            s.next();
        }).isInstanceOf(JsonScanException.class).hasMessageContaining("at byte 15");
    }

    // ---------------------------------------------------------------- helpers

    private void reset(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        s.reset(b, 0, b.length);
    }

    private List<JsonToken> tokens(String json) throws JsonScanException {
        reset(json);
        List<JsonToken> out = new ArrayList<>();
        JsonToken t;
        while ((t = s.next()) != null) {
            out.add(t);
        }
        assertThat(s.atEnd()).isTrue();
        return out;
    }

    private String text(String json) throws JsonScanException {
        reset(json);
        assertThat(s.next()).isEqualTo(VALUE_STRING);
        String text = s.text();
        assertThat(s.textLength()).isEqualTo(text.length());
        return text;
    }

    private JsonScanner number(String json) throws JsonScanException {
        reset(json);
        assertThat(s.next()).isIn(VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT);
        return s;
    }

    private void assertToken(JsonToken t, int start, int end) throws JsonScanException {
        assertThat(s.next()).isEqualTo(t);
        assertThat(s.tokenStart()).as("start of %s", t).isEqualTo(start);
        assertThat(s.tokenEnd()).as("end of %s", t).isEqualTo(end);
    }

    private void refused(String json, int offset) {
        refusedBytes(json.getBytes(StandardCharsets.UTF_8), offset);
    }

    private void refusedBytes(byte[] b, int offset) {
        JsonScanException e = scanAll(b);
        assertThat(e).as("refused: %s", JsonScannerDifferentialTest.show(b)).isNotNull();
        assertThat(e.isLimit()).as(e.getMessage()).isFalse();
        assertThat(e.offset()).as("%s: %s", JsonScannerDifferentialTest.show(b), e.getMessage()).isEqualTo(offset);
    }

    private boolean limit(String json) {
        JsonScanException e = scanAll(json.getBytes(StandardCharsets.UTF_8));
        assertThat(e).isNotNull();
        return e.isLimit();
    }

    /** Reads every token and every string; the refusal, or null. */
    private JsonScanException scanAll(byte[] b) {
        s.reset(b, 0, b.length);
        try {
            JsonToken t;
            while ((t = s.next()) != null) {
                if (t == VALUE_STRING) {
                    s.text();
                }
            }
            return null;
        } catch (JsonScanException e) {
            return e;
        }
    }

    /** Bytes from ints (single bytes) and Strings (their UTF-8). */
    private static byte[] bytes(Object... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Object p : parts) {
            if (p instanceof Integer i) {
                out.write(i);
            } else if (p instanceof Character c) {
                out.write(c);
            } else {
                out.writeBytes(((String) p).getBytes(StandardCharsets.UTF_8));
            }
        }
        return out.toByteArray();
    }
}
