package io.modelgateway.core.route;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelgateway.core.config.GatewayConfig;
import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.Outcome;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Answers {@code GET /api/v1/models} (after authentication) with the OpenAI list shape, listing the models the
 * caller's key may use. Other requests pass through untouched.
 */
public final class ModelListResponder extends ChannelInboundHandlerAdapter {
    private static final JsonFactory JSON = new JsonFactory();
    private final Exchanges exchanges;
    private final long created = System.currentTimeMillis() / 1000;

    public ModelListResponder(Exchanges exchanges) {
        this.exchanges = exchanges;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws IOException {
        if (!(msg instanceof GatewayRequest request) || !request.isModelList()) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            ByteBuf body = render(ctx, request.config(), request.key());
            HttpResponses.sendJson(ctx, HttpResponseStatus.OK, body, request.requestId(), request.keepAlive());
        } finally {
            exchanges.end(request, Outcome.DONE);
            request.release();
        }
    }

    private ByteBuf render(ChannelHandlerContext ctx, GatewayConfig config, KeyConfig key) throws IOException {
        ByteBuf buf = ctx.alloc().buffer(256);
        try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf), JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("object", "list");
            g.writeArrayFieldStart("data");
            for (ModelConfig m : config.models().values()) {
                if (!key.allowsModel(m.name())) {
                    continue;
                }
                g.writeStartObject();
                g.writeStringField("id", m.name());
                g.writeStringField("object", "model");
                g.writeNumberField("created", created);
                g.writeStringField("owned_by", "model-gateway");
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException | RuntimeException e) {
            buf.release();
            throw e;
        }
        return buf;
    }
}
