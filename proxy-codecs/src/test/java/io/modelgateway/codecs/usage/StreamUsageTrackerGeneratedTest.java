package io.modelgateway.codecs.usage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import io.modelgateway.codecs.translate.Usage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tracker on usage events it has never seen: each event is written by jackson-core's generator (an independent
 * writer, compact or pretty, with escapes and non-ASCII text in the members around the usage), from counts this test
 * draws, so what the tracker must report is known without reading the bytes. Around the usage sit members of every
 * JSON shape (nested objects and arrays, strings with quotes and backslashes, numbers of every form) that the tracker
 * must skip, and the usage object itself carries extra members, details and, sometimes, a count that is no count.
 */
class StreamUsageTrackerGeneratedTest {
    private static final JsonFactory JSON = new JsonFactory();

    @Test
    void generatedOpenAiUsageChunks_countedAsDrawn() throws IOException {
        Random r = new Random(Long.getLong("usage.seed", 20261129L));
        int believed = 0;
        int refused = 0;
        for (int round = 0; round < 5000; round++) {
            long prompt = r.nextInt(200_000);
            long completion = r.nextInt(50_000);
            long cached = r.nextBoolean() ? Math.min(prompt, r.nextInt(10_000)) : 0;
            long reasoning = r.nextBoolean() ? Math.min(completion, r.nextInt(5_000)) : 0;
            int absurd = r.nextInt(10) == 0 ? r.nextInt(4) : -1; // which count is written as no count, if any
            boolean choicesEmpty = r.nextBoolean();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (JsonGenerator g = JSON.createGenerator(out)) {
                if (r.nextBoolean()) {
                    g.setPrettyPrinter(new DefaultPrettyPrinter());
                }
                g.writeStartObject();
                junkMembers(g, r, 3);
                g.writeFieldName("choices");
                g.writeStartArray();
                if (!choicesEmpty) {
                    junkValue(g, r, 3);
                }
                g.writeEndArray();
                junkMembers(g, r, 2);
                g.writeFieldName("usage");
                g.writeStartObject();
                count(g, "prompt_tokens", prompt, absurd == 0, r);
                junkMembers(g, r, 2);
                count(g, "completion_tokens", completion, absurd == 1, r);
                g.writeNumberField("total_tokens", prompt + completion);
                g.writeObjectFieldStart("prompt_tokens_details");
                count(g, "cached_tokens", cached, absurd == 2, r);
                junkMembers(g, r, 1);
                g.writeEndObject();
                g.writeObjectFieldStart("completion_tokens_details");
                junkMembers(g, r, 1);
                count(g, "reasoning_tokens", reasoning, absurd == 3, r);
                g.writeEndObject();
                g.writeEndObject();
                junkMembers(g, r, 2);
                g.writeEndObject();
            }
            // A pretty-printed payload spans lines: each becomes a data line, as an SSE writer splits it.
            String payload = out.toString(StandardCharsets.UTF_8);
            String event = "data: " + payload.replace("\n", "\ndata: ") + (r.nextBoolean() ? "\n\n" : "\r\n\r\n");
            String at = "round " + round + ": " + event;

            StreamUsageTracker t = new StreamUsageTracker();
            ByteBuf b = Unpooled.copiedBuffer(event, StandardCharsets.UTF_8);
            boolean usageOnly;
            try {
                usageOnly = t.onEvent(b);
            } finally {
                b.release();
            }
            assertThat(usageOnly).as(at).isEqualTo(choicesEmpty);
            assertThat(t.complete()).as(at).isTrue();
            UsageCounts c = t.counts();
            assertThat(c).as(at).isNotNull();
            if (absurd >= 0) {
                assertThat(c.implausible()).as(at).isTrue();
                refused++;
            } else {
                assertThat(c.implausible()).as(at).isFalse();
                assertThat(c.usage()).as(at).isEqualTo(Usage.fromOpenAi(prompt, completion, cached, 0, reasoning));
                believed++;
            }
        }
        assertThat(believed).isGreaterThan(4000);
        assertThat(refused).isGreaterThan(200);
    }

    /** A count as a plain integer, a whole number in another form, or (when {@code absurd}) no plausible count. */
    private static void count(JsonGenerator g, String name, long n, boolean absurd, Random r) throws IOException {
        g.writeFieldName(name);
        if (absurd) {
            switch (r.nextInt(4)) {
                case 0 -> g.writeNumber(-1 - n);
                case 1 -> g.writeNumber(n + 0.5);
                case 2 -> g.writeRawValue("1e30");
                default -> g.writeRawValue("99999999999999999999999");
            }
            return;
        }
        switch (r.nextInt(6)) {
            case 0 -> g.writeRawValue(n + ".0");
            case 1 -> g.writeRawValue(n == 0 ? "0e5" : n + "e0");
            default -> g.writeNumber(n);
        }
    }

    private static void junkMembers(JsonGenerator g, Random r, int max) throws IOException {
        int n = r.nextInt(max + 1);
        for (int i = 0; i < n; i++) {
            g.writeFieldName(JUNK_NAMES[r.nextInt(JUNK_NAMES.length)] + i);
            junkValue(g, r, 2);
        }
    }

    private static final String[] JUNK_NAMES = {"id", "model", "usage_note", "x\"usage\":{", "\u00e9t\u00e9",
            "system_fingerprint", "\\\\", "choices_", "obfuscation"};
    private static final String[] JUNK_TEXT = {"", "plain", "a \"usage\":{\"prompt_tokens\":1} inside", "\\ back",
            "tab\there", "\u4f60\u597d", "emoji \ud83d\ude00", "line\nbreak", "\u0001ctl", "}]},{"};

    private static void junkValue(JsonGenerator g, Random r, int depth) throws IOException {
        switch (r.nextInt(depth > 0 ? 8 : 6)) {
            case 0 -> g.writeString(JUNK_TEXT[r.nextInt(JUNK_TEXT.length)]);
            case 1 -> g.writeNumber(r.nextLong());
            case 2 -> g.writeNumber(r.nextDouble() * 1e-7);
            case 3 -> g.writeBoolean(r.nextBoolean());
            case 4 -> g.writeNull();
            case 5 -> g.writeRawValue("-0.0e-0");
            case 6 -> {
                g.writeStartArray();
                for (int i = r.nextInt(4); i > 0; i--) {
                    junkValue(g, r, depth - 1);
                }
                g.writeEndArray();
            }
            default -> {
                // No nested "usage" member: the tracker's byte search takes the event's last usage key for its
                // only one (as every provider's events have it), which this generator keeps to.
                g.writeStartObject();
                junkMembers(g, r, 3);
                g.writeEndObject();
            }
        }
    }
}
