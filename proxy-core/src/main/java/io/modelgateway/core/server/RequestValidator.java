package io.modelgateway.core.server;

import io.netty.channel.ChannelHandler;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;
import io.modelgateway.codecs.error.GatewayError;
import io.modelgateway.codecs.json.RequestPeek;
import io.modelgateway.core.exchange.ArrayHttpHeaders;
import io.modelgateway.core.exchange.Exchanges;
import io.modelgateway.core.exchange.GatewayRequest;
import io.modelgateway.core.exchange.RequestStep;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

/**
 * Request step: is this a well-formed request of its endpoint? On the messages endpoint the API version header
 * (GD-2); then the body, read once by the streaming peek ({@link RequestPeek}: JSON, the fields routing and limits
 * need, their types, duplicate keys). A request that fails is answered 400 in its style and released here; one
 * that passes goes on carrying its {@link GatewayRequest#peek peek}. The model list ({@code GET}) has no body and
 * passes untouched. Event-loop confined, stateless.
 */
@ChannelHandler.Sharable
public final class RequestValidator extends RequestStep {
    private static final String FIRST_VERSION = "2023-06-01";
    /** The first version date whose messages may carry {@code role: "system"} (contract 5.11). */
    private static final String SYSTEM_ROLE_VERSION = "2026-10-21";
    /** The version header and its alias, in the order a first value is taken from. */
    private static final AsciiString[] VERSION_HEADERS = {
            AsciiString.cached("anthropic-version"), AsciiString.cached("vendor-version")};

    public RequestValidator(Exchanges exchanges) {
        super(exchanges);
    }

    @Override
    protected GatewayError check(GatewayRequest request) {
        Endpoint endpoint = request.endpoint();
        boolean systemRole = false;
        if (endpoint.style() == ApiStyle.ANTHROPIC) {
            GatewayError versionError = checkVersion(request);
            if (versionError != null) {
                return versionError;
            }
            systemRole = request.anthropicVersion().trim().compareTo(SYSTEM_ROLE_VERSION) >= 0;
        }
        RequestPeek peek = RequestPeek.peek(endpoint, request.body(), systemRole);
        if (!peek.ok()) {
            return peek.error();
        }
        request.peek(peek);
        return null;
    }

    /**
     * GD-2: a messages request names its API version in {@code anthropic-version}, or in {@code vendor-version}
     * (the neutral name the API specification uses, accepted as an alias). Every value sent, under either name,
     * must be the same version — else 400, since the gateway would check one and could forward another — and it
     * must be {@value #FIRST_VERSION} or a later {@code YYYY-MM-DD}. On success the value as sent is kept on the
     * request (what an Anthropic-type upstream gets) and null is returned.
     */
    static GatewayError checkVersion(GatewayRequest request) {
        String version = null;
        AsciiString from = null;
        for (AsciiString name : VERSION_HEADERS) {
            HttpHeaders headers = request.headers();
            for (int at = ArrayHttpHeaders.nextValue(headers, name, 0); at >= 0;
                    at = ArrayHttpHeaders.nextValue(headers, name, at + 1)) {
                // The decoder's String (HTTP/1.1): the same object.
                String v = ArrayHttpHeaders.valueAt(headers, name, at).toString();
                if (version == null) {
                    version = v;
                    from = name;
                } else if (!v.trim().equals(version.trim())) {
                    return GatewayError.invalid((from == name ? "two " + name + " headers" : from + " and " + name)
                            + " carry different versions ('"
                            + abbreviate(version.trim()) + "', '" + abbreviate(v.trim()) + "'); send one version.",
                            null, "invalid_value");
                }
            }
        }
        if (version == null || version.isBlank()) {
            return GatewayError.invalid("anthropic-version: header is required (vendor-version is accepted as an "
                    + "alias)", null, "missing_required_header");
        }
        String trimmed = version.trim();
        if (!isDate(trimmed) || trimmed.compareTo(FIRST_VERSION) < 0) {
            return GatewayError.invalid(from + ": '" + abbreviate(trimmed)
                    + "' is not a supported version; use 2023-06-01 or a later date.", null, "invalid_value");
        }
        request.anthropicVersion(version);
        return null;
    }

    /** Whether {@code s} is shaped {@code YYYY-MM-DD}: ten characters, ASCII digits and two dashes. */
    static boolean isDate(String s) {
        if (s.length() != 10 || s.charAt(4) != '-' || s.charAt(7) != '-') {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            char c = s.charAt(i);
            if (i != 4 && i != 7 && (c < '0' || c > '9')) {
                return false;
            }
        }
        return true;
    }

    private static String abbreviate(String s) {
        return s.length() > 100 ? s.substring(0, 100) + "…" : s;
    }
}
