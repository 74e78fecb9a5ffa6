package io.modelgateway.core.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.testing.Eventually;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The per-loop pacing wheel of the simulator's paced streams, on a real event loop and the real clock. */
class PacingWheelTest {
    private final EventLoop loop = new DefaultEventLoop();

    @AfterEach
    void stop() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Waits shorter and longer than the wheel's span (1,024 ticks): each waiter is due once, never early. */
    @Test
    void everyWaiter_isDueExactlyOnce_andNeverBeforeItsDelay() throws Exception {
        Random rnd = new Random(11);
        int n = 2_000;
        long[] delays = new long[n];
        long[] added = new long[n];
        long[] fired = new long[n];
        AtomicInteger firings = new AtomicInteger();
        List<String> problems = new CopyOnWriteArrayList<>();
        loop.submit(() -> {
            PacingWheel wheel = PacingWheel.of(loop);
            for (int i = 0; i < n; i++) {
                int id = i;
                delays[i] = TimeUnit.MICROSECONDS.toNanos(rnd.nextInt(i % 10 == 0 ? 1_500_000 : 60_000) + 1);
                added[i] = System.nanoTime();
                wheel.add(() -> {
                    if (fired[id] != 0) {
                        problems.add("waiter " + id + " was due twice");
                    }
                    fired[id] = System.nanoTime();
                    firings.incrementAndGet();
                }, delays[i]);
            }
        }).sync();
        Eventually.until(Duration.ofSeconds(30), () -> firings.get() == n);
        int waiting = loop.submit(() -> PacingWheel.of(loop).waiting()).get();
        assertThat(waiting).isZero();
        assertThat(problems).isEmpty();
        for (int i = 0; i < n; i++) {
            assertThat(fired[i] - added[i]).as("waiter %d, delay %d ns", i, delays[i]).isGreaterThanOrEqualTo(delays[i]);
        }
    }

    /**
     * A waiter that adds itself again from its own turn with no delay is due in a later tick, not again in the same
     * turn (a stream whose next event is due at once cannot starve the loop); one whose turn fails does not stop
     * the others.
     */
    @Test
    void reAddingFromATurn_isALaterTick_andAFailingWaiterDoesNotStopTheWheel() throws Exception {
        List<Long> ticks = new CopyOnWriteArrayList<>();
        AtomicInteger others = new AtomicInteger();
        loop.submit(() -> {
            PacingWheel wheel = PacingWheel.of(loop);
            wheel.add(() -> {
                throw new IllegalStateException("boom (expected by the test)");
            }, 1);
            for (int i = 0; i < 10; i++) {
                wheel.add(others::incrementAndGet, 1);
            }
            PacingWheel.Waiter[] self = new PacingWheel.Waiter[1];
            self[0] = () -> {
                ticks.add(loop.ticker().nanoTime() / PacingWheel.TICK_NANOS);
                if (ticks.size() < 5) {
                    wheel.add(self[0], 0);
                }
            };
            wheel.add(self[0], 0);
        }).sync();
        Eventually.until(Duration.ofSeconds(10), () -> ticks.size() == 5 && others.get() == 10);
        List<Long> sorted = new ArrayList<>(ticks);
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i)).as("turn %d", i).isGreaterThan(sorted.get(i - 1));
        }
        assertThat(loop.submit(() -> PacingWheel.of(loop).waiting()).get()).isZero();
    }
}
