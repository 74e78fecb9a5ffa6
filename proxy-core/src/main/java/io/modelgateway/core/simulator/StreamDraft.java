package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.config.FaultSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Collects the events of a stream in order, marking which carry generated output ("content
 * events": text, thinking and tool-argument deltas), then applies pace and faults in
 * {@link #build}.
 *
 * <p>Pace: the first event waits the time to first token; a content event waits one token
 * interval — once per round, so the choices of an {@code n > 1} chat stream, interleaved round by
 * round, advance together as they do at OpenAI.
 *
 * <p>Faults: {@code error_after=k} / {@code cut_after=k} end the stream right after the k-th content
 * event (after the last one when the answer is shorter, so an injected fault always fires; k = 0
 * keeps only the events before the first content). Everything after that point is dropped: an error
 * event in the style replaces it, or the connection is cut. {@code stall_after=k} drops it too, but
 * then sends nothing more and keeps the connection open. {@code malformed=k} breaks the k-th content
 * event (the last one when shorter; k = 0: the first event of the stream): its data line keeps only the
 * first half of its JSON, so it is no longer JSON; the events after it go out unchanged.
 */
final class StreamDraft {

    private static final int NOT_CONTENT = -1;

    private final ApiStyle style;
    /** Each event as the parts it is made of ({@link SimEvent}): shared pieces are not copied per event. */
    private final List<byte[][]> events = new ArrayList<>();
    private int[] rounds = new int[64];
    private int nextRound;

    /** How a stream of this draft ends in error; null: the style's error event ({@link SimErrors}). */
    private ErrorEvent errorEvent;

    /** An error event that knows where it falls: {@code sequence} is the number of events sent before it. */
    @FunctionalInterface
    interface ErrorEvent {
        byte[] at(int sequence, String message);
    }

    StreamDraft(ApiStyle style) {
        this.style = style;
    }

    /** The Responses API ends a stream in error with its own typed event, numbered after the ones before it. */
    StreamDraft errorEvent(ErrorEvent errorEvent) {
        this.errorEvent = errorEvent;
        return this;
    }

    /** An event that is its own round (single-choice streams). */
    void add(byte[] bytes, boolean content) {
        add(new byte[][] {bytes}, content, nextRound++);
    }

    /** An event of {@code round}, made of {@code parts} one after the other (kept, not copied). */
    void add(byte[][] parts, boolean content, int round) {
        if (events.size() == rounds.length) {
            rounds = Arrays.copyOf(rounds, rounds.length * 2);
        }
        rounds[events.size()] = content ? round : NOT_CONTENT;
        events.add(parts);
    }

    SimulatedResponse build(RequestPlan plan, Map<String, String> headers) {
        FaultSpec fault = plan.fault();
        int end = events.size();
        RequestPlan.Ending ending = plan.ending();
        if (ending != RequestPlan.Ending.COMPLETE) {
            end = positionAfter(plan.endAfter());
        }
        int broken = fault.malformed() < 0 ? -1 : fault.malformed() == 0 ? 0 : positionAfter(fault.malformed()) - 1;
        long ttft = plan.ttftMs() * 1_000_000L;
        long perToken = plan.perTokenNanos();
        List<SimEvent> out = new ArrayList<>(end + 1);
        int lastRound = NOT_CONTENT;
        for (int i = 0; i < end; i++) {
            long delay = 0;
            if (i == 0) {
                delay = ttft;
            } else if (rounds[i] != NOT_CONTENT && rounds[i] != lastRound) {
                delay = perToken;
                lastRound = rounds[i];
            }
            out.add(i == broken ? new SimEvent(delay, malformed(SimEvent.concat(events.get(i))))
                    : new SimEvent(delay, events.get(i)));
        }
        if (ending == RequestPlan.Ending.ERROR) {
            String message = "The simulator injected a stream error (error_after=" + fault.errorAfter() + ")";
            out.add(new SimEvent(0, errorEvent != null ? errorEvent.at(end, message)
                    : SimErrors.streamErrorEvent(style, message)));
        }
        if (ending == RequestPlan.Ending.STALL) {
            return SimulatedResponse.stalled(SimulatedResponse.EVENT_STREAM, headers, fault.delayMs(), out);
        }
        return SimulatedResponse.stream(SimulatedResponse.EVENT_STREAM, headers, fault.delayMs(), out,
                ending == RequestPlan.Ending.CUT);
    }

    /** The event with its {@code data:} payload cut to its first half (framing kept, so it is still one event). */
    static byte[] malformed(byte[] event) {
        int data = indexOf(event, "data:".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        if (data < 0) {
            return event;
        }
        int from = data + 5;
        if (from < event.length && event[from] == ' ') {
            from++;
        }
        int to = from;
        while (to < event.length && event[to] != '\n') {
            to++;
        }
        int keep = from + Math.max(1, (to - from) / 2);
        byte[] out = new byte[keep + (event.length - to)];
        System.arraycopy(event, 0, out, 0, keep);
        System.arraycopy(event, to, out, keep, event.length - to);
        return out;
    }

    private static int indexOf(byte[] bytes, byte[] what) {
        outer:
        for (int i = 0; i + what.length <= bytes.length; i++) {
            for (int j = 0; j < what.length; j++) {
                if (bytes[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The number of events to keep so that exactly {@code k} content events are sent (or all of them). */
    private int positionAfter(int k) {
        int seen = 0;
        int afterLast = -1;
        for (int i = 0; i < events.size(); i++) {
            if (rounds[i] != NOT_CONTENT) {
                if (k == 0) {
                    return i;
                }
                afterLast = i + 1;
                if (++seen == k) {
                    return afterLast;
                }
            }
        }
        return afterLast >= 0 ? afterLast : Math.min(1, events.size());
    }
}
