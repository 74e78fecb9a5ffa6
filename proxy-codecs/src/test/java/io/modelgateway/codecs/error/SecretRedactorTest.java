package io.modelgateway.codecs.error;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretRedactorTest {
    private static final String KEY = "provider-secret-Zq81xY";
    private static final SecretRedactor REDACTOR = new SecretRedactor(List.of(KEY, "tok-ABCDEFGH1234"));
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @ValueSource(strings = {"sk-abcdefghij123456", "sk-ant-api03-AbCdEf_123-xyz", "sk-proj-AbCd1234EfGh5678",
        "AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "Bearer abcdefghijkl.mnop", "x-api-key: abcdef123456"})
    void redact_commonKeyShapes_areMasked(String secret) {
        String out = SecretRedactor.PATTERNS_ONLY.redact("before " + secret + " after");
        assertThat(out).startsWith("before ").endsWith(" after").contains(SecretRedactor.MASK)
                .doesNotContain(secret.substring(secret.length() - 6));
    }

    @Test
    void redact_configuredValue_isMaskedWherever_itAppears() {
        assertThat(REDACTOR.redact("key=" + KEY + "," + KEY + "!")).isEqualTo("key=[redacted],[redacted]!");
        assertThat(REDACTOR.redact("your token was tok-ABCDEFGH1234")).doesNotContain("tok-ABCDEFGH1234");
    }

    @Test
    void construction_shortOrBlankValues_areNotSecretsToSearchFor() {
        SecretRedactor r = new SecretRedactor(Arrays.asList("EMPTY", null, "   ", "ollama"));
        assertThat(r.secretCount()).isZero();
        assertThat(r.redact("EMPTY ollama")).isEqualTo("EMPTY ollama");
    }

    @Test
    void redactBody_noSecret_isNull_soTheBodyGoesOutAsItIs() {
        assertThat(redactBody("{\"error\":{\"message\":\"bad request\",\"type\":\"invalid_request_error\"}}")).isNull();
        assertThat(redactBody("<html>Bad gateway</html>")).isNull();
    }

    @Test
    void redactBody_json_masksStringsAndNames_keepsTheRest() throws Exception {
        String body = "{\"error\":{\"message\":\"Incorrect API key provided: " + KEY + ".\",\"type\":\"invalid_request_error\","
                + "\"param\":null,\"code\":\"invalid_api_key\",\"n\":1.50e3,\"" + KEY + "\":[true,\"x\"]}}";
        String out = redactBody(body);
        assertThat(out).doesNotContain(KEY);
        JsonNode n = JSON.readTree(out);
        assertThat(n.at("/error/message").asText()).isEqualTo("Incorrect API key provided: [redacted].");
        assertThat(n.at("/error/code").asText()).isEqualTo("invalid_api_key");
        assertThat(n.at("/error/param").isNull()).isTrue();
        assertThat(out).contains("1.50e3"); // numbers copied exactly
        assertThat(n.at("/error/[redacted]/0").asBoolean()).isTrue();
    }

    @Test
    void redactBody_jsonEscapedKey_isFoundAfterUnescaping() throws Exception {
        // "\u0073" is 's', "\/" is '/': a byte-level search would miss both.
        String escaped = "{\"message\":\"key \\u0073k-proj-AbCd1234EfGh5678 and " + KEY.replace("-", "\\u002d") + "\"}";
        String out = redactBody(escaped);
        assertThat(JSON.readTree(out).get("message").asText()).isEqualTo("key [redacted] and [redacted]");
    }

    @Test
    void redactBody_duplicateNames_everyValueIsRedacted() {
        String out = redactBody("{\"message\":\"" + KEY + "\",\"message\":\"fine\"}");
        assertThat(out).isEqualTo("{\"message\":\"[redacted]\",\"message\":\"fine\"}");
    }

    @Test
    void redactBody_digitsOnlyKey_asANumber_isMasked() {
        SecretRedactor r = new SecretRedactor(List.of("123456789012"));
        ByteBuf in = Unpooled.copiedBuffer("{\"n\":123456789012}", StandardCharsets.UTF_8);
        ByteBuf out = r.redactBody(ByteBufAllocator.DEFAULT, in);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("{\"n\":\"[redacted]\"}");
        out.release();
        in.release();
    }

    @ParameterizedTest
    @ValueSource(strings = {"upstream said: KEY\n", "{\"message\":\"KEY\"", "{\"a\":1} KEY", "{\"a\":1}{\"b\":\"KEY\"}"})
    void redactBody_textOrBrokenJson_isRedactedAsText_otherBytesKept(String template) {
        String body = template.replace("KEY", KEY);
        assertThat(redactBody(body)).isEqualTo(template.replace("KEY", "[redacted]"));
    }

    @Test
    void redactBody_nonUtf8Text_keepsEveryOtherByte() {
        byte[] prefix = {(byte) 0xff, (byte) 0xfe, 'x', ' '};
        byte[] key = KEY.getBytes(StandardCharsets.US_ASCII);
        ByteBuf in = Unpooled.buffer().writeBytes(prefix).writeBytes(key).writeByte(0x80);
        ByteBuf out = REDACTOR.redactBody(ByteBufAllocator.DEFAULT, in);
        byte[] got = new byte[out.readableBytes()];
        out.getBytes(out.readerIndex(), got);
        assertThat(got).startsWith(prefix).endsWith((byte) 0x80);
        assertThat(new String(got, 4, got.length - 5, StandardCharsets.US_ASCII)).isEqualTo("[redacted]");
        assertThat(in.readerIndex()).isZero(); // borrowed, not read
        out.release();
        in.release();
    }

    @Test
    void redactBody_secretSplitAcrossPieces_ofACompositeBody_isFound() {
        byte[] all = ("{\"error\":{\"message\":\"bad key " + KEY + "\"}}").getBytes(StandardCharsets.UTF_8);
        int cut = new String(all, StandardCharsets.UTF_8).indexOf(KEY) + 5;
        ByteBuf in = Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(all, 0, cut),
                Unpooled.wrappedBuffer(all, cut, all.length - cut));
        ByteBuf out = REDACTOR.redactBody(ByteBufAllocator.DEFAULT, in);
        assertThat(out.toString(StandardCharsets.UTF_8)).doesNotContain(KEY).contains("bad key [redacted]");
        out.release();
        in.release();
    }

    @Test
    void redactSseEvent_dataPayloadsAndOtherLines_redacted_framingKept() {
        String event = "event: error\r\ndata: {\"type\":\"error\",\"error\":{\"message\":\"bad \\u0073k-proj-AbCd1234EfGh5678 "
                + KEY + "\"}}\r\n\r\n";
        ByteBuf in = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
        ByteBuf out = REDACTOR.redactSseEvent(ByteBufAllocator.DEFAULT, in);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("event: error\r\ndata: {\"type\":\"error\",\"error\":"
                + "{\"message\":\"bad [redacted] [redacted]\"}}\r\n\r\n");
        out.release();
        in.release();
    }

    @Test
    void redactSseEvent_noSecret_isNull() {
        ByteBuf in = Unpooled.copiedBuffer("data: {\"error\":{\"message\":\"overloaded\"}}\n\n", StandardCharsets.UTF_8);
        assertThat(REDACTOR.redactSseEvent(ByteBufAllocator.DEFAULT, in)).isNull();
        in.release();
    }

    private static String redactBody(String body) {
        ByteBuf in = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        try {
            ByteBuf out = REDACTOR.redactBody(ByteBufAllocator.DEFAULT, in);
            if (out == null) {
                return null;
            }
            try {
                return out.toString(StandardCharsets.UTF_8);
            } finally {
                out.release();
            }
        } finally {
            in.release();
        }
    }
}
