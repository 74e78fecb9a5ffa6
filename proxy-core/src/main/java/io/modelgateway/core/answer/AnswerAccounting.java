package io.modelgateway.core.answer;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.sse.EventBytes;
import io.modelgateway.codecs.translate.Usage;
import io.modelgateway.codecs.usage.BodyUsageScanner;
import io.modelgateway.codecs.usage.StreamUsageTracker;
import io.modelgateway.codecs.usage.UsageCounts;
import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.Outcome;
import io.netty.buffer.ByteBuf;
import java.util.logging.Logger;

/**
 * The tokens one answer used, read from the provider's own bytes as they pass (its stream events, or its JSON body)
 * and put on the request's record when the answer ends: the provider's counts when its answer was complete;
 * otherwise an estimate of what was delivered (the input reserved at admission, or the input the provider already
 * reported, and one token per content event delivered); nothing for an answer the provider refused. Counts the
 * codecs did not believe (see {@code TokenCount}) are as good as none. Owned by an {@link AnswerWriter}.
 */
final class AnswerAccounting {
    private static final Logger LOG = Logger.getLogger(AnswerAccounting.class.getName());

    private final GatewayRequest request;
    private final String provider;
    private StreamUsageTracker streamUsage;
    private BodyUsageScanner bodyUsage;
    /** The request went to the provider (so a cancel before its answer may still have cost input tokens). */
    private boolean asked;
    /** The usage a translator determined for an answer whose body has none to read (Google's embeddings); or null. */
    private Usage answered;
    private boolean answeredEstimated;

    AnswerAccounting(GatewayRequest request, String provider) {
        this.request = request;
        this.provider = provider;
    }

    void asked() {
        asked = true;
    }

    /** The answer is a stream: its usage comes in events. */
    void stream() {
        streamUsage = new StreamUsageTracker();
    }

    /** The answer is one JSON body: its usage is in it, read as it passes. */
    void body() {
        bodyUsage = new BodyUsageScanner();
    }

    void bodyPiece(ByteBuf piece) {
        bodyUsage.feed(piece);
    }

    /** The usage of a translated answer whose body carries none the scanner reads ({@code estimated}: the gateway's). */
    void answered(Usage usage, boolean estimated) {
        answered = usage;
        answeredEstimated = estimated;
    }

    /** Whether the body read so far is structurally well-formed JSON (checked in the same pass as the usage). */
    boolean bodyWellFormed() {
        return bodyUsage.wellFormed();
    }

    /**
     * One stream event ({@code bytes}: its bytes, copied out for the checks it just passed); true when it carries only
     * usage (the chunk a caller who did not ask must not get).
     */
    boolean event(EventBytes bytes) {
        return streamUsage.onEvent(bytes);
    }

    /** Puts the tokens on the record: {@code code} is the provider's status, 0 when no head arrived. */
    void account(Outcome outcome, int code) {
        ExchangeRecord record = request.record();
        if (request.endpoint() == Endpoint.COUNT_TOKENS || request.endpoint() == Endpoint.RESPONSES_INPUT_TOKENS) {
            // A count of tokens is not generation: nothing is accounted, whatever the answer says.
            record.usage(0, 0, ExchangeRecord.UsageSource.NONE);
            return;
        }
        boolean ok = code >= 200 && code < 300;
        UsageCounts counts = streamUsage != null ? streamUsage.counts() : bodyUsage != null ? bodyUsage.counts() : null;
        if (counts != null && counts.implausible()) {
            // A count no exchange can have: none of this usage is believed, the estimate below stands in for it.
            LOG.warning("upstream " + provider + " reported an implausible token count ("
                    + counts.implausibleField() + "); the exchange is accounted with the gateway's estimate");
            counts = null;
        }
        boolean complete = counts != null && (streamUsage == null || streamUsage.complete());
        if (ok && outcome == Outcome.DONE && counts == null && answered != null) {
            // The translator counted (the provider's per-input counts summed, or the gateway's count of the inputs).
            record.usage(answered, answeredEstimated ? ExchangeRecord.UsageSource.ESTIMATED
                    : ExchangeRecord.UsageSource.UPSTREAM);
        } else if (ok && outcome == Outcome.DONE && complete) {
            // Every token type as the provider reported it (cache reads and writes, reasoning): contract 8.8.
            record.usage(counts.usage(), ExchangeRecord.UsageSource.UPSTREAM);
        } else if (ok || (outcome == Outcome.CANCELLED && code == 0 && asked)) {
            Usage u = counts == null ? null : counts.usage();
            long output = streamUsage == null ? 0
                    : Math.max(u == null ? 0 : u.completionTokens(), streamUsage.otherEvents());
            if (u != null && u.promptTokens() > 0) {
                // The input the provider already reported, by type; the output is what was delivered.
                record.usage(u.withOutput(output), ExchangeRecord.UsageSource.ESTIMATED);
            } else {
                record.usage(request.estimatedInputTokens(), output, ExchangeRecord.UsageSource.ESTIMATED);
            }
        } else {
            record.usage(0, 0, ExchangeRecord.UsageSource.NONE);
        }
    }
}
