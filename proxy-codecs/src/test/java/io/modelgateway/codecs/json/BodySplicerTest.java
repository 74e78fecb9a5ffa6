package io.modelgateway.codecs.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The splice on both sides of its copy limit: a small result is one buffer, a large one a composite of slices; either
 * way its bytes are the original's with each range replaced, checked against a plain array splice.
 */
class BodySplicerTest {

    @Test
    void splice_randomEditsAroundTheCopyLimit_bytesMatchAnArraySplice() {
        Random random = new Random(20261129);
        int[] sizes = {0, 1, 57, 4096, BodySplicer.COPY_LIMIT - 3, BodySplicer.COPY_LIMIT, BodySplicer.COPY_LIMIT + 1,
            BodySplicer.COPY_LIMIT + 40, 3 * BodySplicer.COPY_LIMIT};
        for (int size : sizes) {
            for (int round = 0; round < 25; round++) {
                byte[] original = new byte[size];
                random.nextBytes(original);
                List<BodySplicer.Edit> edits = new ArrayList<>();
                int at = 0;
                while (at <= size && edits.size() < 4 && random.nextInt(3) > 0) {
                    int start = at + random.nextInt(Math.max(1, (size - at) / 3 + 1));
                    if (start > size) {
                        break;
                    }
                    int end = Math.min(size, start + random.nextInt(8));
                    byte[] bytes = new byte[random.nextInt(12)];
                    random.nextBytes(bytes);
                    edits.add(new BodySplicer.Edit(start, end, bytes));
                    at = end + 1;
                }
                List<BodySplicer.Edit> shuffled = new ArrayList<>(edits);
                java.util.Collections.shuffle(shuffled, random); // the splice sorts them itself
                byte[] expected = arraySplice(original, edits);
                ByteBuf body = Unpooled.directBuffer(size + 8).writeBytes(new byte[] {'x', 'y'}).writeBytes(original);
                body.readerIndex(2); // offsets are relative to the reader index
                ByteBuf out = BodySplicer.splice(ByteBufAllocator.DEFAULT, body,
                        shuffled.toArray(BodySplicer.Edit[]::new));
                try {
                    assertThat(ByteBufUtil.getBytes(out)).as("size %d, edits %s", size, edits).isEqualTo(expected);
                    assertThat(out instanceof CompositeByteBuf).as("size %d: composite only past the limit", size)
                            .isEqualTo(expected.length > BodySplicer.COPY_LIMIT);
                    assertThat(body.readerIndex()).isEqualTo(2);
                } finally {
                    out.release();
                }
                assertThat(body.refCnt()).as("the result holds no reference to the body once released").isEqualTo(1);
                body.release();
            }
        }
    }

    @Test
    void splice_overlappingEdits_refusedOnBothSidesOfTheLimit() {
        for (int size : new int[] {100, 2 * BodySplicer.COPY_LIMIT}) {
            ByteBuf body = Unpooled.directBuffer(size).writeZero(size);
            assertThatThrownBy(() -> BodySplicer.splice(ByteBufAllocator.DEFAULT, body,
                    new BodySplicer.Edit(10, 20, new byte[] {1}), new BodySplicer.Edit(15, 30, new byte[0])))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(body.refCnt()).isEqualTo(1);
            body.release();
        }
    }

    private static byte[] arraySplice(byte[] original, List<BodySplicer.Edit> sortedEdits) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        for (BodySplicer.Edit e : sortedEdits) {
            out.write(original, at, e.start() - at);
            out.write(e.bytes(), 0, e.bytes().length);
            at = e.end();
        }
        out.write(original, at, original.length - at);
        return out.toByteArray();
    }
}
