package io.modelgateway.core.upstream;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.core.config.AnthropicBeta;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.exchange.GatewayRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;
import java.util.List;

/**
 * The Anthropic API headers of an upstream request, by one rule whatever {@code forward_headers} says:
 * <ul>
 *   <li>a messages caller's version ({@code anthropic-version}, or its alias {@code vendor-version}, checked by the
 *       exchange handler) goes to an Anthropic-type provider byte for byte as {@code anthropic-version}, and every
 *       {@code anthropic-beta} value it sent, each header line as sent, narrowed only by the provider's
 *       {@code anthropic_beta} setting;</li>
 *   <li>a chat-completions caller's Anthropic headers are not forwarded: its request was translated by the gateway,
 *       which sends its own {@code anthropic-version: 2023-06-01};</li>
 *   <li>no other provider type is sent any of them (no error: they mean nothing there).</li>
 * </ul>
 */
final class AnthropicHeaders {
    static final AsciiString ANTHROPIC_VERSION = AsciiString.cached("anthropic-version");
    static final AsciiString ANTHROPIC_BETA = AsciiString.cached("anthropic-beta");
    private static final AsciiString VENDOR_VERSION = AsciiString.cached("vendor-version");
    /** The version the gateway's own translated requests are written for. */
    private static final AsciiString GATEWAY_VERSION = AsciiString.cached("2023-06-01");

    private AnthropicHeaders() {
    }

    /** Whether a client header is one of these (kept out of the {@code forward_headers} pass), any case. */
    static boolean isAnthropicHeader(CharSequence name) {
        return AsciiString.contentEqualsIgnoreCase(ANTHROPIC_VERSION, name)
                || AsciiString.contentEqualsIgnoreCase(ANTHROPIC_BETA, name)
                || AsciiString.contentEqualsIgnoreCase(VENDOR_VERSION, name);
    }

    /** Sets the Anthropic headers of a request to {@code provider} on {@code out}; nothing for other types. */
    static void add(HttpHeaders out, ProviderConfig provider, GatewayRequest request) {
        if (provider.type().style() != ApiStyle.ANTHROPIC) {
            return;
        }
        String version = request.anthropicVersion(); // set for messages callers only
        if (version == null) {
            out.set(ANTHROPIC_VERSION, GATEWAY_VERSION);
            return;
        }
        out.set(ANTHROPIC_VERSION, version);
        AnthropicBeta betas = provider.anthropicBeta();
        if (betas.dropsAll()) {
            return;
        }
        if (!request.headers().contains(ANTHROPIC_BETA)) {
            return;
        }
        // getAll keeps the order the lines came in (a name's value iterator runs newest first)
        List<String> values = request.headers().getAll(ANTHROPIC_BETA);
        for (int i = 0; i < values.size(); i++) {
            String kept = betas.filter(values.get(i));
            if (kept != null) {
                out.add(ANTHROPIC_BETA, kept);
            }
        }
    }
}
