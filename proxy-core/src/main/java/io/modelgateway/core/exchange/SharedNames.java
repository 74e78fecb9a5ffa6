package io.modelgateway.core.exchange;

import io.netty.util.AsciiString;
import java.util.Arrays;

/**
 * A fixed set of header names a decoder hands out as shared constants when a message spells one of them exactly
 * (byte for byte: a name in another case is not one of them), so that a common name costs no object of its own per
 * message. Looked up by length, then by the bytes of the few names of that length. Immutable; any thread.
 */
public final class SharedNames {
    /** The names by length: the names of length n, and their bytes. */
    private final AsciiString[][] names;
    private final byte[][][] bytes;

    public SharedNames(AsciiString... shared) {
        int longest = 0;
        for (AsciiString n : shared) {
            longest = Math.max(longest, n.length());
        }
        names = new AsciiString[longest + 1][0];
        bytes = new byte[longest + 1][0][];
        for (AsciiString n : shared) {
            int l = n.length();
            if (l == 0) {
                throw new IllegalArgumentException("an empty name");
            }
            if (find(n.toByteArray(), 0, l) != null) {
                throw new IllegalArgumentException("named twice: " + n);
            }
            names[l] = Arrays.copyOf(names[l], names[l].length + 1);
            names[l][names[l].length - 1] = n;
            bytes[l] = Arrays.copyOf(bytes[l], bytes[l].length + 1);
            bytes[l][bytes[l].length - 1] = n.toByteArray();
        }
    }

    /** The shared name spelled as {@code b[start, start + length)}, or null. */
    public AsciiString find(byte[] b, int start, int length) {
        if (length >= names.length) {
            return null;
        }
        byte[][] candidates = bytes[length];
        if (candidates.length == 0) {
            return null;
        }
        byte first = b[start];
        byte last = b[start + length - 1];
        for (int i = 0; i < candidates.length; i++) {
            byte[] c = candidates[i];
            // The ends first: most names that are not shared differ there, at the cost of two loads.
            if (c[0] == first && c[length - 1] == last && Arrays.equals(c, 0, length, b, start, start + length)) {
                return names[length][i];
            }
        }
        return null;
    }
}
