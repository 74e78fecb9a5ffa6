package io.modelgateway.core.upstream;

import io.modelgateway.codecs.aws.SigV4Signer;
import io.modelgateway.codecs.bedrock.BedrockInvokeBody;
import io.modelgateway.codecs.bedrock.Converse;
import io.modelgateway.codecs.bedrock.BedrockModels;
import io.modelgateway.core.config.AnthropicBeta;
import io.modelgateway.core.config.BedrockSettings;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.HttpResponses;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The Bedrock parts of an {@link UpstreamTarget} (type {@code bedrock}): the Converse request of any other model
 * ({@link Converse#request}), and the InvokeModel request of a Claude model,
 * its path ({@code /model/<id>/invoke} or {@code /invoke-with-response-stream}), its body (the Messages body with
 * {@code anthropic_version: bedrock-2023-05-31} in place of {@code model}, the caller's {@code anthropic-beta} values
 * as {@code anthropic_beta}, no {@code stream}) and its authentication: SigV4 (service {@code bedrock}) over
 * {@code content-type}, {@code host}, {@code x-amz-content-sha256}, {@code x-amz-date} and, with temporary
 * credentials, {@code x-amz-security-token}, the payload hash read from the body's own buffers; or a Bedrock API key
 * as a bearer token.
 *
 * <p>One per provider per event loop (it is part of the target {@link UpstreamPools#target} keeps there), so the
 * signer, whose signing key is cached per UTC day, and the scratch arrays need no lock.
 */
final class BedrockTarget {
    private static final AsciiString X_AMZ_DATE = AsciiString.cached("x-amz-date");
    private static final AsciiString X_AMZ_CONTENT_SHA256 = AsciiString.cached("x-amz-content-sha256");
    private static final AsciiString X_AMZ_SECURITY_TOKEN = AsciiString.cached("x-amz-security-token");
    private static final AsciiString EVENT_STREAM = AsciiString.cached("application/vnd.amazon.eventstream");
    private static final String JSON = "application/json";

    private final SigV4Signer signer;
    private final AsciiString sessionToken;
    private final CharSequence[] names;
    private final CharSequence[] values;
    private final String signedHeaders;

    BedrockTarget(BedrockSettings settings) {
        if (settings.signs()) {
            signer = new SigV4Signer(settings.accessKeyId(), settings.secretAccessKey(), settings.region(),
                    BedrockSettings.SERVICE);
            sessionToken = settings.sessionToken() == null ? null : AsciiString.of(settings.sessionToken());
            names = sessionToken == null
                    ? new CharSequence[] {"content-type", "host", "x-amz-content-sha256", "x-amz-date"}
                    : new CharSequence[] {"content-type", "host", "x-amz-content-sha256", "x-amz-date",
                        "x-amz-security-token"};
            values = new CharSequence[names.length];
            signedHeaders = SigV4Signer.signedHeaders(names, names.length);
        } else {
            signer = null;
            sessionToken = null;
            names = null;
            values = null;
            signedHeaders = null;
        }
    }

    /**
     * An InvokeModel or Converse call: the model, whether it streams, its body (owned by whoever holds the call), and
     * for Converse the stop sequences it asked for (the answer names the one that matched; empty otherwise).
     */
    record Call(String model, BedrockModels.Operation operation, ByteBuf body, List<String> stopSequences) {
    }

    /**
     * The InvokeModel call of a Messages body (borrowed) for {@code request}; null when the body names no model
     * (never for a body the gateway validated or translated).
     */
    static Call call(ByteBufAllocator alloc, ByteBuf messagesBody, GatewayRequest request, ProviderConfig provider) {
        BedrockInvokeBody.Members members = BedrockInvokeBody.scan(messagesBody);
        if (members.model() == null) {
            return null;
        }
        boolean stream = request.peek() != null && request.peek().stream();
        BedrockModels.Operation operation = BedrockModels.Operation.of(members.model(), stream);
        ByteBuf body;
        List<String> stops = List.of();
        if (operation.converse()) {
            try {
                Converse.Request converse = Converse.request(messagesBody, members.model());
                body = io.netty.buffer.Unpooled.wrappedBuffer(converse.body());
                stops = converse.stopSequences();
            } catch (IllegalArgumentException e) {
                return null;
            }
        } else {
            body = BedrockInvokeBody.fromMessages(alloc, messagesBody, members, betas(request, provider));
        }
        return new Call(members.model(), operation, body, stops);
    }

    /**
     * A messages caller's {@code anthropic-beta} values (every header line, comma lists split), narrowed by the
     * provider's {@code anthropic_beta}; a chat caller's never go (its request is the gateway's translation).
     */
    private static List<String> betas(GatewayRequest request, ProviderConfig provider) {
        AnthropicBeta rule = provider.anthropicBeta();
        if (request.anthropicVersion() == null || rule.dropsAll()
                || !request.headers().contains(AnthropicHeaders.ANTHROPIC_BETA)) {
            return List.of();
        }
        List<String> out = new ArrayList<>(2);
        for (String line : request.headers().getAll(AnthropicHeaders.ANTHROPIC_BETA)) {
            String kept = rule.filter(line);
            if (kept == null) {
                continue;
            }
            for (String v : kept.split(",")) {
                String b = v.strip();
                if (!b.isEmpty()) {
                    out.add(b);
                }
            }
        }
        return out;
    }

    /** The signed (or bearer-authenticated) HTTP request of a call; the body is retained here. */
    FullHttpRequest build(UpstreamTarget target, ProviderConfig provider, GatewayRequest request, Call call,
            long nowMillis) {
        String path = BedrockModels.path(call.model(), call.operation());
        ByteBuf body = call.body();
        FullHttpRequest out = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path,
                body.retainedDuplicate(), HttpResponses.TRUSTED_HEADERS, HttpResponses.TRUSTED_HEADERS);
        HttpHeaders h = out.headers();
        h.set(HttpHeaderNames.HOST, target.host);
        h.set(HttpHeaderNames.CONTENT_TYPE, HttpResponses.APPLICATION_JSON);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        h.set(HttpHeaderNames.ACCEPT, call.operation().streams() ? EVENT_STREAM : HttpResponses.APPLICATION_JSON);
        h.set(HttpHeaderNames.USER_AGENT, UpstreamRequests.USER_AGENT);
        h.set(HttpResponses.X_REQUEST_ID, request.requestId());
        if (!provider.forwardHeaders().isEmpty()) {
            Iterator<Map.Entry<CharSequence, CharSequence>> it = request.headers().iteratorCharSequence();
            while (it.hasNext()) {
                Map.Entry<CharSequence, CharSequence> e = it.next();
                if (provider.forwardsHeader(e.getKey()) && !AnthropicHeaders.isAnthropicHeader(e.getKey())
                        && !isAwsHeader(e.getKey())) {
                    h.add(AsciiString.of(e.getKey()).toLowerCase(), e.getValue());
                }
            }
        }
        for (int i = 0; i < target.extraNames.length; i++) {
            h.set(target.extraNames[i], target.extraValues[i]);
        }
        if (request.trace() != null) {
            request.trace().inject(h);
        }
        if (signer == null) {
            if (target.credentialName != null) {
                h.set(target.credentialName, target.credentialValue);
            }
            return out;
        }
        String amzDate = signer.amzDate(nowMillis);
        String hash = signer.payloadHash(body.nioBuffers());
        h.set(X_AMZ_CONTENT_SHA256, hash);
        h.set(X_AMZ_DATE, amzDate);
        values[0] = JSON;
        values[1] = target.host;
        values[2] = hash;
        values[3] = amzDate;
        if (sessionToken != null) {
            values[4] = sessionToken;
            h.set(X_AMZ_SECURITY_TOKEN, sessionToken);
        }
        h.set(HttpHeaderNames.AUTHORIZATION, signer.authorization("POST", BedrockModels.canonicalUri(path), "",
                names, values, names.length, signedHeaders, hash, amzDate));
        return out;
    }

    /** A client header the signature covers, or an AWS one the gateway sets: never forwarded. */
    private static boolean isAwsHeader(CharSequence name) {
        return name.length() > 6 && AsciiString.regionMatches(name, true, 0, "x-amz-", 0, 6);
    }
}
