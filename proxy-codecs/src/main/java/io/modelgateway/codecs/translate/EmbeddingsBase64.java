package io.modelgateway.codecs.translate;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.modelgateway.codecs.error.ErrorKind;
import io.modelgateway.codecs.error.GatewayError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Base64;

/**
 * Embeddings {@code base64} for providers that only return floats: the gateway asks for floats and rewrites
 * the answer token by token (no tree), turning every {@code data[].embedding} number array into the standard
 * Base64 of its float32 little-endian bytes (contract 4.4). Everything else is copied as it is, so
 * {@code index}, order and usage are kept.
 */
public final class EmbeddingsBase64 implements ResponseTranslator {
    private static final JsonFactory JSON = new JsonFactory();

    @Override
    public ByteBuf translate(ByteBufAllocator alloc, ByteBuf upstreamBody) throws TranslationException {
        ByteBuf out = alloc.buffer(Math.max(256, upstreamBody.readableBytes() / 2));
        boolean ok = false;
        try (JsonParser p = JSON.createParser((InputStream) new ByteBufInputStream(upstreamBody.duplicate()));
                JsonGenerator g = JSON.createGenerator((OutputStream) new ByteBufOutputStream(out), JsonEncoding.UTF8)) {
            float[] vector = new float[1536];
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.FIELD_NAME && "embedding".equals(p.currentName()) && p.getParsingContext()
                        .getParent() != null && p.getParsingContext().getParent().inArray()) {
                    g.writeFieldName("embedding");
                    if (p.nextToken() == JsonToken.START_ARRAY) {
                        int n = 0;
                        while (p.nextToken() != JsonToken.END_ARRAY) {
                            if (n == vector.length) {
                                vector = java.util.Arrays.copyOf(vector, n * 2);
                            }
                            vector[n++] = p.getFloatValue();
                        }
                        g.writeString(encode(vector, n));
                    } else {
                        g.copyCurrentStructure(p); // already a string (or something unexpected): leave it
                    }
                } else {
                    g.copyCurrentEvent(p);
                }
            }
            ok = true;
        } catch (IOException | RuntimeException e) {
            throw new TranslationException(new GatewayError(ErrorKind.UPSTREAM_ERROR,
                    "The upstream provider returned an embeddings response the gateway could not read.", null, null));
        } finally {
            if (!ok) {
                out.release();
            }
        }
        return out;
    }

    /** Standard Base64 (with padding) of {@code n} floats as float32 little-endian. */
    public static String encode(float[] v, int n) {
        byte[] bytes = new byte[n * 4];
        for (int i = 0; i < n; i++) {
            int bits = Float.floatToRawIntBits(v[i]);
            bytes[i * 4] = (byte) bits;
            bytes[i * 4 + 1] = (byte) (bits >>> 8);
            bytes[i * 4 + 2] = (byte) (bits >>> 16);
            bytes[i * 4 + 3] = (byte) (bits >>> 24);
        }
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Override
    public StreamTranslator newStream(ByteBufAllocator alloc) {
        throw new UnsupportedOperationException("embeddings do not stream");
    }

    @Override
    public Usage usage() {
        return Usage.ZERO;
    }
}
