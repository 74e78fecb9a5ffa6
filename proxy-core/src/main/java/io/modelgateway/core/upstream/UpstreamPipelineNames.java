package io.modelgateway.core.upstream;

/** Every handler's name in an upstream connection's pipeline (the client side of the gateway), in order. */
public final class UpstreamPipelineNames {
    public static final String TLS = "upstream-tls";
    public static final String ENCODER = "upstream-encoder";
    public static final String DECODER = "upstream-decoder";
    public static final String RECEIVER = "upstream-receiver";

    private UpstreamPipelineNames() {
    }
}
