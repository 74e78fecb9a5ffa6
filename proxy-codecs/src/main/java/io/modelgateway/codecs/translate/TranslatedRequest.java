package io.modelgateway.codecs.translate;

import io.netty.buffer.ByteBuf;

/**
 * A request in the upstream's style and the translator of its answer.
 *
 * @param body     the upstream request body (owned by the holder: write it or release it)
 * @param stream   whether the upstream request streams
 * @param response translates what the upstream answers
 */
public record TranslatedRequest(ByteBuf body, boolean stream, ResponseTranslator response) {
}
