package io.modelgateway.core.upstream;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpRequestEncoder;

/**
 * The encoder of an upstream connection: Netty's request encoder for the requests built as messages (a Bedrock
 * request, signed over its head), and a buffer let through as it is — a request {@link UpstreamRequests#request}
 * already wrote as bytes, or the body that follows it. A connection carries one request at a time and every request
 * the gateway builds as a message is a full one, so the encoder is always between messages when a buffer comes.
 */
final class UpstreamRequestEncoder extends HttpRequestEncoder {
    @Override
    public boolean acceptOutboundMessage(Object msg) throws Exception {
        return !(msg instanceof ByteBuf) && super.acceptOutboundMessage(msg);
    }
}
