package io.modelgateway.codecs.sse;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ByteWordsTest {

    /**
     * Every target byte against words made of bytes next to it in value (b - 1, b + 1, b ^ 0x80, 0x00, 0x7F, 0x80,
     * 0xFF: where borrows and carries of the usual zero-byte trick mark a byte that does not match) and random ones:
     * the mask marks exactly the bytes equal to the target, each by its top bit, checked one byte at a time.
     */
    @Test
    void equalBytes_marksExactlyTheMatchingBytes() {
        SplittableRandom random = new SplittableRandom(13);
        for (int b = 0; b < 256; b++) {
            byte target = (byte) b;
            byte[] near = {target, (byte) (b - 1), (byte) (b + 1), (byte) (b ^ 0x80), 0, 0x7F, (byte) 0x80, (byte) 0xFF};
            for (int n = 0; n < 2_000; n++) {
                byte[] a = new byte[8];
                for (int k = 0; k < 8; k++) {
                    a[k] = random.nextInt(3) == 0 ? (byte) random.nextInt(256) : near[random.nextInt(near.length)];
                }
                long mask = ByteWords.equalBytes(ByteWords.word(a, 0), ByteWords.spread(target));
                for (int k = 0; k < 8; k++) {
                    long byteBits = (mask >>> (8 * k)) & 0xFF;
                    assertThat(byteBits).as("target %d, byte %d of %s", b, k, java.util.Arrays.toString(a))
                            .isEqualTo(a[k] == target ? 0x80L : 0L);
                }
            }
        }
    }

    /** The filter against a byte-by-byte answer: non-zero exactly when some byte is below n, for every n to 128. */
    @Test
    void anyBelow_nonZeroExactlyWhenSomeByteIsBelow() {
        SplittableRandom random = new SplittableRandom(17);
        for (int n = 1; n <= 128; n++) {
            for (int round = 0; round < 3_000; round++) {
                byte[] a = new byte[8];
                boolean below = false;
                for (int k = 0; k < 8; k++) {
                    int pick = random.nextInt(4);
                    int v = pick == 0 ? random.nextInt(256) : pick == 1 ? n - 1 + random.nextInt(3) : pick == 2
                            ? 0x80 + random.nextInt(128) : n + random.nextInt(256 - n);
                    a[k] = (byte) (v & 0xFF);
                    below |= (v & 0xFF) < n;
                }
                long filter = ByteWords.anyBelow(ByteWords.word(a, 0), ByteWords.spread((byte) n));
                assertThat(filter != 0).as("n %d, %s", n, java.util.Arrays.toString(a)).isEqualTo(below);
            }
        }
    }

    @Test
    void word_isLittleEndianAtAnyOffset() {
        byte[] a = {1, 2, 3, 4, 5, 6, 7, 8, 9, (byte) 0xAB};
        assertThat(ByteWords.word(a, 0)).isEqualTo(0x0807060504030201L);
        assertThat(ByteWords.word(a, 2)).isEqualTo(0xAB09080706050403L);
    }
}
