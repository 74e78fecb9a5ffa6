package io.modelgateway.core.simulator;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.FaultSpec;
import io.modelgateway.core.config.SimulatorSettings;
import java.io.IOException;
import java.util.Objects;
import java.util.function.Function;

/**
 * A fake LLM provider that answers chat completions, embeddings, messages and the Responses API deterministically,
 * at a configurable pace, with injectable faults. Pure: no sockets, no clocks but the
 * {@code created} timestamp and random response ids; {@link SimulatorServer} and the gateway's
 * in-process {@code simulator} provider deliver what it returns.
 *
 * <p>Per request, headers override the defaults: {@code x-sim-ttft-ms}, {@code x-sim-tps},
 * {@code x-sim-output-tokens}, {@code x-sim-fault} (the {@link FaultSpec} syntax). An invalid header
 * value is a 400 in the endpoint's style.
 *
 * <p>Determinism: text, tool calls and usage depend only on the request body (not on
 * {@code stream}); the seed is a hash of the conversation (system, messages, tools), so a tool
 * round trip sees a new seed on its second leg. Order of checks: override headers (400), then an
 * injected {@code status} fault, then the body (400s).
 *
 * <p>Thread-safe and stateless: one instance serves every event loop.
 */
public final class SimulatorEngine {

    public static final String HEADER_TTFT_MS = "x-sim-ttft-ms";
    public static final String HEADER_TPS = "x-sim-tps";
    public static final String HEADER_OUTPUT_TOKENS = "x-sim-output-tokens";
    public static final String HEADER_FAULT = "x-sim-fault";
    /** Input tokens the answer reports as read from the prompt cache (contract 8.8). */
    public static final String HEADER_CACHED_TOKENS = "x-sim-cached-tokens";
    /** Input tokens the answer reports as written to the prompt cache. */
    public static final String HEADER_CACHE_WRITE_TOKENS = "x-sim-cache-write-tokens";
    /** Output tokens the answer reports as reasoning (at most its output). */
    public static final String HEADER_REASONING_TOKENS = "x-sim-reasoning-tokens";

    static final JsonFactory JSON = JsonFactory.builder().enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER).build();
    static final ObjectMapper MAPPER = new ObjectMapper(JSON)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final SimulatorSettings defaults;
    private final FaultSpec defaultFault;
    private final ChatResponder chat = new ChatResponder(MAPPER);
    private final MessagesResponder messages = new MessagesResponder(MAPPER);
    private final ResponsesResponder responses = new ResponsesResponder(MAPPER);
    private final EmbeddingsResponder embeddings = new EmbeddingsResponder(JSON);

    public SimulatorEngine(SimulatorSettings defaults) {
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.defaultFault = FaultSpec.parse(defaults.fault());
    }

    public SimulatorSettings defaults() {
        return defaults;
    }

    /**
     * Answers one request.
     *
     * @param endpoint which API is called; decides the request shape and the error style
     * @param body     the request body bytes {@code [offset, offset + length)}; only read during the call
     * @param header   case-insensitive request header lookup, null when absent (x-sim-*, anthropic-version);
     *                 may itself be null for "no headers"
     */
    public SimulatedResponse answer(Endpoint endpoint, byte[] body, int offset, int length,
                                    Function<String, String> header) {
        ApiStyle style = endpoint.style();
        Function<String, String> headers = header != null ? header : name -> null;
        RequestPlan plan;
        try {
            plan = plan(headers);
        } catch (SimRequestException e) {
            return SimErrors.response(style, e);
        }
        FaultSpec fault = plan.fault();
        if (fault.status() != 0) {
            return SimErrors.response(style, fault.status(), SimErrors.faultMessage(fault.status(), fault.retryAfter()),
                    null, null, fault.delayMs(), fault.retryAfter());
        }
        try {
            JsonNode root = parse(body, offset, length, style);
            return switch (endpoint) {
                case CHAT_COMPLETIONS -> chat.answer(root, plan);
                case EMBEDDINGS -> embeddings.answer(root, plan);
                case MESSAGES -> messages.answer(root, plan, headers.apply("anthropic-version"));
                case COUNT_TOKENS -> messages.countTokens(root, plan);
                case RESPONSES -> responses.answer(root, plan);
                case RESPONSES_INPUT_TOKENS -> responses.inputTokens(root, plan);
            };
        } catch (SimRequestException e) {
            return SimErrors.response(style, e);
        }
    }

    private static JsonNode parse(byte[] body, int offset, int length, ApiStyle style) {
        JsonNode root;
        try {
            root = length == 0 ? null : MAPPER.readTree(body, offset, length);
        } catch (IOException e) {
            throw SimRequestException.invalid(style == ApiStyle.ANTHROPIC
                    ? "There was an error parsing the body of your request: it is not valid JSON."
                    : "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
                    + "your HTTP library correctly.)", null, "invalid_json");
        }
        if (root == null || !root.isObject()) {
            throw SimRequestException.invalid("The request body must be a JSON object.", null, "invalid_json");
        }
        return root;
    }

    /** Defaults overridden by the x-sim-* headers; a bad value names its header. */
    private RequestPlan plan(Function<String, String> header) {
        long ttftMs = defaults.ttftMs();
        double tps = defaults.tokensPerSecond();
        Integer outputTokens = defaults.outputTokens();
        FaultSpec fault = defaultFault;

        String v = header.apply(HEADER_TTFT_MS);
        if (v != null) {
            ttftMs = parseLong(HEADER_TTFT_MS, v);
        }
        v = header.apply(HEADER_TPS);
        if (v != null) {
            try {
                tps = Double.parseDouble(v.trim());
            } catch (NumberFormatException e) {
                tps = -1;
            }
            if (!(tps >= 0) || Double.isInfinite(tps)) {
                throw badHeader(HEADER_TPS, "expected a number >= 0");
            }
        }
        v = header.apply(HEADER_OUTPUT_TOKENS);
        if (v != null) {
            long n = parseLong(HEADER_OUTPUT_TOKENS, v);
            if (n < 1 || n > 1_000_000) {
                throw badHeader(HEADER_OUTPUT_TOKENS, "expected a whole number in 1..1000000");
            }
            outputTokens = (int) n;
        }
        v = header.apply(HEADER_FAULT);
        if (v != null) {
            try {
                fault = FaultSpec.parse(v);
            } catch (IllegalArgumentException e) {
                throw badHeader(HEADER_FAULT, e.getMessage());
            }
        }
        long cached = tokenHeader(header, HEADER_CACHED_TOKENS, 0);
        long cacheWrite = tokenHeader(header, HEADER_CACHE_WRITE_TOKENS, 0);
        long reasoning = tokenHeader(header, HEADER_REASONING_TOKENS, -1);
        return new RequestPlan(ttftMs, tps, outputTokens, fault, cached, cacheWrite, reasoning);
    }

    /** A token-type header: a whole number in 0..1000000, or {@code absent} when there is none. */
    private static long tokenHeader(Function<String, String> header, String name, long absent) {
        String v = header.apply(name);
        if (v == null) {
            return absent;
        }
        long n = parseLong(name, v);
        if (n < 0 || n > 1_000_000) {
            throw badHeader(name, "expected a whole number in 0..1000000");
        }
        return n;
    }

    private static long parseLong(String name, String v) {
        try {
            long n = Long.parseLong(v.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw badHeader(name, "expected a whole number >= 0");
    }

    private static SimRequestException badHeader(String name, String detail) {
        return SimRequestException.invalid("Invalid value for header '" + name + "': " + detail + ".", name,
                "invalid_value");
    }
}
