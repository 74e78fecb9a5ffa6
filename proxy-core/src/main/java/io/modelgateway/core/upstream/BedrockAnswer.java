package io.modelgateway.core.upstream;

import io.modelgateway.codecs.aws.EventStreamDecoder;
import io.modelgateway.codecs.aws.EventStreamMessage;
import io.modelgateway.codecs.bedrock.BedrockErrors;
import io.modelgateway.codecs.bedrock.Converse;
import io.modelgateway.codecs.bedrock.InvokeStreamChunks;
import io.modelgateway.core.answer.AnswerWriter;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;

/**
 * Turns a Bedrock InvokeModel answer into what an Anthropic upstream would have sent, before the {@link AnswerWriter}
 * sees it, so the writer, the translators, the retries, the limits and the accounting stay as they are:
 * <ul>
 *   <li>a JSON answer (InvokeModel) is the Messages answer already: passed on as it is; a Converse answer is
 *       collected (within {@code max_collected_bytes}) and written as the Anthropic message it says
 *       ({@link Converse#answer});</li>
 *   <li>an event stream ({@code application/vnd.amazon.eventstream}, InvokeModelWithResponseStream) is decoded
 *       incrementally ({@link EventStreamDecoder}: both CRCs checked, bounded by {@code max_sse_event_bytes}) and
 *       each {@code chunk} event becomes the Anthropic SSE event it carries (ConverseStream's events the Anthropic
 *       events they mean, {@link Converse.Stream}), handed on at once; the head goes to the
 *       writer with the first event, so an exception event that comes first ({@code throttlingException},
 *       {@code modelStreamErrorException}, …) is an error answer with its status (and retried like one);</li>
 *   <li>an exception after the first event, a corrupted or truncated message ends the stream with Anthropic's
 *       {@code error} event (GD-10);</li>
 *   <li>an error answer ({@code x-amzn-ErrorType}, {@code {"message":…}}) becomes Anthropic's error body with the
 *       status of {@link BedrockErrors#map} (so {@code Retry-After} and the hook see the right status).</li>
 * </ul>
 * One per exchange attempt; pieces handed in are borrowed.
 */
final class BedrockAnswer {
    private static final AsciiString X_AMZN_ERROR_TYPE = AsciiString.cached("x-amzn-errortype");
    private static final AsciiString TEXT_EVENT_STREAM = AsciiString.cached("text/event-stream");

    private enum Mode { PASS, CONVERSE, ERROR, STREAM, ENDED }

    private final AnswerWriter writer;
    private final ByteBufAllocator alloc;
    private final int maxErrorBodyBytes;
    private final int maxEventBytes;
    private final int maxCollectedBytes;
    /** Converse: the model and message id its answer is written with, and its stream's translation; else null. */
    private final String converseModel;
    private final java.util.List<String> converseStops;
    private final String messageId;
    private Converse.Stream converse;
    private CompositeByteBuf collected;
    private Mode mode = Mode.PASS;
    /** The upstream's answer was read to its end (its connection may then serve another request). */
    private boolean upstreamEnded;
    // ERROR
    private HttpResponseStatus errorStatus;
    private String errorType;
    private CompositeByteBuf errorBody;
    private boolean errorTooLong;
    // STREAM
    private EventStreamDecoder decoder;
    private InvokeStreamChunks chunks;
    private boolean headGiven;
    private HttpHeaders streamHeaders;

    /**
     * @param converseModel the model of a Converse call (its answer is translated); null for InvokeModel
     * @param converseStops the stop sequences a Converse call asked for (its answer names the one matched)
     */
    BedrockAnswer(AnswerWriter writer, ByteBufAllocator alloc, int maxErrorBodyBytes, int maxEventBytes,
            int maxCollectedBytes, String converseModel, String messageId, java.util.List<String> converseStops) {
        this.writer = writer;
        this.alloc = alloc;
        this.maxErrorBodyBytes = maxErrorBodyBytes;
        this.maxEventBytes = maxEventBytes;
        this.maxCollectedBytes = maxCollectedBytes;
        this.converseModel = converseModel;
        this.messageId = messageId;
        this.converseStops = converseStops;
    }

    /** Whether the upstream's answer was read to its end: else its connection must not be pooled again. */
    boolean upstreamEnded() {
        return upstreamEnded;
    }

    /** The head of Bedrock's final answer. */
    void head(HttpResponseStatus status, HttpHeaders headers) {
        int code = status.code();
        if (code >= 300) {
            errorType = headers.get(X_AMZN_ERROR_TYPE);
            BedrockErrors.Mapped mapped = BedrockErrors.map(errorType, code);
            errorStatus = HttpResponseStatus.valueOf(mapped.status());
            mode = Mode.ERROR;
            writer.head(errorStatus, jsonHeaders(headers));
            return;
        }
        String contentType = headers.get(HttpHeaderNames.CONTENT_TYPE);
        if (contentType != null && contentType.regionMatches(true, 0, "application/vnd.amazon.eventstream", 0, 34)) {
            mode = Mode.STREAM;
            decoder = new EventStreamDecoder(alloc, maxEventBytes);
            chunks = new InvokeStreamChunks();
            converse = converseModel == null ? null : new Converse.Stream(converseModel, messageId, converseStops);
            streamHeaders = new DefaultHttpHeaders();
            streamHeaders.set(HttpHeaderNames.CONTENT_TYPE, TEXT_EVENT_STREAM);
            return; // the writer gets the head with the first event
        }
        if (converseModel != null) {
            mode = Mode.CONVERSE; // the whole answer is translated at its end
            return;
        }
        writer.head(status, headers);
    }

    /** A piece of the answer's body ({@code last}: its end). Borrowed. */
    void content(ByteBuf piece, boolean last) {
        if (last) {
            upstreamEnded = true;
        }
        switch (mode) {
            case PASS -> writer.content(piece, last);
            case CONVERSE -> converseAnswer(piece, last);
            case ERROR -> error(piece, last);
            case STREAM -> stream(piece, last);
            case ENDED -> {
            }
        }
    }

    /** Lets go of what is held (the exchange ended, whichever way). */
    void release() {
        if (errorBody != null) {
            errorBody.release();
            errorBody = null;
        }
        if (collected != null) {
            collected.release();
            collected = null;
        }
        if (decoder != null) {
            decoder.release();
        }
        mode = Mode.ENDED;
    }

    // ------------------------------------------------------------------ Converse answers

    private void converseAnswer(ByteBuf piece, boolean last) {
        if (piece.isReadable()) {
            if (collected == null) {
                collected = alloc.compositeBuffer(16);
            }
            if (collected.readableBytes() + piece.readableBytes() > maxCollectedBytes) {
                collected.release();
                collected = null;
                endWithError("api_error", "The upstream provider's answer is larger than the gateway takes.", 502);
                return;
            }
            collected.addComponent(true, piece.retainedSlice());
        }
        if (!last) {
            return;
        }
        ByteBuf answer;
        try {
            answer = Converse.answer(alloc, collected == null ? Unpooled.EMPTY_BUFFER : collected, converseModel,
                    messageId, converseStops);
        } catch (IllegalArgumentException e) {
            endWithError("api_error", "The upstream provider sent a malformed answer.", 502);
            return;
        } finally {
            if (collected != null) {
                collected.release();
                collected = null;
            }
        }
        mode = Mode.ENDED;
        try {
            HttpHeaders h = new DefaultHttpHeaders();
            h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, answer.readableBytes());
            writer.head(HttpResponseStatus.OK, h);
            if (!writer.done()) {
                writer.content(answer, true);
            }
        } finally {
            answer.release();
        }
    }

    // ------------------------------------------------------------------ error answers

    private void error(ByteBuf piece, boolean last) {
        if (!errorTooLong && piece.isReadable()) {
            if (errorBody == null) {
                errorBody = alloc.compositeBuffer(8);
            }
            if (errorBody.readableBytes() + piece.readableBytes() > maxErrorBodyBytes) {
                errorTooLong = true;
                errorBody.release();
                errorBody = null;
            } else {
                errorBody.addComponent(true, piece.retainedSlice());
            }
        }
        if (!last) {
            return;
        }
        BedrockErrors.Body said = errorTooLong ? new BedrockErrors.Body(null, null) : BedrockErrors.read(errorBody);
        String type = errorType != null ? errorType : said.type();
        BedrockErrors.Mapped mapped = BedrockErrors.map(type, errorStatus.code());
        String message = said.message() != null ? said.message() : BedrockErrors.describe(mapped, type);
        ByteBuf body = BedrockErrors.anthropicBody(alloc, mapped.type(), message);
        try {
            mode = Mode.ENDED;
            writer.content(body, true);
        } finally {
            body.release();
            if (errorBody != null) {
                errorBody.release();
                errorBody = null;
            }
        }
    }

    private static HttpHeaders jsonHeaders(HttpHeaders upstream) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
        String retryAfter = upstream.get(HttpHeaderNames.RETRY_AFTER);
        if (retryAfter != null) {
            h.set(HttpHeaderNames.RETRY_AFTER, retryAfter);
        }
        return h;
    }

    // ------------------------------------------------------------------ event streams

    private void stream(ByteBuf piece, boolean last) {
        String failure = decoder.feed(piece, this::message);
        if (mode != Mode.STREAM) {
            return; // an exception ended the answer
        }
        if (failure != null) {
            endWithError("api_error", "The upstream provider's event stream was corrupted (" + failure + ").", 502);
            return;
        }
        if (last) {
            if (decoder.hasPartial()) {
                endWithError("api_error", "The upstream provider's event stream was cut inside a message.", 502);
                return;
            }
            ByteBuf fin = converse == null ? null : converse.finish(alloc);
            mode = Mode.ENDED;
            giveHead();
            try {
                if (!writer.done()) {
                    writer.content(fin == null ? Unpooled.EMPTY_BUFFER : fin, true);
                }
            } finally {
                if (fin != null) {
                    fin.release();
                }
            }
        }
    }

    private void message(EventStreamMessage m) {
        if (mode != Mode.STREAM || writer.done()) {
            return;
        }
        if (!m.isEvent()) {
            String type = m.exceptionType() != null ? m.exceptionType() : m.errorCode();
            BedrockErrors.Mapped mapped = BedrockErrors.map(type, 0);
            String message = m.errorMessage();
            if (message == null && m.payload() != null) {
                message = BedrockErrors.read(m.payload()).message();
            }
            if (message == null) {
                message = BedrockErrors.describe(mapped, type);
            }
            endWithError(mapped.type(), message, mapped.status());
            return;
        }
        ByteBuf sse;
        if (converse != null) {
            try {
                sse = m.eventType() == null ? null : converse.event(alloc, m.eventType(), m.payload());
            } catch (IllegalArgumentException e) {
                endWithError("api_error", "The upstream provider sent a stream event that is not JSON.", 502);
                return;
            }
            if (sse == null) {
                return; // messageStop: its stop reason goes out with metadata's usage
            }
            try {
                giveHead();
                if (!writer.done()) {
                    writer.content(sse, false);
                }
            } finally {
                sse.release();
            }
            return;
        }
        if (!"chunk".equals(m.eventType())) {
            return; // no other event type is part of InvokeModelWithResponseStream's answer
        }
        sse = chunks.toSse(alloc, m.payload());
        if (sse == null) {
            endWithError("api_error", "The upstream provider sent a stream chunk that is not an event.", 502);
            return;
        }
        try {
            giveHead();
            if (!writer.done()) {
                writer.content(sse, false);
            }
        } finally {
            sse.release();
        }
    }

    private void giveHead() {
        if (!headGiven) {
            headGiven = true;
            writer.head(HttpResponseStatus.OK, streamHeaders);
        }
    }

    /**
     * Ends the answer with an error: before the first event an error answer with {@code status} (the writer offers
     * it for a retry like any error head); after it, Anthropic's {@code error} event.
     */
    private void endWithError(String type, String message, int status) {
        mode = Mode.ENDED;
        if (writer.done()) {
            return;
        }
        if (!headGiven) {
            headGiven = true;
            HttpHeaders h = new DefaultHttpHeaders();
            h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
            writer.head(HttpResponseStatus.valueOf(status), h);
            if (writer.done()) {
                return;
            }
            ByteBuf body = BedrockErrors.anthropicBody(alloc, type, message);
            try {
                writer.content(body, true);
            } finally {
                body.release();
            }
            return;
        }
        ByteBuf event = BedrockErrors.anthropicEvent(alloc, type, message);
        try {
            writer.content(event, true);
        } finally {
            event.release();
        }
    }
}
