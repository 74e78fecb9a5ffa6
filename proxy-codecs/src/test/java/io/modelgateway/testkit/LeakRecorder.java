package io.modelgateway.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns Netty's leak reports into test failures. Netty only logs a leak; this records it so that
 * {@link LeakCheckExtension} can fail the test class in which it surfaced. The factory must be set
 * before the first {@code ByteBuf} class is initialised, which {@link LeakDetectionSessionListener}
 * does at the start of the launcher session.
 */
public final class LeakRecorder {
    private static final List<String> LEAKS = new ArrayList<>();
    private static volatile boolean installed;

    private LeakRecorder() {
    }

    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                    long maxActive) {
                return new RecordingDetector<>(resource, samplingInterval);
            }
        });
    }

    /** Makes unreachable tracked buffers visible to the detector, then returns and clears what it reported. */
    public static List<String> collect() {
        for (int round = 0; round < 3; round++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            // Every tracked allocation polls the detector's reference queue and reports what it finds.
            for (ByteBufAllocator alloc : new ByteBufAllocator[] {PooledByteBufAllocator.DEFAULT,
                    UnpooledByteBufAllocator.DEFAULT}) {
                for (int i = 0; i < 4; i++) {
                    ByteBuf a = alloc.directBuffer(8);
                    ByteBuf b = alloc.heapBuffer(8);
                    a.release();
                    b.release();
                }
            }
        }
        synchronized (LEAKS) {
            List<String> out = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return out;
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected boolean needReport() {
            return true;
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            record("LEAK: " + resourceType + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            record("LEAK: " + resourceType + " (untraced)");
            super.reportUntracedLeak(resourceType);
        }

        private static void record(String leak) {
            synchronized (LEAKS) {
                LEAKS.add(leak);
            }
        }
    }
}
