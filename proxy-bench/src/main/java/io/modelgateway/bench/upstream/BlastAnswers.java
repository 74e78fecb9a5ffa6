package io.modelgateway.bench.upstream;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.SimulatorSettings;
import io.modelgateway.core.simulator.SimEvent;
import io.modelgateway.core.simulator.SimulatedResponse;
import io.modelgateway.core.simulator.SimulatorEngine;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The benchmark upstream's answers, made once at start by the simulator's engine (so they are the answers the
 * gateway's own tests and SDK checks know, usage included) and kept as the exact HTTP/1.1 bytes to send: a whole
 * non-stream answer with its Content-Length, or a stream as its head, each event as one chunk, and the last chunk.
 *
 * <p>The workloads of the issue this serves: chat, 795-byte answer; messages, about 610 bytes; embeddings, one
 * 1536-float vector (about 19 KB: the simulator writes shorter floats than a real provider's ~32 KB) and its
 * base64 form (about 8 KB); chat and messages streams of 50 events.
 */
final class BlastAnswers {
    /** One answer: for a stream {@link #chunks} are the head and then one chunk per event and the last chunk, else {@link #whole} is everything. */
    record Answer(byte[] whole, List<byte[]> chunks) {
        boolean stream() {
            return chunks != null;
        }

        /** The stream's head and all its chunks, as one write (the burst shape). */
        byte[] burst() {
            if (!stream()) {
                return whole;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (byte[] c : chunks) {
                out.writeBytes(c);
            }
            return out.toByteArray();
        }
    }

    final Answer chat;
    final Answer chatStream;
    final Answer messages;
    final Answer messagesStream;
    final Answer embeddingsFloat;
    final Answer embeddingsBase64;
    /** The messages stream as Bedrock's InvokeModelWithResponseStream sends it: each event in a chunk frame. */
    final Answer bedrockStream;

    BlastAnswers() {
        SimulatorEngine engine = new SimulatorEngine(SimulatorSettings.DEFAULT);
        String user = "{\"role\":\"user\",\"content\":\"Write a short note about load testing a proxy.\"}";
        chat = answer(engine, Endpoint.CHAT_COMPLETIONS, "{\"model\":\"bench-chat\",\"messages\":[" + user + "]}", 32);
        chatStream = answer(engine, Endpoint.CHAT_COMPLETIONS, "{\"model\":\"bench-chat\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"messages\":[" + user + "]}", 46);
        messages = answer(engine, Endpoint.MESSAGES, "{\"model\":\"bench-claude\",\"max_tokens\":256,\"messages\":["
                + user + "]}", 32);
        messagesStream = answer(engine, Endpoint.MESSAGES, "{\"model\":\"bench-claude\",\"max_tokens\":256,"
                + "\"stream\":true,\"messages\":[" + user + "]}", 44);
        embeddingsFloat = answer(engine, Endpoint.EMBEDDINGS, "{\"model\":\"bench-embed\",\"input\":\"one text\","
                + "\"dimensions\":1536,\"encoding_format\":\"float\"}", 0);
        embeddingsBase64 = answer(engine, Endpoint.EMBEDDINGS, "{\"model\":\"bench-embed\",\"input\":\"one text\","
                + "\"dimensions\":1536,\"encoding_format\":\"base64\"}", 0);
        bedrockStream = bedrock(messagesStream);
    }

    /** An Anthropic stream re-framed as Bedrock's event stream: each event's data JSON in one chunk frame. */
    private static Answer bedrock(Answer sse) {
        List<byte[]> chunks = new ArrayList<>();
        chunks.add(("HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\n"
                + "transfer-encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        for (int i = 1; i < sse.chunks().size() - 1; i++) {
            String chunk = new String(sse.chunks().get(i), StandardCharsets.UTF_8);
            int data = chunk.indexOf("data: ");
            String json = chunk.substring(data + 6, chunk.indexOf('\n', data));
            byte[] frame = io.modelgateway.bench.BedrockBenchmark.chunkFrame(json);
            byte[] size = (Integer.toHexString(frame.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            chunks.add(concat(size, frame, "\r\n".getBytes(StandardCharsets.US_ASCII)));
        }
        chunks.add("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return new Answer(null, List.copyOf(chunks));
    }

    private static Answer answer(SimulatorEngine engine, Endpoint endpoint, String request, int outputTokens) {
        byte[] body = request.getBytes(StandardCharsets.UTF_8);
        Map<String, String> headers = Map.of("x-sim-output-tokens", Integer.toString(Math.max(1, outputTokens)),
                "anthropic-version", "2023-06-01");
        SimulatedResponse r = engine.answer(endpoint, body, 0, body.length, headers::get);
        if (r.status() != 200) {
            throw new IllegalStateException("the simulator refused the bench's " + endpoint + " request: "
                    + new String(r.body(), StandardCharsets.UTF_8));
        }
        String type = r.contentType();
        if (!r.isStream()) {
            byte[] head = ("HTTP/1.1 200 OK\r\ncontent-type: " + type + "\r\ncontent-length: " + r.body().length
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
            return new Answer(concat(head, r.body()), null);
        }
        List<byte[]> chunks = new ArrayList<>();
        chunks.add(("HTTP/1.1 200 OK\r\ncontent-type: " + type + "\r\ncache-control: no-cache\r\n"
                + "transfer-encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        for (SimEvent e : r.events()) {
            byte[] size = (Integer.toHexString(e.bytes().length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            chunks.add(concat(size, e.bytes(), "\r\n".getBytes(StandardCharsets.US_ASCII)));
        }
        chunks.add("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return new Answer(null, List.copyOf(chunks));
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
