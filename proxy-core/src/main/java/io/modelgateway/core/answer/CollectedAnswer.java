package io.modelgateway.core.answer;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.translate.ErrorTranslator;
import io.modelgateway.codecs.translate.ResponseTranslator;
import io.modelgateway.codecs.translate.TranslationException;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.UpstreamFailures;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.logging.Logger;

/**
 * An answer the caller sees only once the provider's body is complete, collected whole ({@link CollectedBody}): a 2xx
 * answer translated into the caller's style as a whole, or an error answer (any final status outside 2xx), whose
 * body has the provider's secrets and anything shaped like a credential removed and is then relayed with its status
 * and a correct Content-Length to a caller of the provider's style, or re-expressed in the caller's style. Past its
 * cap the body is not read further: an error the caller learns from its status only, in its own style; an answer to
 * translate a 502. Past the process's budget: 503 / 529 with Retry-After. Part of an {@link AnswerWriter}.
 */
final class CollectedAnswer {
    private static final Logger LOG = Logger.getLogger(CollectedAnswer.class.getName());

    private final AnswerWriter writer;
    private final CollectedBody body;
    /** Null for an error answer; else translates the 2xx answer as a whole. */
    private final ResponseTranslator translator;
    private final HttpResponseStatus status;
    /** An error answer's Retry-After (seconds or a date), retry-after-ms and Content-Type; null when none. */
    private final String retryAfter;
    private final String retryAfterMs;
    private final String contentType;

    private CollectedAnswer(AnswerWriter writer, CollectedBody body, ResponseTranslator translator,
            HttpResponseStatus status, String retryAfter, String retryAfterMs, String contentType) {
        this.writer = writer;
        this.body = body;
        this.translator = translator;
        this.status = status;
        this.retryAfter = retryAfter;
        this.retryAfterMs = retryAfterMs;
        this.contentType = contentType;
    }

    /** A 2xx answer to translate; {@code body} bounded by {@code max_collected_bytes}. */
    static CollectedAnswer translated(AnswerWriter writer, CollectedBody body, ResponseTranslator translator) {
        return new CollectedAnswer(writer, body, translator, HttpResponseStatus.OK, null, null, null);
    }

    /**
     * An error answer; {@code body} bounded by {@code max_error_body_bytes}. Its headers are kept only when they hold
     * no secret.
     */
    static CollectedAnswer error(AnswerWriter writer, CollectedBody body, HttpResponseStatus status, HttpHeaders headers) {
        return new CollectedAnswer(writer, body, null, status,
                writer.withoutSecret(headers.get(HttpHeaderNames.RETRY_AFTER)),
                writer.withoutSecret(headers.get(HttpResponses.RETRY_AFTER_MS)),
                writer.withoutSecret(headers.get(HttpHeaderNames.CONTENT_TYPE)));
    }

    /** The error answer's Retry-After, for an error the gateway writes in its place. */
    String retryAfter() {
        return retryAfter;
    }

    /** A piece of the body ({@code last}: its end); answered when complete. Borrowed. */
    void feed(ByteBuf piece, boolean last) {
        switch (body.add(piece)) {
            case TOO_LARGE -> tooLarge();
            case OVER_BUDGET -> overBudget();
            default -> {
                if (last) {
                    if (translator != null) {
                        answerTranslated();
                    } else {
                        answerError();
                    }
                }
            }
        }
    }

    /** The body passed this answer's cap: not read further, the provider let go. */
    private void tooLarge() {
        int cap = body.cap();
        if (translator == null) {
            int code = status.code();
            writer.protocolError("error_body_too_large", "sent an error body (" + code
                    + ") larger than max_error_body_bytes (" + cap + ")");
            // The caller learns what the status said, in its own style, not what the body said.
            writer.failBeforeHead(new GatewayError(ErrorTranslator.kindForStatus(code), "The upstream provider's "
                    + "error response (HTTP " + code + ") was larger than " + cap + " bytes and was not relayed.", null,
                    null), retryAfter);
        } else {
            writer.protocolError("answer_too_large", "sent an answer to translate larger than max_collected_bytes ("
                    + cap + ")");
            writer.failBeforeHead(new GatewayError(ErrorKind.UPSTREAM_ERROR, "The upstream provider's answer is "
                    + "larger than " + cap + " bytes, too large to translate.", null, null), null);
        }
    }

    /** The process holds {@code collected_budget_bytes} of collected bodies already: refused as overloaded. */
    private void overBudget() {
        GatewayRequest request = writer.request();
        request.record().memoryRefusal(writer.provider(), "collected_budget");
        LOG.warning("request " + request.requestId() + ": the answer of upstream " + writer.provider()
                + " was refused: collected answers already hold upstream_limits.collected_budget_bytes");
        writer.failBeforeHead(UpstreamFailures.COLLECTED_BUDGET_EXHAUSTED, null); // 503 / 529 with Retry-After
    }

    private void answerTranslated() {
        ByteBuf collected = body.take();
        try {
            ByteBuf out;
            try {
                out = translator.translate(writer.alloc(), collected);
            } catch (TranslationException e) {
                writer.failBeforeHead(e.error(), null);
                return;
            }
            writer.translated(translator);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, out);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, out.readableBytes());
            writer.costHeader(response.headers());
            writer.sendWhole(response);
            writer.finish(true, Outcome.DONE);
        } finally {
            collected.release();
        }
    }

    private void answerError() {
        ByteBuf collected = body.take();
        ByteBuf clean = writer.redactor().redactBody(writer.alloc(), collected);
        if (clean != null) {
            collected.release();
            collected = clean;
        }
        int code = status.code();
        GatewayRequest request = writer.request();
        ApiStyle providerStyle = writer.providerStyle();
        if (providerStyle != request.style()) {
            try {
                GatewayError error = ErrorTranslator.fromUpstream(providerStyle, code, collected, request.style());
                HttpResponses.sendError(writer.ctx(), request, error, retryAfter);
            } finally {
                collected.release();
            }
        } else {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, collected,
                    HttpResponses.TRUSTED_HEADERS, HttpResponses.TRUSTED_HEADERS);
            HttpHeaders h = response.headers();
            if (contentType != null) {
                h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
            }
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, collected.readableBytes());
            if (retryAfter != null) {
                h.set(HttpHeaderNames.RETRY_AFTER, retryAfter);
            }
            if (retryAfterMs != null) {
                h.set(HttpResponses.RETRY_AFTER_MS, retryAfterMs);
            }
            HttpResponses.ensureRetryHeaders(h, code);
            writer.sendWhole(response);
        }
        writer.finish(true, code == 429 || code >= 500 ? Outcome.UPSTREAM_ERROR : Outcome.DONE);
    }

    /** Frees the body and gives its reservation back. Idempotent. */
    void release() {
        body.release();
    }
}
