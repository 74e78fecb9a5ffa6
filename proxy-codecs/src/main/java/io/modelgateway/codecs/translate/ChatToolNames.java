package io.modelgateway.codecs.translate;

import io.modelgateway.codecs.Ids;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * Tool names and ids across the messages → chat translation (GD-22). OpenAI-style upstreams accept tool names
 * of at most 64 characters; a longer name goes up as its first 55 characters, {@code _} and the first 8 hex
 * characters of its SHA-256, and this table turns the short form back into the caller's name in responses
 * and streams.
 *
 * <p>Filled while one request is translated, then only read by that exchange's response and stream
 * translators (same event loop), so a plain map is enough.
 */
final class ChatToolNames {
    static final int MAX_NAME = 64;
    private static final int KEEP = 55;
    private static final int HASH_HEX = 8;

    /** Shortened name → the caller's name; null until a name had to be shortened. */
    private Map<String, String> originals;

    /** The name to send upstream, remembering how to restore it. */
    String upstreamName(String callerName) {
        if (callerName.length() <= MAX_NAME) {
            return callerName;
        }
        String shortName = shorten(callerName);
        if (originals == null) {
            originals = new HashMap<>();
        }
        originals.put(shortName, callerName);
        return shortName;
    }

    /** The caller's name for a name the upstream used (unchanged unless it was shortened by us). */
    String callerName(String upstreamName) {
        if (upstreamName == null) {
            return "";
        }
        if (originals == null) {
            return upstreamName;
        }
        return originals.getOrDefault(upstreamName, upstreamName);
    }

    /** GD-22: first 55 characters + {@code _} + first 8 hex characters of SHA-256(name) = 64 characters. */
    static String shorten(String name) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return name.substring(0, KEEP) + '_' + HexFormat.of().formatHex(digest, 0, HASH_HEX / 2);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * A tool-use id the Anthropic SDKs accept ({@code ^[A-Za-z0-9_-]+$}): kept when it already matches, other
     * characters replaced by {@code _}, a new {@code toolu_} id when the upstream gave none.
     */
    static String toolUseId(String upstreamId) {
        if (upstreamId == null || upstreamId.isEmpty()) {
            return Ids.withPrefix("toolu_");
        }
        char[] chars = null;
        for (int i = 0; i < upstreamId.length(); i++) {
            char c = upstreamId.charAt(i);
            boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-';
            if (!ok) {
                if (chars == null) {
                    chars = upstreamId.toCharArray();
                }
                chars[i] = '_';
            }
        }
        return chars == null ? upstreamId : new String(chars);
    }
}
