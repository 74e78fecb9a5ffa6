package io.modelgateway.core.simulator;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.config.FaultSpec;
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
    /**
     * Per event: the parts it is made of ({@code byte[][]}, shared pieces not copied per event), or a token's quoted
     * bytes ({@code byte[]}) that {@link #frames} frames and that become its event only when due ({@link SimEvents}).
     */
    private Object[] sources;
    private SimEvents.TokenFrame[] frames;
    private int[] rounds;
    private int size;
    private int nextRound;

    /** How a stream of this draft ends in error; null: the style's error event ({@link SimErrors}). */
    private ErrorEvent errorEvent;

    /** An error event that knows where it falls: {@code sequence} is the number of events sent before it. */
    @FunctionalInterface
    interface ErrorEvent {
        byte[] at(int sequence, String message);
    }

    StreamDraft(ApiStyle style) {
        this(style, 64);
    }

    /** A draft with room for {@code expected} events (more are taken too). */
    StreamDraft(ApiStyle style, int expected) {
        this.style = style;
        int n = Math.max(1, expected);
        this.sources = new Object[n];
        this.frames = new SimEvents.TokenFrame[n];
        this.rounds = new int[n];
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

    /** An event that is its own round, made of {@code parts} one after the other (kept, not copied). */
    void add(byte[][] parts, boolean content) {
        add(parts, content, nextRound++);
    }

    /** An event of {@code round}, made of {@code parts} one after the other (kept, not copied). */
    void add(byte[][] parts, boolean content, int round) {
        append(parts, null, content ? round : NOT_CONTENT);
    }

    /**
     * A content event that is its own round: {@code token}'s quoted bytes in {@code frame}. Kept as the two, and made
     * into its event's parts when due.
     */
    void addToken(SimEvents.TokenFrame frame, String token) {
        append(Vocabulary.quoted(token), frame, nextRound++);
    }

    /**
     * The events of several choices' drafts (each event its own round there), interleaved round by round as OpenAI
     * streams the choices of an {@code n > 1} answer: every choice's first event, then every second one, and so on.
     */
    void interleave(List<StreamDraft> choices) {
        int longest = 0;
        for (StreamDraft c : choices) {
            longest = Math.max(longest, c.size);
        }
        for (int round = 0; round < longest; round++) {
            for (StreamDraft c : choices) {
                if (round < c.size) {
                    append(c.sources[round], c.frames[round], c.rounds[round] == NOT_CONTENT ? NOT_CONTENT : round);
                }
            }
        }
        nextRound = Math.max(nextRound, longest);
    }

    private void append(Object source, SimEvents.TokenFrame frame, int round) {
        if (size == rounds.length) {
            rounds = Arrays.copyOf(rounds, size * 2);
            sources = Arrays.copyOf(sources, size * 2);
            frames = Arrays.copyOf(frames, size * 2);
        }
        sources[size] = source;
        frames[size] = frame;
        rounds[size] = round;
        size++;
    }

    /** The stream's answer: the events with their waits, cut or broken as the plan's faults say. Call once. */
    SimulatedResponse build(RequestPlan plan, Map<String, String> headers) {
        FaultSpec fault = plan.fault();
        int end = size;
        RequestPlan.Ending ending = plan.ending();
        if (ending != RequestPlan.Ending.COMPLETE) {
            end = positionAfter(plan.endAfter());
        }
        int broken = fault.malformed() < 0 ? -1 : fault.malformed() == 0 ? 0 : positionAfter(fault.malformed()) - 1;
        int count = ending == RequestPlan.Ending.ERROR ? end + 1 : end;
        // The draft's own arrays when they have the room: a draft is built once, and only the list reads them then.
        Object[] outSources = count <= sources.length ? sources : Arrays.copyOf(sources, count);
        SimEvents.TokenFrame[] outFrames = count <= frames.length ? frames : Arrays.copyOf(frames, count);
        byte[] waits = new byte[count];
        int lastRound = NOT_CONTENT;
        for (int i = 0; i < end; i++) {
            if (i == 0) {
                waits[i] = SimEvents.FIRST_TOKEN;
            } else if (rounds[i] != NOT_CONTENT && rounds[i] != lastRound) {
                waits[i] = SimEvents.TOKEN;
                lastRound = rounds[i];
            }
            if (i == broken) {
                outSources[i] = new byte[][] {malformed(SimEvent.concat(SimEvents.parts(sources[i], frames[i])))};
                outFrames[i] = null;
            }
        }
        if (ending == RequestPlan.Ending.ERROR) {
            String message = "The simulator injected a stream error (error_after=" + fault.errorAfter() + ")";
            outSources[end] = new byte[][] {errorEvent != null ? errorEvent.at(end, message)
                    : SimErrors.streamErrorEvent(style, message)};
            outFrames[end] = null;
        }
        SimEvents out = new SimEvents(outSources, outFrames, waits, count, plan.ttftMs() * 1_000_000L,
                plan.perTokenNanos());
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
        for (int i = 0; i < size; i++) {
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
        return afterLast >= 0 ? afterLast : Math.min(1, size);
    }
}
