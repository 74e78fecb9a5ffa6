package io.modelgateway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link DeadlineWheel} on a made-up clock, its timer's runs called by hand (the embedded loop given to it never runs
 * the timer by itself): what it expires is checked against the definition — each entry once, never before its
 * deadline, soon after it on the made-up clock, never once taken out — not against the wall clock.
 */
class DeadlineWheelTest {
    private static final long TICK = DeadlineWheel.TICK_NANOS;

    private long now = 1_000_000_000_000L;

    private final class Probe extends DeadlineWheel.Entry {
        final long deadline;
        final long addedAt;
        final List<Long> expiries = new ArrayList<>();
        Runnable onExpire = () -> { };

        Probe(long deadline) {
            this.deadline = deadline;
            this.addedAt = now;
        }

        @Override
        void expire(long at) {
            expiries.add(at);
            onExpire.run();
        }
    }

    @Test
    void randomDeadlines_overManyTurns_eachExpiredOnce_notBefore_andWithinTwoTicks_removedNever() {
        Random rnd = new Random(17);
        EmbeddedChannel loop = new EmbeddedChannel();
        DeadlineWheel wheel = new DeadlineWheel(loop.eventLoop(), () -> now);
        List<Probe> kept = new ArrayList<>();
        List<Probe> removed = new ArrayList<>();
        long end = now + 4 * DeadlineWheel.SLOTS * TICK; // four turns of the wheel
        while (now < end) {
            for (int k = rnd.nextInt(4); k > 0; k--) {
                // Due anywhere from the past to three turns ahead, often inside the current tick.
                long d = now + (rnd.nextInt(10) == 0 ? -rnd.nextInt((int) TICK)
                        : (long) (rnd.nextDouble() * 3 * DeadlineWheel.SLOTS * TICK));
                Probe p = new Probe(d);
                wheel.add(p, d);
                kept.add(p);
            }
            if (!kept.isEmpty() && rnd.nextInt(5) == 0) {
                Probe p = kept.get(rnd.nextInt(kept.size()));
                if (p.added()) {
                    wheel.remove(p);
                    kept.remove(p);
                    removed.add(p);
                }
            }
            now += 1 + rnd.nextInt((int) TICK); // at most one tick between runs
            wheel.run();
        }
        now += 4 * DeadlineWheel.SLOTS * TICK; // then one long stall: whatever is left is due
        wheel.run();
        assertThat(wheel.size()).isZero();
        for (Probe p : kept) {
            assertThat(p.expiries).as("deadline %d", p.deadline).hasSize(1);
            long at = p.expiries.get(0);
            assertThat(at).isGreaterThanOrEqualTo(p.deadline);
            if (p.deadline < end) {
                // Added in the tick after the last one looked at, then looked at within the next run or two.
                assertThat(at - Math.max(p.deadline, p.addedAt)).as("late by").isLessThan(3 * TICK);
            }
        }
        for (Probe p : removed) {
            assertThat(p.expiries).isEmpty();
        }
        loop.finishAndReleaseAll();
    }

    @Test
    void anExpiryThatAddsItselfAgain_andOneThatRemovesAnother_inTheSameSlot() {
        EmbeddedChannel loop = new EmbeddedChannel();
        DeadlineWheel wheel = new DeadlineWheel(loop.eventLoop(), () -> now);
        long d = now + 5 * TICK;
        Probe again = new Probe(d);
        Probe victim = new Probe(d + 1);
        Probe remover = new Probe(d);
        again.onExpire = () -> {
            if (again.expiries.size() == 1) {
                wheel.add(again, now); // due at once: the next tick's slot, not this one's
            }
        };
        remover.onExpire = () -> wheel.remove(victim);
        // Newest first in a slot: remover, then victim (taken out by remover's expiry, already due), then again.
        wheel.add(again, d);
        wheel.add(victim, d + 1);
        wheel.add(remover, d);
        now = d + 1;
        wheel.run();
        assertThat(remover.expiries).hasSize(1);
        assertThat(victim.expiries).isEmpty();
        assertThat(again.expiries).hasSize(1);
        now += TICK;
        wheel.run();
        assertThat(again.expiries).hasSize(2);
        assertThat(wheel.size()).isZero();
        loop.finishAndReleaseAll();
    }
}
