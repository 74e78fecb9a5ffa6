package io.modelgateway.core.exchange;

import io.modelgateway.codecs.ApiStyle;
import io.modelgateway.codecs.Endpoint;

/** What a request's path says before anything else is known: the path itself, and the style its errors take. */
public final class ApiPaths {
    private ApiPaths() {
    }

    /** The path without its query string (GD-3: query strings such as {@code ?beta=true} are ignored). */
    public static String path(String uri) {
        int q = uri.indexOf('?');
        String p = q >= 0 ? uri.substring(0, q) : uri;
        int hash = p.indexOf('#');
        return hash >= 0 ? p.substring(0, hash) : p;
    }

    /** Error bodies under {@code /api/v1/messages} are Anthropic style; everything else OpenAI style (contract 1.1). */
    public static ApiStyle styleForPath(String path) {
        return path.startsWith(Endpoint.MESSAGES.gatewayPath()) ? ApiStyle.ANTHROPIC : ApiStyle.OPENAI;
    }
}
