package io.modelgateway.core.answer;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.ErrorBodies;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.sse.EventBytes;
import io.modelgateway.codecs.sse.SseDataCheck;
import io.modelgateway.codecs.sse.SseEventScanner;
import io.modelgateway.codecs.translate.StreamTranslator;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The stream part of an {@link AnswerWriter}: the provider's SSE events, found by the scanner in whatever pieces they
 * arrive, go to the caller one by one — as they are (pass-through: ranges of the provider's buffers, copied into the
 * read's chunk on HTTP/1.1, the usage read as they pass, a usage chunk the caller did not ask for withheld) or through
 * the stream translator. The
 * head goes out with the first event (GD-24). An event whose data is not JSON or that is longer than
 * {@code max_sse_event_bytes} ends the stream with the style's error event (GD-10), or is a 502 before anything was
 * sent; an error event the provider sends has its secrets removed first.
 *
 * <p>Ownership: each event the scanner emits is lent for the call; what is kept of it (a slice to translate, a redacted
 * error event) is owned here until written (the write releases it) or released. The scanner's unfinished event is
 * released by {@link #release}. Confined to the writer's event loop.
 */
final class StreamRelay implements SseEventScanner.EventSink {
    private static final Logger LOG = Logger.getLogger(StreamRelay.class.getName());
    private static final AsciiString TEXT_EVENT_STREAM = AsciiString.cached("text/event-stream; charset=utf-8");
    private static final AsciiString X_ACCEL_BUFFERING = AsciiString.cached("x-accel-buffering");

    private final AnswerWriter writer;
    private final SseEventScanner scanner;
    /** Null for pass-through. */
    private final StreamTranslator translator;
    private final AnswerAccounting accounting;
    private final boolean withholdUsageChunk;
    /** Where a translated stream's outputs go (null when passing through): made once, not one per event. */
    private final Consumer<ByteBuf> writeEvent;
    /**
     * The bytes of the event {@link #checked} last let through, copied out once for its checks and its usage search
     * (the thread's view: read before the next event is checked).
     */
    private EventBytes checkedBytes;
    /** The provider sent an error event (relayed as it is when passing through): the exchange failed upstream. */
    private boolean upstreamErrorEvent;
    /** Pass-through events relayed: the next {@code sequence_number} of a Responses API stream (GD-28). */
    private long relayed;

    StreamRelay(AnswerWriter writer, SseEventScanner scanner, StreamTranslator translator,
            AnswerAccounting accounting, boolean withholdUsageChunk) {
        this.writer = writer;
        this.scanner = scanner;
        this.translator = translator;
        this.accounting = accounting;
        this.withholdUsageChunk = withholdUsageChunk;
        this.writeEvent = translator == null ? null : this::writeEvent;
    }

    /** Each event of a piece, as the scanner cuts it (this relay is the scanner's sink: no function made for it). */
    @Override
    public void event(ByteBuf buf, int index, int length) {
        if (translator == null) {
            passEvent(buf, index, length);
        } else {
            translateEvent(buf, index, length);
        }
    }

    /** A piece of the stream ({@code last}: its end). Borrowed. */
    void feed(ByteBuf c, boolean last) {
        boolean fits = scanner.feed(c, this);
        if (writer.done()) {
            scanner.release(); // an event ended the exchange (malformed); drop what the feed kept after it
            return;
        }
        if (!fits) {
            eventTooLarge();
            return;
        }
        if (!last) {
            return;
        }
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            try {
                event(rest, rest.readerIndex(), rest.readableBytes());
            } finally {
                rest.release();
            }
            if (writer.done()) {
                return;
            }
        }
        if (translator != null) {
            translator.onEnd(true, this::writeEvent);
        }
        if (!writer.headSent()) {
            sendHead(); // an empty stream still gets a well-formed response
        }
        writer.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        // A translated stream that ended unfinished (no finish reason) closed with an error event; a passed-through
        // stream that carried the provider's own error event failed the same way, however cleanly it then ended.
        boolean failed = upstreamErrorEvent || translator != null && translator.failed();
        writer.finish(true, failed ? Outcome.UPSTREAM_ERROR : Outcome.DONE);
    }

    /**
     * One event as it is (pass-through): to the client, unless it is a usage chunk we withhold. The events of one
     * read leave together as one chunk: the writer merges them ({@link AnswerWriter#readComplete}). Lent: the writer
     * copies the range, or slices it where it keeps it; only an error event, redacted, is made into a buffer here.
     */
    private void passEvent(ByteBuf buf, int index, int length) {
        if (!checked(buf, index, length)) {
            return;
        }
        ByteBuf error = SseDataCheck.looksLikeError(checkedBytes)
                ? redactedError(buf.retainedSlice(index, length)) // a buffer of its own only to redact
                : null;
        if (accounting.event(checkedBytes) && withholdUsageChunk) {
            if (error != null) {
                error.release();
            }
            return; // counted above; the caller did not ask for it (GD-21)
        }
        relayed++;
        if (!writer.headSent()) {
            sendHead();
        }
        if (error != null) {
            writer.writeStreamPiece(error);
        } else {
            writer.writeStreamPiece(buf, index, length);
        }
    }

    /** One event through the stream translator; its outputs go to the client one by one. Lent. */
    private void translateEvent(ByteBuf buf, int index, int length) {
        if (!checked(buf, index, length)) {
            return;
        }
        ByteBuf event = buf.retainedSlice(index, length);
        if (SseDataCheck.looksLikeError(checkedBytes)) {
            event = redactedError(event);
        }
        accounting.event(checkedBytes);
        try {
            translator.onEvent(event, writeEvent);
        } finally {
            event.release();
        }
        if (translator.failed()) {
            // The translator ended the caller's stream with an error event (a bad event inside, an error the
            // provider sent): nothing after it is relayed; the provider is let go and the answer is a failure.
            writer.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            writer.finish(false, Outcome.UPSTREAM_ERROR);
        }
    }

    /**
     * Whether an event may go on, its bytes then in {@link #checkedBytes}: not when the answer already ended on an
     * earlier event of the same read, nor when this one is not JSON (the answer then ends here).
     */
    private boolean checked(ByteBuf buf, int index, int length) {
        if (writer.done()) {
            return false;
        }
        EventBytes bytes = EventBytes.of(buf, index, length);
        if (!SseDataCheck.plausible(bytes)) {
            malformedEvent();
            return false;
        }
        checkedBytes = bytes;
        return true;
    }

    /** An error event the provider sent (owned), with its secrets removed; {@link #checkedBytes} follows it. */
    private ByteBuf redactedError(ByteBuf event) {
        upstreamErrorEvent = true;
        ByteBuf clean = withoutSecrets(event);
        if (clean != event) {
            checkedBytes = EventBytes.of(clean);
        }
        return clean;
    }

    /**
     * An event whose data is not JSON: nothing after it can be trusted. Before anything was sent, a 502 (GD-24); else
     * the style's error event after what was delivered, no terminator (GD-10).
     */
    private void malformedEvent() {
        LOG.warning("upstream " + writer.provider() + " sent a malformed stream event");
        if (!writer.headSent()) {
            writer.failBeforeHead(UpstreamFailures.MALFORMED_ANSWER);
            return;
        }
        // Called from inside the scanner's feed: what it holds after this event is dropped when the exchange ends.
        endWithError(UpstreamFailures.MALFORMED_EVENT);
    }

    /** An event grew past {@code max_sse_event_bytes}: the scanner dropped it; ended like a malformed event. */
    private void eventTooLarge() {
        int max = scanner.maxEventBytes();
        writer.protocolError("sse_event_too_large", "sent a stream event larger than max_sse_event_bytes (" + max + ")");
        GatewayError error = new GatewayError(ErrorKind.UPSTREAM_ERROR,
                "The upstream provider sent a stream event larger than " + max + " bytes.", null, null);
        if (!writer.headSent()) {
            writer.failBeforeHead(error);
        } else {
            endWithError(error);
        }
    }

    /**
     * An error event the provider sent mid-stream, with its secrets and key shapes removed (it may echo the request's
     * credential like an error body): the same event when it holds none, else a redacted copy (the original
     * released). Only error events come here: one prefix comparison per event decides.
     */
    private ByteBuf withoutSecrets(ByteBuf event) {
        ByteBuf clean = writer.redactor().redactSseEvent(writer.alloc(), event);
        if (clean == null) {
            return event;
        }
        event.release();
        return clean;
    }

    /**
     * Ends a stream whose head was sent with {@code error} as the style's error event (GD-10) and no terminator
     * ({@code [DONE]} / {@code message_stop}); the HTTP response itself ends properly, so the client reads a stream
     * that carries the error and its connection stays usable.
     */
    void endWithError(GatewayError error) {
        if (translator != null) {
            translator.onFailure(error, this::writeEvent);
        } else if (writer.request().endpoint() == Endpoint.RESPONSES) {
            // The Responses API's typed stream ends in error with response.failed, numbered after what was relayed.
            writer.write(new DefaultHttpContent(ErrorBodies.responsesFailedEvent(writer.alloc(), error, relayed)));
        } else {
            writer.write(new DefaultHttpContent(ErrorBodies.streamEvent(writer.alloc(), writer.style(), error)));
        }
        writer.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        writer.finish(false, Outcome.UPSTREAM_ERROR);
    }

    /**
     * One event to the client, as its own chunk; flushed at the end of the read that brought it
     * ({@link AnswerWriter#readComplete}): events that arrived together leave together in one write.
     */
    private void writeEvent(ByteBuf event) {
        if (!writer.headSent()) {
            sendHead();
        }
        writer.writeStreamPiece(event);
    }

    private void sendHead() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                ArrayHttpHeaders.trusted(4 + writer.request().decorations()));
        HttpHeaders h = head.headers();
        h.set(HttpHeaderNames.CONTENT_TYPE, TEXT_EVENT_STREAM);
        h.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        h.set(X_ACCEL_BUFFERING, "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        writer.sendHead(head);
    }

    /**
     * Drops half an event the scanner still holds, when the stream ends from outside (not from inside a feed): never
     * hand a client a torn frame.
     */
    void dropPartialEvent() {
        ByteBuf rest = scanner.drainRemainder();
        if (rest != null) {
            rest.release();
        }
    }

    /** Drops what the scanner holds. Idempotent; a feed in progress may still touch the scanner. */
    void release() {
        scanner.release();
    }
}
