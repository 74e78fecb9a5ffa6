package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class InputTokenCounterTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void loadTheEncoding() {
        InputTokenCounter.load();
        assertThat(InputTokenCounter.ready()).isTrue();
    }

    /**
     * OpenAI's API reference answers the chat request system "You are a helpful assistant." + user "Hello!" with
     * {@code prompt_tokens: 19}; the same conversation in Anthropic's shape counts the same.
     */
    @Test
    void publishedExample_countsAsOpenAiReported() throws Exception {
        long n = InputTokenCounter.messagesRequest(JSON.readTree("{\"model\":\"m\",\"max_tokens\":5,"
                + "\"system\":\"You are a helpful assistant.\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}"));
        assertThat(n).isEqualTo(19);
    }

    @Test
    void blocksToolsAndResults_allCount_andMoreTextCountsMore() throws Exception {
        String plain = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hello!\"}]}]}";
        String withTools = "{\"tools\":[{\"name\":\"get_weather\",\"description\":\"Weather of a city\","
                + "\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}],"
                + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hello!\"}]},"
                + "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"get_weather\","
                + "\"input\":{\"city\":\"Paris\"}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
                + "\"tool_use_id\":\"t\",\"content\":[{\"type\":\"text\",\"text\":\"sunny, 21 degrees\"}]}]}]}";
        long small = InputTokenCounter.messagesRequest(JSON.readTree(plain));
        assertThat(small).isEqualTo(3 + 3 + 1 + 2);
        assertThat(InputTokenCounter.messagesRequest(JSON.readTree(withTools))).isGreaterThan(small + 20);
    }

    /** Past the exact budget the rest is counted at the rate measured: the work per request is bounded. */
    @Test
    void longText_pastTheBudget_isExtrapolatedAtTheMeasuredRate() throws Exception {
        String unit = "lorem ipsum dolor sit amet ";
        long perUnit = InputTokenCounter.messagesRequest(JSON.readTree(
                "{\"messages\":[{\"role\":\"user\",\"content\":\"" + unit.repeat(100) + "\"}]}")) - 7;
        String huge = unit.repeat(20 * InputTokenCounter.EXACT_CHARS / unit.length());
        long n = InputTokenCounter.messagesRequest(JSON.readTree(
                "{\"messages\":[{\"role\":\"user\",\"content\":\"" + huge + "\"}]}")) - 7;
        double expected = perUnit / 100.0 * (huge.length() / unit.length());
        assertThat((double) n).isCloseTo(expected, org.assertj.core.data.Percentage.withPercentage(2));
    }

    @Test
    void specialTokenText_isOrdinaryText_andABadBodyIsMinusOne() {
        ByteBuf body = Unpooled.copiedBuffer("{\"messages\":[{\"role\":\"user\",\"content\":\"<|endoftext|>\"}]}",
                StandardCharsets.UTF_8);
        try {
            assertThat(InputTokenCounter.messagesRequest(body)).isGreaterThan(7);
            assertThat(body.readerIndex()).isZero();
        } finally {
            body.release();
        }
        ByteBuf bad = Unpooled.copiedBuffer("[1,", StandardCharsets.UTF_8);
        try {
            assertThat(InputTokenCounter.messagesRequest(bad)).isEqualTo(-1);
        } finally {
            bad.release();
        }
    }
}
