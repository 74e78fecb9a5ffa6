package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.SimulatorSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Calls the engine with JSON text and reads its output back the way a client would. */
final class SimTestSupport {

    static final ObjectMapper MAPPER = new ObjectMapper();

    /** One parsed SSE event: the {@code event:} name (null in OpenAI style) and the {@code data:} text. */
    record Sse(String event, String data) {
        JsonNode json() {
            return SimTestSupport.json(data);
        }
    }

    private SimTestSupport() {
    }

    static SimulatedResponse answer(SimulatorEngine engine, Endpoint endpoint, String body, String... headers) {
        Map<String, String> h = new HashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            h.put(headers[i].toLowerCase(Locale.ROOT), headers[i + 1]);
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        // Offset the body inside a bigger array: the engine must honour offset/length.
        byte[] padded = new byte[bytes.length + 7];
        System.arraycopy(bytes, 0, padded, 3, bytes.length);
        return engine.answer(endpoint, padded, 3, bytes.length, name -> h.get(name.toLowerCase(Locale.ROOT)));
    }

    static SimulatedResponse answer(Endpoint endpoint, String body, String... headers) {
        return answer(new SimulatorEngine(SimulatorSettings.DEFAULT), endpoint, body, headers);
    }

    static JsonNode json(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode body(SimulatedResponse r) {
        assertThat(r.events()).as("non-stream answer").isNull();
        assertThat(r.contentType()).isEqualTo("application/json");
        return json(new String(r.body(), StandardCharsets.UTF_8));
    }

    /** Parses every event strictly: each one ends with a blank line and has only event:/data: lines. */
    static List<Sse> events(SimulatedResponse r) {
        assertThat(r.events()).as("stream answer").isNotNull();
        assertThat(r.contentType()).isEqualTo("text/event-stream; charset=utf-8");
        List<Sse> out = new ArrayList<>();
        for (SimEvent e : r.events()) {
            String text = new String(e.bytes(), StandardCharsets.UTF_8);
            assertThat(text).endsWith("\n\n");
            String event = null;
            String data = null;
            for (String line : text.substring(0, text.length() - 2).split("\n", -1)) {
                if (line.startsWith("event: ")) {
                    assertThat(event).as("one event line").isNull();
                    event = line.substring(7);
                } else {
                    assertThat(line).startsWith("data: ");
                    assertThat(data).as("one data line").isNull();
                    data = line.substring(6);
                }
            }
            assertThat(data).as("data line in " + text).isNotNull();
            out.add(new Sse(event, data));
        }
        return out;
    }

    /** The OpenAI chunks of a stream that ends with [DONE] (which is checked and dropped). */
    static List<JsonNode> chatChunks(SimulatedResponse r) {
        List<Sse> events = events(r);
        assertThat(events).isNotEmpty();
        assertThat(events.get(events.size() - 1).data()).isEqualTo("[DONE]");
        List<JsonNode> out = new ArrayList<>();
        for (Sse e : events.subList(0, events.size() - 1)) {
            assertThat(e.event()).isNull();
            out.add(e.json());
        }
        return out;
    }

    /** Concatenated {@code delta.content} of choice {@code index}. */
    static String chatText(List<JsonNode> chunks, int index) {
        StringBuilder b = new StringBuilder();
        for (JsonNode c : chunks) {
            for (JsonNode choice : c.path("choices")) {
                if (choice.path("index").asInt() == index && choice.path("delta").path("content").isTextual()) {
                    b.append(choice.path("delta").path("content").asText());
                }
            }
        }
        return b.toString();
    }

    static String chatRequest(String extraFields) {
        return "{\"model\":\"sim-gpt\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                + "{\"role\":\"user\",\"content\":\"Tell me about rivers.\"}]" + extraFields + "}";
    }

    static String messagesRequest(String extraFields) {
        return "{\"model\":\"sim-claude\",\"max_tokens\":4096,\"system\":\"Be brief.\","
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about rivers.\"}]" + extraFields + "}";
    }

    static final String WEATHER_TOOL_CHAT = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
            + "\"description\":\"Weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
            + "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":7},\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]},"
            + "\"hourly\":{\"type\":\"boolean\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
            + "\"where\":{\"type\":\"object\",\"properties\":{\"lat\":{\"type\":\"number\"},\"lon\":{\"type\":\"number\"}}}},"
            + "\"required\":[\"city\"]}}}";
    static final String TIME_TOOL_CHAT = "{\"type\":\"function\",\"function\":{\"name\":\"get_time\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"zone\":{\"type\":\"string\"}}}}}";
    static final String WEATHER_TOOL_MESSAGES = "{\"name\":\"get_weather\",\"description\":\"Weather\","
            + "\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},"
            + "\"days\":{\"type\":\"integer\"}},\"required\":[\"city\"]}}";
    static final String TIME_TOOL_MESSAGES = "{\"name\":\"get_time\",\"input_schema\":{\"type\":\"object\","
            + "\"properties\":{\"zone\":{\"type\":\"string\"}}}}";
}
