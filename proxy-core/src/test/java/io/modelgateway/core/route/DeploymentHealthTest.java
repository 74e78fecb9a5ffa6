package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.CooldownConfig;
import org.junit.jupiter.api.Test;

/** The cool-down circuit of one deployment, on a fake clock (nanoseconds passed in). */
class DeploymentHealthTest {
    private static final long S = 1_000_000_000L;
    private static final CooldownConfig COOLDOWN = new CooldownConfig(3, 30);
    private final DeploymentHealth health = new DeploymentHealth();

    private void fail(int times, long now) {
        for (int i = 0; i < times; i++) {
            health.failed(false, now, COOLDOWN);
        }
    }

    @Test
    void failures_belowTheThreshold_keepItAvailable() {
        fail(2, 0);
        assertThat(health.availability(0, COOLDOWN)).isEqualTo(DeploymentHealth.AVAILABLE);
        assertThat(health.consecutiveFailures()).isEqualTo(2);
    }

    @Test
    void success_resetsTheCount() {
        fail(2, 0);
        health.succeeded();
        fail(2, S);
        assertThat(health.availability(S, COOLDOWN)).isEqualTo(DeploymentHealth.AVAILABLE);
    }

    @Test
    void thresholdReached_coolsDownForItsPeriod_thenLetsOneProbeThrough() {
        fail(3, 10 * S);
        assertThat(health.availability(10 * S, COOLDOWN)).isEqualTo(DeploymentHealth.COOLING);
        assertThat(health.availability(39 * S, COOLDOWN)).isEqualTo(DeploymentHealth.COOLING);
        assertThat(health.availability(40 * S, COOLDOWN)).isEqualTo(DeploymentHealth.PROBE);

        assertThat(health.tryProbe(40 * S, COOLDOWN)).isTrue();
        assertThat(health.tryProbe(40 * S, COOLDOWN)).isFalse();
        assertThat(health.availability(41 * S, COOLDOWN)).isEqualTo(DeploymentHealth.COOLING);
    }

    @Test
    void probeSucceeds_closesTheCircuit() {
        fail(3, 0);
        assertThat(health.tryProbe(30 * S, COOLDOWN)).isTrue();
        health.succeeded();
        assertThat(health.availability(30 * S, COOLDOWN)).isEqualTo(DeploymentHealth.AVAILABLE);
        assertThat(health.consecutiveFailures()).isZero();
        fail(2, 31 * S);
        assertThat(health.availability(31 * S, COOLDOWN)).isEqualTo(DeploymentHealth.AVAILABLE);
    }

    @Test
    void probeFails_opensItAgainForAWholePeriod() {
        fail(3, 0);
        assertThat(health.tryProbe(30 * S, COOLDOWN)).isTrue();
        health.failed(true, 31 * S, COOLDOWN);
        assertThat(health.availability(60 * S, COOLDOWN)).isEqualTo(DeploymentHealth.COOLING);
        assertThat(health.availability(61 * S, COOLDOWN)).isEqualTo(DeploymentHealth.PROBE);
        assertThat(health.tryProbe(61 * S, COOLDOWN)).isTrue();
    }

    @Test
    void probeCancelled_letsTheNextRequestProbe() {
        fail(3, 0);
        assertThat(health.tryProbe(30 * S, COOLDOWN)).isTrue();
        health.releaseProbe();
        assertThat(health.availability(30 * S, COOLDOWN)).isEqualTo(DeploymentHealth.PROBE);
        assertThat(health.tryProbe(30 * S, COOLDOWN)).isTrue();
    }

    @Test
    void probeThatNeverReports_isPresumedLostAfterAPeriod() {
        fail(3, 0);
        assertThat(health.tryProbe(30 * S, COOLDOWN)).isTrue();
        assertThat(health.tryProbe(59 * S, COOLDOWN)).isFalse();
        assertThat(health.availability(60 * S, COOLDOWN)).isEqualTo(DeploymentHealth.PROBE);
        assertThat(health.tryProbe(60 * S, COOLDOWN)).isTrue();
    }

    @Test
    void cooldownOff_neverSkips() {
        fail(100, 0);
        assertThat(health.availability(0, CooldownConfig.OFF)).isEqualTo(DeploymentHealth.AVAILABLE);
        // A reload that turns it off applies at once, even to a deployment cooling down under the old setting.
        DeploymentHealth other = new DeploymentHealth();
        for (int i = 0; i < 3; i++) {
            other.failed(false, 0, COOLDOWN);
        }
        assertThat(other.availability(S, COOLDOWN)).isEqualTo(DeploymentHealth.COOLING);
        assertThat(other.availability(S, CooldownConfig.OFF)).isEqualTo(DeploymentHealth.AVAILABLE);
    }

    @Test
    void inFlight_countsStartsAndEnds() {
        health.started();
        health.started();
        health.ended();
        assertThat(health.inFlight()).isEqualTo(1);
    }

    @Test
    void concurrentFailuresAndProbes_fromManyThreads_admitOneProbeAtATime() throws Exception {
        fail(3, 0);
        int threads = 4;
        java.util.concurrent.atomic.AtomicInteger probes = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        Thread[] all = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            all[t] = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 10_000; i++) {
                    if (health.tryProbe(30 * S, COOLDOWN)) {
                        probes.incrementAndGet();
                    }
                }
            });
            all[t].start();
        }
        go.countDown();
        for (Thread t : all) {
            t.join();
        }
        assertThat(probes.get()).isEqualTo(1);
    }
}
