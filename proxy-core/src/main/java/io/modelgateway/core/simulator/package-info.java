/**
 * The simulator: a built-in fake LLM provider that speaks both API styles, deterministically, at a
 * chosen pace, with injectable faults. {@link io.modelgateway.core.simulator.SimulatorEngine} turns a
 * request into a {@link io.modelgateway.core.simulator.SimulatedResponse} (pure, shared by all event
 * loops); the gateway's {@code simulator} provider delivers that in process, and
 * {@link io.modelgateway.core.simulator.SimulatorServer} delivers it over HTTP/1.1 as a standalone upstream.
 *
 * <p>Choices the wire contract leaves open, made here:
 * <ul>
 *   <li>Text is words from a fixed {@code Vocabulary} (about one in nine non-ASCII), one word = one
 *       token = one stream delta; answer length is {@code output_tokens} (settings / header) or
 *       12 + seed % 37. Thinking / reasoning adds 8–16 words that count as output tokens and toward
 *       {@code max_tokens}.</li>
 *   <li>A tool turn carries tool calls only (no text before them, in either style) and is not cut by
 *       {@code max_tokens}; each call counts as its argument fragments + 1 tokens.</li>
 *   <li>{@code response_format}: {@code json_object} answers {@code {"answer":"…"}};
 *       {@code json_schema} answers JSON generated from the schema, streamed in 8-character pieces.</li>
 *   <li>Input tokens = ceil(UTF-8 bytes of message, system and tool-call text / 4), at least 1;
 *       embeddings count each string the same way and token-id inputs one per id.</li>
 *   <li>Faults: a {@code status} fault wins over everything but a bad override header; in streams
 *       {@code error_after}/{@code cut_after} end the stream after the k-th content event (or after the
 *       last one when the answer is shorter), the smaller k winning; on non-stream requests
 *       {@code error_after} is a 500 and {@code cut_after} a 200 head followed by a dropped connection.
 *       {@code delay_ms} delays the head of every answer; {@code retry_after} only accompanies {@code status}.</li>
 *   <li>Response ids ({@code chatcmpl-}, {@code msg_}, request ids) are random per request; tool-call
 *       ids, text and usage are functions of the request body.</li>
 * </ul>
 */
package io.modelgateway.core.simulator;
