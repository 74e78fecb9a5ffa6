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
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.time.format.DateTimeFormatter;

/**
 * Answers {@code GET /api/v1/models} (after authentication), listing the models the caller's key may use: in the
 * OpenAI list shape, or in Anthropic's ({@code data[]} of {@code type: "model"} with {@code display_name} and
 * {@code created_at}, {@code has_more}, {@code first_id}, {@code last_id}) when the request carries
 * {@code anthropic-version}, as Anthropic's SDKs send it. Other requests pass through untouched.
 */
@ChannelHandler.Sharable
public final class ModelListResponder extends ChannelInboundHandlerAdapter {
    private static final JsonFactory JSON = new JsonFactory();
    private static final AsciiString ANTHROPIC_VERSION = AsciiString.cached("anthropic-version");
    private final Exchanges exchanges;
    /**
     * The models' {@code created} (and {@code created_at}): when this responder was made, once per listener (it is
     * shared by every connection), so every caller sees the same value until the gateway restarts.
     */
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
            ByteBuf body = request.headers().contains(ANTHROPIC_VERSION)
                    ? renderAnthropic(ctx, request.config(), request.key())
                    : render(ctx, request.config(), request.key());
            HttpResponses.sendJson(ctx, HttpResponseStatus.OK, body, request.requestId(), request.keepAlive());
        } finally {
            exchanges.end(request, Outcome.DONE);
            request.release();
        }
    }

    private ByteBuf renderAnthropic(ChannelHandlerContext ctx, GatewayConfig config, KeyConfig key)
            throws IOException {
        ByteBuf buf = ctx.alloc().buffer(256);
        try (JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(buf), JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeArrayFieldStart("data");
            String createdAt = DateTimeFormatter.ISO_INSTANT.format(Instant.ofEpochSecond(created));
            String first = null;
            String last = null;
            for (ModelConfig m : config.models().values()) {
                if (!key.allowsModel(m.name())) {
                    continue;
                }
                first = first == null ? m.name() : first;
                last = m.name();
                g.writeStartObject();
                g.writeStringField("type", "model");
                g.writeStringField("id", m.name());
                g.writeStringField("display_name", m.name());
                g.writeStringField("created_at", createdAt);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeBooleanField("has_more", false);
            g.writeStringField("first_id", first);
            g.writeStringField("last_id", last);
            g.writeEndObject();
        } catch (IOException | RuntimeException e) {
            buf.release();
            throw e;
        }
        return buf;
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
