package io.modelgateway.core.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or the time is up (then fails). */
public final class Eventually {
    private Eventually() {
    }

    public static void until(Duration max, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within " + max);
            }
            Thread.sleep(10);
        }
    }
}
