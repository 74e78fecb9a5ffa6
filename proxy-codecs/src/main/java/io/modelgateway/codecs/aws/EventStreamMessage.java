package io.modelgateway.codecs.aws;

import io.netty.buffer.ByteBuf;

/**
 * One decoded message of an AWS event stream ({@code application/vnd.amazon.eventstream}): the headers the gateway
 * reads, as Strings (the usual values are shared constants, not new Strings per message), and the payload.
 *
 * <p>One instance per decoder, filled anew for each message and valid only during the handler call that receives
 * it; the payload is a slice of the decoder's or the caller's buffer, borrowed (not retained) for that call.
 */
public final class EventStreamMessage {
    String messageType;
    String eventType;
    String exceptionType;
    String errorCode;
    String errorMessage;
    String contentType;
    ByteBuf payload;

    EventStreamMessage() {
    }

    void clear() {
        messageType = null;
        eventType = null;
        exceptionType = null;
        errorCode = null;
        errorMessage = null;
        contentType = null;
        payload = null;
    }

    /** {@code :message-type}: {@code event}, {@code exception} or {@code error}; null when the header is absent. */
    public String messageType() {
        return messageType;
    }

    /** {@code :event-type}, e.g. {@code chunk}, {@code contentBlockDelta}. */
    public String eventType() {
        return eventType;
    }

    /** {@code :exception-type}, e.g. {@code throttlingException}. */
    public String exceptionType() {
        return exceptionType;
    }

    /** {@code :error-code} of a message of type {@code error}. */
    public String errorCode() {
        return errorCode;
    }

    /** {@code :error-message} of a message of type {@code error}. */
    public String errorMessage() {
        return errorMessage;
    }

    /** {@code :content-type} of the payload, e.g. {@code application/json}. */
    public String contentType() {
        return contentType;
    }

    /** The payload bytes (borrowed: valid during the handler call only). */
    public ByteBuf payload() {
        return payload;
    }

    /** Whether this is an ordinary event (and not an exception or an error). */
    public boolean isEvent() {
        return "event".equals(messageType);
    }
}
