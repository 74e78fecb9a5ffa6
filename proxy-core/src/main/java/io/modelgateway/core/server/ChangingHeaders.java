package io.modelgateway.core.server;

import io.modelgateway.core.exchange.HttpResponses;
import io.modelgateway.core.exchange.ServerTiming;
import io.modelgateway.core.exchange.Usd;
import io.modelgateway.core.limit.RateLimitHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The HTTP/2 answer headers whose values change with every answer (a request id, a timing, the remaining and reset
 * of a rate limit, a cost, a length): HPACK writes them as literals that are never indexed instead of adding each
 * new value to the connection's dynamic table, where it would push out the entries that do repeat (the content
 * type, the limits, the forwarded names) and be looked up, added and evicted on every answer for nothing. The names
 * are the gateway's own answer headers (a name in h2 is lower case). Stateless; shared by every connection.
 */
final class ChangingHeaders implements Http2HeadersEncoder.SensitivityDetector {
    static final ChangingHeaders INSTANCE = new ChangingHeaders();

    private static final Set<AsciiString> NAMES = names();

    private static Set<AsciiString> names() {
        List<AsciiString> names = new ArrayList<>(List.of(HttpResponses.X_REQUEST_ID, HttpResponses.REQUEST_ID,
                ServerTiming.SERVER_TIMING, HttpHeaderNames.CONTENT_LENGTH, HttpHeaderNames.DATE, Usd.COST_HEADER));
        names.addAll(RateLimitHeaders.changingNames());
        return Set.copyOf(names);
    }

    private ChangingHeaders() {
    }

    @Override
    public boolean isSensitive(CharSequence name, CharSequence value) {
        return NAMES.contains(name instanceof AsciiString a ? a : AsciiString.of(name));
    }
}
