package io.modelgateway.codecs.translate;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The answer side of one translated exchange, made by the request translator so that it knows what the
 * request asked for (include_usage, the GD-14 json_response emulation, shortened tool names, …).
 */
public interface ResponseTranslator {
    /** A complete 2xx non-stream upstream body → the caller's body (a new buffer; the input is borrowed). */
    ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException;

    /** A translator for a 2xx stream. */
    StreamTranslator newStream(ByteBufAllocator alloc);

    /** Token counts of the last {@link #translate} (for accounting). */
    Usage usage();

    /**
     * The usage of the last {@link #translate} when the upstream's body has no usage object the accounting reads
     * itself (an embeddings answer from Google: per-input counts, or none at all); null (the default) when the
     * accounting reads the upstream's body as it passes.
     */
    default Usage answeredUsage() {
        return null;
    }

    /** Whether {@link #answeredUsage()} is the gateway's own estimate rather than the provider's count. */
    default boolean answeredUsageEstimated() {
        return false;
    }
}
