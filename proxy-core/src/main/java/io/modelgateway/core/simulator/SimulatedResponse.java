package io.modelgateway.core.simulator;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the simulator answers to one request, independent of how it is delivered (in process or by
 * {@link SimulatorServer}). Immutable; the byte arrays must not be modified by the writer.
 *
 * <p>Delivery: wait {@link #headerDelayMs()}, then send the status and headers. A non-stream answer
 * ({@link #events()} is null) sends {@link #body()} with a content length. A stream
 * ({@link #events()} not null, possibly empty) uses chunked encoding: each event is written and
 * flushed after its own delay, then the body is ended normally — unless {@link #cutAtEnd()}, in
 * which case the connection is closed abruptly after the last event, without the terminating chunk, or
 * {@link #stallAtEnd()}, in which case nothing more is sent and the connection stays open (a hung provider).
 */
public final class SimulatedResponse {

    public static final String JSON = "application/json";
    public static final String EVENT_STREAM = "text/event-stream; charset=utf-8";

    private final int status;
    private final String contentType;
    private final Map<String, String> headers;
    private final long headerDelayMs;
    private final byte[] body;
    private final SimEvents events;
    private final boolean cutAtEnd;
    private final boolean stallAtEnd;

    private SimulatedResponse(int status, String contentType, Map<String, String> headers, long headerDelayMs,
                              byte[] body, List<SimEvent> events, boolean cutAtEnd, boolean stallAtEnd) {
        this.status = status;
        this.contentType = contentType;
        this.headers = Map.copyOf(headers);
        this.headerDelayMs = headerDelayMs;
        this.body = body;
        this.events = events == null ? null : SimEvents.of(events);
        this.cutAtEnd = cutAtEnd;
        this.stallAtEnd = stallAtEnd;
    }

    static SimulatedResponse full(int status, Map<String, String> headers, long headerDelayMs, byte[] body) {
        return new SimulatedResponse(status, JSON, headers, headerDelayMs, body, null, false, false);
    }

    static SimulatedResponse stream(String contentType, Map<String, String> headers, long headerDelayMs,
                                    List<SimEvent> events, boolean cutAtEnd) {
        return new SimulatedResponse(200, contentType, headers, headerDelayMs, null, events, cutAtEnd, false);
    }

    /** A stream (or a chunked body) that sends its events and then hangs: no terminator, no close. */
    static SimulatedResponse stalled(String contentType, Map<String, String> headers, long headerDelayMs,
                                     List<SimEvent> events) {
        return new SimulatedResponse(200, contentType, headers, headerDelayMs, null, events, false, true);
    }

    /** A copy with one more header (e.g. {@code allow} on a 405). */
    SimulatedResponse withHeader(String name, String value) {
        Map<String, String> h = new HashMap<>(headers);
        h.put(name, value);
        return new SimulatedResponse(status, contentType, h, headerDelayMs, body, events, cutAtEnd, stallAtEnd);
    }

    /** A copy sent after another delay (e.g. none, once the caller waited the delay out already). */
    SimulatedResponse withHeaderDelay(long delayMs) {
        return new SimulatedResponse(status, contentType, headers, delayMs, body, events, cutAtEnd, stallAtEnd);
    }

    /** A copy of a stream with other events (e.g. without the usage chunk the caller did not ask for). */
    SimulatedResponse withEvents(List<SimEvent> events) {
        return new SimulatedResponse(status, contentType, headers, headerDelayMs, body, events, cutAtEnd, stallAtEnd);
    }

    /** A copy of a stream that sends only {@code events} and is then cut (the gateway stops it there). */
    SimulatedResponse cutBefore(List<SimEvent> events) {
        return new SimulatedResponse(status, contentType, headers, headerDelayMs, body, events, true, false);
    }

    public int status() {
        return status;
    }

    /** {@value #JSON} or {@value #EVENT_STREAM}. */
    public String contentType() {
        return contentType;
    }

    /** Extra response headers, lower-case names (request id, {@code retry-after}). */
    public Map<String, String> headers() {
        return headers;
    }

    /** Wait this long before sending the status line and headers. */
    public long headerDelayMs() {
        return headerDelayMs;
    }

    /** The whole body of a non-stream answer; null for streams. */
    public byte[] body() {
        return body;
    }

    /** The events of a stream in order; null for non-stream answers. */
    public List<SimEvent> events() {
        return events;
    }

    /** The events of a stream as the pacer reads them (each without making its object); null for non-stream answers. */
    SimEvents streamEvents() {
        return events;
    }

    public boolean isStream() {
        return events != null;
    }

    /** After the last event, close the connection abruptly (no terminating chunk, no terminator event). */
    public boolean cutAtEnd() {
        return cutAtEnd;
    }

    /** After the last event, send nothing more and keep the connection open (a provider that hangs). */
    public boolean stallAtEnd() {
        return stallAtEnd;
    }
}
