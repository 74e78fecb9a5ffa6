package io.modelgateway.core.observe;

import io.modelgateway.core.exchange.ExchangeRecord;
import io.modelgateway.core.exchange.Outcome;

import io.modelgateway.codecs.Endpoint;

/** Builds finished exchange records with chosen timings for observer tests. */
final class Records {
    static final long START = 1_000_000_000_000L;
    /** 2023-11-14T22:13:20.123Z */
    static final long EPOCH_MILLIS = 1_700_000_000_123L;

    private Records() {
    }

    /**
     * A streamed chat exchange: upstream head after 4.5 ms, first body byte after 12.345678 ms, 150 bytes
     * out, 10 + 20 tokens from the upstream, done after 1234.567891 ms.
     */
    static ExchangeRecord stream(String key, String model) {
        ExchangeRecord r = new ExchangeRecord("req_abc", Endpoint.CHAT_COMPLETIONS, START, EPOCH_MILLIS, 321);
        r.keyName(key);
        r.model(model);
        r.deployment("openai", "gpt-4o-mini-2024-07-18");
        r.stream(true);
        r.upstreamSent(START + 1_000_000);
        r.upstreamHead(START + 5_500_000);
        r.head(200, START + 6_000_000);
        r.bodyBytes(100, START + 12_345_678);
        r.bodyBytes(50, START + 20_000_000);
        r.usage(10, 20, ExchangeRecord.UsageSource.UPSTREAM);
        r.markResponseComplete();
        r.end(Outcome.DONE, START + 1_234_567_891);
        return r;
    }

    /** A refusal by {@code limit} (429) after 2 ms, no upstream, no tokens. */
    static ExchangeRecord limited(String key, String model, String limit) {
        ExchangeRecord r = new ExchangeRecord("req_lim", Endpoint.MESSAGES, START, EPOCH_MILLIS, 40);
        r.keyName(key);
        r.model(model);
        r.limit(limit);
        r.head(429, START + 1_500_000);
        r.bodyBytes(80, START + 1_600_000);
        r.markResponseComplete();
        r.end(Outcome.LIMITED, START + 2_000_000);
        return r;
    }

    /** A 404 for an unknown path-less request: nothing known but the endpoint. */
    static ExchangeRecord bare(Endpoint endpoint, int status, Outcome outcome) {
        ExchangeRecord r = new ExchangeRecord("req_bare", endpoint, START, EPOCH_MILLIS, 0);
        if (status != 0) {
            r.head(status, START + 1_000_000);
        }
        r.end(outcome, START + 3_000_000);
        return r;
    }
}
