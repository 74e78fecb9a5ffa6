package io.modelgateway.bench.loadgen;

/**
 * Why an exchange failed, other than by an HTTP status (those are counted per status code). The
 * names are what the report and the JSON print.
 */
enum ErrorKind {
    /** The TCP connection could not be opened (refused, timed out). */
    CONNECT("connect"),
    /** No full answer within {@code --timeout-ms}; the connection was closed. */
    TIMEOUT("timeout"),
    /** The connection closed before the answer's head came. */
    CLOSED_BEFORE_RESPONSE("closed_before_response"),
    /** The connection closed in the middle of a non-stream body. */
    CLOSED_MID_BODY("closed_mid_body"),
    /** A stream carried an error event ({@code data: {"error"…}} or {@code event: error}). */
    STREAM_ERROR("stream_error"),
    /** A stream ended (or its connection closed) without {@code [DONE]} / {@code message_stop}. */
    STREAM_CUT("stream_cut"),
    /** The answer was not valid HTTP/1.1, or came when none was asked for. */
    PROTOCOL("protocol_error");

    final String label;

    ErrorKind(String label) {
        this.label = label;
    }
}
