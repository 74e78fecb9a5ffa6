package io.modelgateway.core.exchange;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.uring.IoUring;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link LoopAlarm}: a loop's far timer is posted to the alarm thread (Netty's handler sees no timer, so queues no
 * kernel timeout) and the loop is woken once it is due, never before; a near timer, or none, reaches Netty's handler
 * as it is.
 */
class LoopAlarmTest {
    private static final LoopAlarm ALARM = new LoopAlarm("loop-alarm-test");
    private static final long FAR = TimeUnit.MILLISECONDS.toNanos(40);

    @Test
    void farTimer_hiddenFromTheHandler_andTheLoopWokenOnceItIsDue() throws Exception {
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        Context context = Context.dueIn(FAR);

        loop.run(context);

        assertEquals(-1, handler.deadlineSeen, "Netty's handler must see no timer (it would queue a kernel timeout)");
        assertTrue(handler.woken.await(10, TimeUnit.SECONDS), "the loop is woken for its timer");
        assertTrue(System.nanoTime() - context.deadline >= 0, "never before the timer is due");
        Thread.sleep(50);
        assertEquals(1, handler.wakeups.get(), "one wake-up per posted time");
        loop.destroy();
    }

    @Test
    void nearTimer_goesToTheHandlerAsItIs() {
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        Context context = Context.dueIn(LoopAlarm.MIN_DELAY_NANOS / 10);

        loop.run(context);

        assertSame(context, handler.contextSeen);
        loop.destroy();
    }

    @Test
    void noTimer_orNoSleep_goesToTheHandlerAsItIs() {
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        Context none = new Context(-1, true);
        Context busy = new Context(System.nanoTime() + FAR, false);

        loop.run(none);
        assertSame(none, handler.contextSeen);
        loop.run(busy);
        assertSame(busy, handler.contextSeen);
        loop.destroy();
    }

    @Test
    void sameTimerAfterItsWakeUp_goesToTheHandler_soTheLoopCannotSleepPastIt() throws Exception {
        // The loop was woken for its timer but found it not yet due by Netty's clock (or ran before it): sleeping
        // again with the timer hidden would sleep past it, since the alarm has nothing posted any more.
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        Context context = Context.dueIn(TimeUnit.MILLISECONDS.toNanos(5));
        loop.run(context);
        assertEquals(-1, handler.deadlineSeen);
        assertTrue(handler.woken.await(10, TimeUnit.SECONDS));

        loop.run(context);

        assertSame(context, handler.contextSeen);
        loop.destroy();
    }

    @Test
    void sameFarTimerAgain_isPostedOnce() throws Exception {
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        Context context = Context.dueIn(FAR);

        loop.run(context);
        loop.run(context);
        loop.run(context);

        assertTrue(handler.woken.await(10, TimeUnit.SECONDS));
        Thread.sleep(50);
        assertEquals(1, handler.wakeups.get());
        assertEquals(3, handler.runs.get());
        loop.destroy();
    }

    @Test
    void laterLoopWithAnEarlierTimer_wakesTheSleepingAlarm() throws Exception {
        // The alarm sleeps until the first loop's far timer; a second loop posts an earlier one and must be woken
        // for it, not at the first one's time.
        Recording first = new Recording();
        Recording second = new Recording();
        LoopAlarm.Alarmed a = new LoopAlarm.Alarmed(first, ALARM);
        LoopAlarm.Alarmed b = new LoopAlarm.Alarmed(second, ALARM);
        a.run(Context.dueIn(TimeUnit.SECONDS.toNanos(30)));
        Thread.sleep(20); // the alarm thread is asleep until then

        b.run(Context.dueIn(FAR));

        assertTrue(second.woken.await(10, TimeUnit.SECONDS), "the earlier timer's loop is woken");
        assertEquals(0, first.wakeups.get());
        a.destroy();
        b.destroy();
    }

    @Test
    void destroyedLoop_isNotWoken() throws Exception {
        Recording handler = new Recording();
        LoopAlarm.Alarmed loop = new LoopAlarm.Alarmed(handler, ALARM);
        loop.run(Context.dueIn(TimeUnit.MILLISECONDS.toNanos(20)));

        loop.destroy();
        Thread.sleep(100);

        assertEquals(0, handler.wakeups.get());
        assertTrue(handler.destroyed);
    }

    @Test
    void gatewayGroupOnIoUring_runsTimersOnAnIdleLoop() throws Exception {
        assumeTrue(IoUring.isAvailable(), () -> "io_uring unavailable: " + IoUring.unavailabilityCause());
        assumeTrue(LoopAlarm.enabled());
        MultiThreadIoEventLoopGroup group = Transport.newGatewayGroup(1, "loop-alarm-group-test");
        try {
            for (long ms : new long[] {30, 2, 0, 60}) {
                CountDownLatch ran = new CountDownLatch(1);
                long start = System.nanoTime();
                long[] at = new long[1];
                group.next().schedule(() -> {
                    at[0] = System.nanoTime();
                    ran.countDown();
                }, ms, TimeUnit.MILLISECONDS);
                assertTrue(ran.await(10, TimeUnit.SECONDS), "a " + ms + " ms timer runs on an idle loop");
                assertTrue(at[0] - start >= TimeUnit.MILLISECONDS.toNanos(ms), "not before its time");
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** A loop's context whose one timer is due at {@code deadline} ({@link System#nanoTime}), or none (-1). */
    private record Context(long deadline, boolean canBlock) implements IoHandlerContext {
        static Context dueIn(long nanos) {
            return new Context(System.nanoTime() + nanos, true);
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return deadline == -1 ? TimeUnit.SECONDS.toNanos(1) : Math.max(0, deadline - currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return deadline;
        }
    }

    /** Netty's handler as the wrapper drives it: what context it was given, and the wake-ups. */
    private static final class Recording implements IoHandler {
        final AtomicInteger wakeups = new AtomicInteger();
        final AtomicInteger runs = new AtomicInteger();
        final CountDownLatch woken = new CountDownLatch(1);
        volatile IoHandlerContext contextSeen;
        volatile long deadlineSeen;
        volatile boolean destroyed;

        @Override
        public int run(IoHandlerContext context) {
            runs.incrementAndGet();
            contextSeen = context;
            deadlineSeen = context.deadlineNanos();
            return 0;
        }

        @Override
        public void wakeup() {
            wakeups.incrementAndGet();
            woken.countDown();
        }

        @Override
        public void destroy() {
            destroyed = true;
        }

        @Override
        public IoRegistration register(IoHandle handle) {
            throw new AssertionError("the wrapper registers nothing itself; these tests register no handle");
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return false;
        }
    }
}
