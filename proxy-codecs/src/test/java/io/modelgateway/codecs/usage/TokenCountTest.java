package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** One rule for a token count, whichever way it is read: raw bytes, a streaming parser, a tree node. */
class TokenCountTest {
    private static final long NO = TokenCount.IMPLAUSIBLE;

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "0, 0", "12, 12", "100000000, 100000000", "-0, 0", "12.0, 12", "1e3, 1000", "1E+3, 1000", "9.6e1, 96",
        "0.0, 0", "-0.0, 0", "1000000e-2, 10000",
        "100000001, -2", "-5, -2", "-1, -2", "12.5, -2", "1e18, -2", "1.0E18, -2", "999999999999999999, -2",
        "1000000000000000000, -2", "9223372036854775807, -2", "9223372036854775808, -2",
        "99999999999999999999999, -2", "-9223372036854775808, -2", "0.5, -2", "1e-7, -2", "1e999999999, -2",
        "-1e999999999, -2",
    })
    void everyReader_agreesOnWhatIsACount(String json, long expected) throws Exception {
        assertThat(fromBytes(json)).as("bytes").isEqualTo(expected);
        assertThat(fromParser(json)).as("parser").isEqualTo(expected);
        assertThat(TokenCount.of(new ObjectMapper().readTree(json))).as("tree").isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1e-999999999", "1e9999999999", "1.2.3", "-", "--1", "1e", "+-3"})
    void bytesAndParser_oddNumbers_areNoCount(String json) throws Exception {
        assertThat(fromBytes(json)).isEqualTo(NO);
        if (json.matches("1e-?\\d+")) { // the only ones that are JSON
            assertThat(fromParser(json)).isEqualTo(NO);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"null", "\"12\"", "true", "{\"a\":1}", "[1]"})
    void parserAndTree_nonNumbers_areAbsentAndSkippedWhole(String json) throws Exception {
        try (JsonParser p = new JsonFactory().createParser("[" + json + ",7]")) {
            p.nextToken();
            assertThat(TokenCount.of(p, p.nextToken())).isEqualTo(TokenCount.ABSENT);
            assertThat(TokenCount.of(p, p.nextToken())).as("the next value").isEqualTo(7);
        }
        assertThat(TokenCount.of(new ObjectMapper().readTree(json))).isEqualTo(TokenCount.ABSENT);
        assertThat(TokenCount.of((com.fasterxml.jackson.databind.JsonNode) null)).isEqualTo(TokenCount.ABSENT);
    }

    private static long fromBytes(String json) {
        byte[] b = ("x" + json + "y").getBytes(StandardCharsets.US_ASCII);
        return TokenCount.of(b, 1, b.length - 1);
    }

    private static long fromParser(String json) throws Exception {
        try (JsonParser p = new JsonFactory().createParser(json)) {
            JsonToken t = p.nextToken();
            return TokenCount.of(p, t);
        }
    }
}
