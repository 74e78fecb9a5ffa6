package io.modelgateway.core.upstream;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.DecimalText;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import io.netty.util.CharsetUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.internal.PlatformDependent;
import java.nio.charset.StandardCharsets;
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

    /**
     * A body up to this size goes in the head's buffer: copying it costs less than a duplicate of it and a second
     * buffer in the write (chat requests are mostly smaller; a long prompt is not copied).
     */
    static final int BODY_IN_HEAD = 4096;

    private static final byte[] POST = "POST ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HTTP_1_1 = " HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTENT_LENGTH = "content-length: ".getBytes(StandardCharsets.US_ASCII);

    /** The head {@link #request} builds in, per thread: room for twenty headers, grown if ever needed, kept. */
    private static final FastThreadLocal<ArrayHttpHeaders> SCRATCH = new FastThreadLocal<>() {
        @Override
        protected ArrayHttpHeaders initialValue() {
            return ArrayHttpHeaders.trusted(20);
        }
    };

    private UpstreamRequests() {
    }

    /**
     * The request for {@code body} to the deployment whose model name at the provider is {@code upstreamModel}, as
     * the bytes that go to the connection: its head and, when the body is at most {@link #BODY_IN_HEAD} bytes, the
     * body too (a copy; {@code body} is not retained and stays as it was, for a retry). A larger body follows as
     * {@link #body}. The head is built in a head kept per thread and emptied after use, then written the way Netty's
     * request encoder writes one ({@code content-length} last), so that a request costs one pooled buffer and no
     * objects of its own; {@link UpstreamRequestEncoder} lets the buffer pass.
     */
    static ByteBuf request(ByteBufAllocator alloc, UpstreamTarget target, ProviderConfig provider,
            GatewayRequest request, String upstreamModel, ByteBuf body) {
        String path = target.path(endpoint(provider, request), upstreamModel, request.peek().stream());
        ArrayHttpHeaders h = SCRATCH.get();
        try {
            headers(h, target, provider, request);
            int length = body.readableBytes();
            boolean withBody = bodyInHead(body);
            ByteBuf out = alloc.buffer(POST.length + path.length() + HTTP_1_1.length + h.encodedLength()
                    + CONTENT_LENGTH.length + DecimalText.digitCount(length) + 4 + (withBody ? length : 0));
            try {
                out.writeBytes(POST);
                out.writeCharSequence(path, CharsetUtil.US_ASCII);
                out.writeBytes(HTTP_1_1);
                h.encode(out);
                out.writeBytes(CONTENT_LENGTH);
                DecimalText.write(out, length);
                out.writeInt('\r' << 24 | '\n' << 16 | '\r' << 8 | '\n');
                if (withBody) {
                    copy(body, out, length);
                }
                return out;
            } catch (RuntimeException | Error e) {
                out.release();
                throw e;
            }
        } finally {
            h.clear();
        }
    }

    /**
     * Appends {@code length} readable bytes of {@code body} to {@code out}. Between two buffers with memory addresses
     * (the pooled direct buffers of an event loop) a copy of memory: Netty's {@code writeBytes} from a slice of a
     * pooled buffer makes a {@code java.nio} view of the slice for each copy.
     */
    private static void copy(ByteBuf body, ByteBuf out, int length) {
        if (body.hasMemoryAddress() && out.hasMemoryAddress()) {
            out.ensureWritable(length);
            PlatformDependent.copyMemory(body.memoryAddress() + body.readerIndex(),
                    out.memoryAddress() + out.writerIndex(), length);
            out.writerIndex(out.writerIndex() + length);
        } else {
            out.writeBytes(body, body.readerIndex(), length);
        }
    }

    /** Whether {@link #request} carries {@code body} in its buffer (else {@link #body} follows it). */
    static boolean bodyInHead(ByteBuf body) {
        return body.readableBytes() <= BODY_IN_HEAD;
    }

    /** A body too large for the head's buffer: a duplicate of {@code body} (retained), which the write consumes. */
    static ByteBuf body(ByteBuf body) {
        return body.retainedDuplicate();
    }

    /**
     * The request's headers but {@code content-length}: the gateway's own, the client headers the provider passes
     * on, its extra headers, the Anthropic headers by their own rule, the trace context and the credential, each
     * later one replacing an earlier one of the same name (an extra {@code user-agent} replaces the gateway's).
     */
    static void headers(HttpHeaders h, UpstreamTarget target, ProviderConfig provider, GatewayRequest request) {
        h.set(HttpHeaderNames.HOST, target.host);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
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
