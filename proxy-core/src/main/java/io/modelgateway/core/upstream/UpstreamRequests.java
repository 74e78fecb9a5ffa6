package io.modelgateway.core.upstream;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.util.Iterator;
import java.util.Map;

/**
 * The HTTP request an exchange sends its upstream: the provider's path for the endpoint, its Host, the body, the
 * gateway's own headers, the client headers the provider passes on, its extra headers, the Anthropic headers by their
 * own rule, and the provider's credential — never the caller's (contract 2.1). The per-provider parts come prebuilt
 * from the {@link UpstreamTarget}; headers are set without per-set validation, their values having been checked.
 */
final class UpstreamRequests {
    static final AsciiString USER_AGENT = AsciiString.cached("model-gateway/0.1");

    private UpstreamRequests() {
    }

    /**
     * The head of the request for {@code body} (not retained: {@link #body} is what carries it) to the deployment
     * whose model name at the provider is {@code upstreamModel}.
     *
     * <p>Head and body go to the connection as two messages, not one {@code FullHttpRequest}: Netty's encoder copies
     * the content of a full message into the head's buffer when it fits, and copying a duplicate of a direct buffer
     * makes two {@code java.nio} views per request; two messages leave as one gathering write of both buffers.
     */
    static HttpRequest head(UpstreamTarget target, ProviderConfig provider, GatewayRequest request,
            String upstreamModel, ByteBuf body) {
        HttpRequest out = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST,
                target.path(endpoint(provider, request), upstreamModel, request.peek().stream()),
                ArrayHttpHeaders.trusted(headerRoom(target, provider, request)));
        HttpHeaders h = out.headers();
        h.set(HttpHeaderNames.HOST, target.host);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        h.set(HttpHeaderNames.USER_AGENT, USER_AGENT);
        h.set(HttpResponses.X_REQUEST_ID, request.requestId());
        // Client headers the provider config asks to pass on; credentials never, nor the Anthropic headers, which
        // follow their own rule below. The names are matched as the decoder made them, without lower-cased copies.
        if (!provider.forwardHeaders().isEmpty()) {
            Iterator<Map.Entry<CharSequence, CharSequence>> it = request.headers().iteratorCharSequence();
            while (it.hasNext()) {
                Map.Entry<CharSequence, CharSequence> e = it.next();
                if (provider.forwardsHeader(e.getKey()) && !AnthropicHeaders.isAnthropicHeader(e.getKey())) {
                    h.add(AsciiString.of(e.getKey()).toLowerCase(), e.getValue());
                }
            }
        }
        for (int i = 0; i < target.extraNames.length; i++) {
            h.set(target.extraNames[i], target.extraValues[i]);
        }
        AnthropicHeaders.add(h, provider, request);
        if (request.trace() != null) {
            request.trace().inject(h); // after forward_headers: the gateway's own span is the upstream's parent
        }
        if (target.credentialName != null) {
            h.set(target.credentialName, target.credentialValue);
        }
        if (target.tokens != null) {
            // ProxyExchange started this request only once a valid token existed; one expiring meanwhile is refreshed
            // by the next request and the upstream's 401 is retried like any failure.
            AsciiString bearer = target.tokens.header();
            if (bearer != null) {
                h.set(HttpHeaderNames.AUTHORIZATION, bearer);
            }
        }
        return out;
    }

    /** The body that follows {@link #head}: a duplicate of {@code body} (retained), which the encoder consumes. */
    static LastHttpContent body(ByteBuf body) {
        return new DefaultLastHttpContent(body.retainedDuplicate(), EmptyHttpHeaders.INSTANCE);
    }

    /**
     * How many headers {@link #head} sets, near enough for one array: the five every request has, the credential,
     * the access token, the target's extras, the Anthropic version (and one beta line), the trace pair, and two of
     * those forwarded (more only grow the array once).
     */
    private static int headerRoom(UpstreamTarget target, ProviderConfig provider, GatewayRequest request) {
        return 5 + (target.credentialName != null ? 1 : 0) + (target.tokens != null ? 1 : 0) + target.extraNames.length
                + (provider.type().style() == ApiStyle.ANTHROPIC ? 2 : 0) + (request.trace() != null ? 2 : 0)
                + (provider.forwardHeaders().isEmpty() ? 0 : 2);
    }

    /**
     * The upstream's endpoint: the caller's, or the chat endpoint of the upstream's style when translating (the other
     * style's, or a Responses request for a provider without the Responses API).
     */
    static Endpoint endpoint(ProviderConfig provider, GatewayRequest request) {
        Endpoint caller = request.endpoint();
        ApiStyle upstreamStyle = provider.type().style();
        if (caller == Endpoint.RESPONSES || caller == Endpoint.RESPONSES_INPUT_TOKENS) {
            if (provider.responsesApi()) {
                return caller;
            }
        } else if (caller == Endpoint.EMBEDDINGS || upstreamStyle == caller.style()) {
            return caller;
        }
        return upstreamStyle == ApiStyle.ANTHROPIC ? Endpoint.MESSAGES : Endpoint.CHAT_COMPLETIONS;
    }
}
