package io.modelgateway.core.upstream;

import io.modelgateway.codecs.Endpoint;
import io.modelgateway.core.config.AzureSettings;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;

/**
 * The request paths of an {@code azure_openai} provider, part of its {@link UpstreamTarget} (so one per provider per
 * event loop, confined to it: no lock). The v1 form has one path per endpoint, made here once
 * ({@code /openai/v1/chat/completions}); the deployment form has one per deployment and endpoint
 * ({@code /openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21}), each made on its deployment's first
 * request and kept, so a request costs one map lookup and no string building.
 */
final class AzurePaths {
    /** More deployments than any config names: past it the map is simply emptied (a reload brings new targets). */
    private static final int MAX_DEPLOYMENTS = 1024;

    /** The v1 form's paths by endpoint; null in the deployment form. */
    private final String[] v1;
    /** {@code ?api-version=…}; null in the v1 form. */
    private final String query;
    private final HashMap<String, String[]> byDeployment;

    AzurePaths(AzureSettings azure) {
        if (azure.v1()) {
            v1 = new String[Endpoint.values().length];
            for (Endpoint e : Endpoint.values()) {
                v1[e.ordinal()] = "/openai/v1" + e.upstreamSuffix();
            }
            query = null;
            byDeployment = null;
        } else {
            v1 = null;
            // The version was checked at load (digits, '-', "preview"): nothing in it needs encoding.
            query = "?api-version=" + azure.apiVersion();
            byDeployment = new HashMap<>();
        }
    }

    /** The path (and query) of {@code endpoint} for {@code deployment}, the deployment's upstream model name. */
    String path(Endpoint endpoint, String deployment) {
        if (v1 != null) {
            return v1[endpoint.ordinal()];
        }
        String[] paths = byDeployment.get(deployment);
        if (paths == null) {
            if (byDeployment.size() >= MAX_DEPLOYMENTS) {
                byDeployment.clear();
            }
            paths = new String[Endpoint.values().length];
            String prefix = "/openai/deployments/" + encode(deployment);
            for (Endpoint e : Endpoint.values()) {
                paths[e.ordinal()] = prefix + e.upstreamSuffix() + query;
            }
            byDeployment.put(deployment, paths);
        }
        return paths[endpoint.ordinal()];
    }

    /**
     * A deployment name as one path segment. Azure's names use letters, digits, '-', '_' and '.', which pass as they
     * are; anything else is percent-encoded (UTF-8), so no name can add a segment or a query to the path ("." and
     * "..", which would be read as path steps, are encoded whole). Runs once per deployment, not per request.
     */
    static String encode(String deployment) {
        boolean dots = deployment.equals(".") || deployment.equals("..");
        StringBuilder out = new StringBuilder(deployment.length() + 8);
        for (byte raw : deployment.getBytes(StandardCharsets.UTF_8)) {
            int b = raw & 0xff;
            boolean plain = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
                    || b == '-' || b == '_' || b == '~' || b == '.' && !dots;
            if (plain) {
                out.append((char) b);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return out.toString();
    }
}
