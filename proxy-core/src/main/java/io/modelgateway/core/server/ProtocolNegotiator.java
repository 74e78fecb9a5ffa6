package io.modelgateway.core.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Right after the TLS handler of a TLS listener: once the handshake is done, builds the pipeline of the protocol
 * the client and the gateway agreed on by ALPN ({@code h2}, or {@code http/1.1}, also for a client that offered
 * none), then steps aside. A failed handshake (a scanner, a client that does not trust the certificate) closes the
 * connection with one debug line. A drain before the handshake ends closes the connection.
 */
final class ProtocolNegotiator extends ApplicationProtocolNegotiationHandler {
    private static final Logger LOG = Logger.getLogger(ProtocolNegotiator.class.getName());

    private final PriorKnowledgeDetector.Protocols protocols;

    ProtocolNegotiator(PriorKnowledgeDetector.Protocols protocols) {
        super(ApplicationProtocolNames.HTTP_1_1);
        this.protocols = protocols;
    }

    @Override
    protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
        if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
            protocols.http2(ctx);
        } else if (ApplicationProtocolNames.HTTP_1_1.equals(protocol)) {
            protocols.http1(ctx);
        } else {
            ctx.close(); // the context offers nothing else: a client that insists on another protocol
        }
    }

    @Override
    protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(Level.FINE, "TLS handshake with " + ctx.channel().remoteAddress() + " failed", cause);
        ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() instanceof javax.net.ssl.SSLException) {
            super.exceptionCaught(ctx, cause); // the handshake failed: handshakeFailure above
            return;
        }
        // Reset by the peer before the handshake ended, and the like: nothing for the operator's log.
        LOG.log(Level.FINE, "connection from " + ctx.channel().remoteAddress() + " failed before its protocol was"
                + " chosen", cause);
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt == StreamGuard.DRAIN || evt == StreamGuard.DRAIN_DEADLINE) {
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }
}
