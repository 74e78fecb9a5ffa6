package io.modelgateway.core.limit.shared;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One Lua script of the shared limits, read from this package's resources once: its body, and the SHA-1 that
 * {@code EVALSHA} names it by. The SHA is computed here, so a call never waits for {@code SCRIPT LOAD} to say it;
 * a {@link RedisLink} loads every script when it connects and answers {@code NOSCRIPT} (a Redis restarted or
 * flushed since) by sending the body once with {@code EVAL}, which also caches it again.
 */
public final class LuaScript {
    private final String name;
    private final byte[] body;
    private final byte[] sha;

    private LuaScript(String name, byte[] body) {
        this.name = name;
        this.body = body;
        try {
            this.sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(body))
                    .getBytes(StandardCharsets.US_ASCII);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JVM", e);
        }
    }

    /** The script {@code resource} (e.g. {@code admit.lua}) of this package. */
    public static LuaScript load(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("script " + resource + " is missing from the jar");
            }
            return new LuaScript(resource, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String name() {
        return name;
    }

    /** The body, not to be changed. */
    byte[] body() {
        return body;
    }

    /** The lower-case hex SHA-1 of the body, as ASCII bytes; not to be changed. */
    byte[] sha() {
        return sha;
    }

    public String shaHex() {
        return new String(sha, StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
        return name;
    }
}
