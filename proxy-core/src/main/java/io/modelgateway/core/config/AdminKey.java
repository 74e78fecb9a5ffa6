package io.modelgateway.core.config;

import java.security.MessageDigest;

/**
 * The key that opens the admin listener's dashboard ({@code admin.key}): only its SHA-256 is kept, compared in
 * constant time, and nothing here ever prints it ({@link #toString} says only that there is one).
 */
public final class AdminKey {
    private final byte[] sha256;

    /** @param sha256 the 32-byte SHA-256 of the key; copied */
    public AdminKey(byte[] sha256) {
        if (sha256 == null || sha256.length != 32) {
            throw new IllegalArgumentException("an admin key hash must be 32 bytes");
        }
        this.sha256 = sha256.clone();
    }

    /** Whether {@code presented} is the key; the comparison takes the same time wherever the hashes differ. */
    public boolean matches(String presented) {
        return presented != null && !presented.isEmpty()
                && MessageDigest.isEqual(sha256, KeyConfig.sha256(presented));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdminKey other && MessageDigest.isEqual(sha256, other.sha256);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(sha256);
    }

    @Override
    public String toString() {
        return "AdminKey[sha256 hidden]";
    }
}
