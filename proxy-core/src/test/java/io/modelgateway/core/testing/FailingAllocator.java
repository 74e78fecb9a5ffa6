package io.modelgateway.core.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * An allocator that fails on demand, as an exhausted direct memory does: set on one channel
 * ({@code ch.config().setAllocator(...)}), it lets a test make every buffer (or only composite buffers) that
 * channel's handlers ask for throw {@link OutOfMemoryError} from a chosen moment on.
 */
public final class FailingAllocator implements ByteBufAllocator {
    public enum Fail {
        /** Nothing fails. */
        NONE,
        /** Composite buffers fail (what the SSE scanner asks for when an event spans reads). */
        COMPOSITE,
        /** Plain buffers fail (what the HTTP encoder asks for when it writes to the client). */
        BUFFERS
    }

    private final ByteBufAllocator delegate = ByteBufAllocator.DEFAULT;
    private volatile Fail fail;

    public FailingAllocator(Fail fail) {
        this.fail = fail;
    }

    public void fail(Fail fail) {
        this.fail = fail;
    }

    private void check(Fail kind) {
        if (fail == kind) {
            throw new OutOfMemoryError("test: failed to allocate (" + kind + ")");
        }
    }

    @Override
    public ByteBuf buffer() {
        check(Fail.BUFFERS);
        return delegate.buffer();
    }

    @Override
    public ByteBuf buffer(int initialCapacity) {
        check(Fail.BUFFERS);
        return delegate.buffer(initialCapacity);
    }

    @Override
    public ByteBuf buffer(int initialCapacity, int maxCapacity) {
        check(Fail.BUFFERS);
        return delegate.buffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf ioBuffer() {
        check(Fail.BUFFERS);
        return delegate.ioBuffer();
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity) {
        check(Fail.BUFFERS);
        return delegate.ioBuffer(initialCapacity);
    }

    @Override
    public ByteBuf ioBuffer(int initialCapacity, int maxCapacity) {
        check(Fail.BUFFERS);
        return delegate.ioBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf heapBuffer() {
        check(Fail.BUFFERS);
        return delegate.heapBuffer();
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity) {
        check(Fail.BUFFERS);
        return delegate.heapBuffer(initialCapacity);
    }

    @Override
    public ByteBuf heapBuffer(int initialCapacity, int maxCapacity) {
        check(Fail.BUFFERS);
        return delegate.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public ByteBuf directBuffer() {
        check(Fail.BUFFERS);
        return delegate.directBuffer();
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity) {
        check(Fail.BUFFERS);
        return delegate.directBuffer(initialCapacity);
    }

    @Override
    public ByteBuf directBuffer(int initialCapacity, int maxCapacity) {
        check(Fail.BUFFERS);
        return delegate.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public CompositeByteBuf compositeBuffer() {
        check(Fail.COMPOSITE);
        return delegate.compositeBuffer();
    }

    @Override
    public CompositeByteBuf compositeBuffer(int maxNumComponents) {
        check(Fail.COMPOSITE);
        return delegate.compositeBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer() {
        check(Fail.COMPOSITE);
        return delegate.compositeHeapBuffer();
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        check(Fail.COMPOSITE);
        return delegate.compositeHeapBuffer(maxNumComponents);
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer() {
        check(Fail.COMPOSITE);
        return delegate.compositeDirectBuffer();
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        check(Fail.COMPOSITE);
        return delegate.compositeDirectBuffer(maxNumComponents);
    }

    @Override
    public boolean isDirectBufferPooled() {
        return delegate.isDirectBufferPooled();
    }

    @Override
    public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
        return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
    }
}
