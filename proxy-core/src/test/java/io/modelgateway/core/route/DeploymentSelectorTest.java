package io.modelgateway.core.route;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelgateway.core.config.CooldownConfig;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.LimitsConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.ModelType;
import io.modelgateway.core.config.ProviderConfig;
import io.modelgateway.core.config.ProviderType;
import io.modelgateway.core.config.RetryConfig;
import io.modelgateway.core.config.RoutingConfig;
import io.modelgateway.core.config.RoutingStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link ModelRoute#select}: strategies, cool-down, a request's own tries, probes; fake clock, seeded random. */
class DeploymentSelectorTest {
    private static final long S = 1_000_000_000L;
    private static final CooldownConfig COOLDOWN = new CooldownConfig(2, 10);
    private static final ProviderConfig PROVIDER = new ProviderConfig("p", ProviderType.SIMULATOR, null, null, Map.of(),
            List.of(), 1000, null, "max_completion_tokens", false, COOLDOWN);
    private final SplittableRandom random = new SplittableRandom(7);

    private static ModelRoute route(RoutingStrategy strategy, int... weights) {
        List<DeploymentConfig> deployments = new ArrayList<>();
        DeploymentHealth[] health = new DeploymentHealth[weights.length];
        for (int i = 0; i < weights.length; i++) {
            deployments.add(new DeploymentConfig(PROVIDER, "d" + i, weights[i]));
            health[i] = new DeploymentHealth();
        }
        ModelConfig model = new ModelConfig("m", ModelType.CHAT, deployments, 0, false, false, false,
                LimitsConfig.NONE, new RoutingConfig(strategy, RetryConfig.DEFAULT, List.of()));
        return new ModelRoute(model, health);
    }

    private static void coolDown(ModelRoute r, int i, long now) {
        for (int k = 0; k < COOLDOWN.failures(); k++) {
            r.health(i).failed(false, now, COOLDOWN);
        }
    }

    private int[] counts(ModelRoute r, int n, long now) {
        int[] counts = new int[r.size()];
        for (int k = 0; k < n; k++) {
            counts[r.select(now, 0, -1, random) & ModelRoute.INDEX]++;
        }
        return counts;
    }

    @Test
    void weighted_followsTheWeights() {
        int[] c = counts(route(RoutingStrategy.WEIGHTED, 3, 1), 20_000, 0);
        assertThat(c[0] / 20_000.0).isBetween(0.72, 0.78);
    }

    @Test
    void coolingDeployment_isSkipped_untilItsProbeIsDue() {
        ModelRoute r = route(RoutingStrategy.WEIGHTED, 1000, 1);
        coolDown(r, 0, 0);
        assertThat(counts(r, 1000, 5 * S)[0]).isZero();
        // After the period: the first selection that lands on it takes the probe, the rest skip it.
        int[] c = counts(r, 1000, 10 * S);
        assertThat(c[0]).isEqualTo(1);
    }

    @Test
    void probePick_isFlagged_andOnlyOne() {
        ModelRoute r = route(RoutingStrategy.WEIGHTED, 1);
        coolDown(r, 0, 0);
        int pick = r.select(10 * S, 0, -1, random);
        assertThat(pick).isEqualTo(ModelRoute.PROBE);
        // Every deployment cooling or probing: the least recently failed is still tried, but not as a probe.
        assertThat(r.select(10 * S, 0, -1, random)).isZero();
    }

    @Test
    void everyDeploymentCooling_triesTheLeastRecentlyFailed() {
        ModelRoute r = route(RoutingStrategy.WEIGHTED, 1, 1, 1);
        coolDown(r, 0, 3 * S);
        coolDown(r, 1, 1 * S);
        coolDown(r, 2, 2 * S);
        assertThat(r.select(4 * S, 0, -1, random)).isEqualTo(1);
    }

    @Test
    void triedDeployments_areAvoided_thenNotTheOneThatJustFailed() {
        ModelRoute r = route(RoutingStrategy.WEIGHTED, 1000, 1, 1);
        for (int k = 0; k < 200; k++) {
            assertThat(r.select(0, 0b001, 0, random)).isIn(1, 2);
            assertThat(r.select(0, 0b011, 1, random)).isEqualTo(2);
            // All tried: anything but the one that just failed.
            assertThat(r.select(0, 0b111, 2, random)).isIn(0, 1);
        }
    }

    @Test
    void oneDeployment_triedAndFailed_isTriedAgain() {
        ModelRoute r = route(RoutingStrategy.WEIGHTED, 1);
        assertThat(r.select(0, 0b1, 0, random)).isZero();
    }

    @Test
    void leastInflight_picksTheLeastBusy() {
        ModelRoute r = route(RoutingStrategy.LEAST_INFLIGHT, 1, 1, 1);
        r.health(0).started();
        r.health(0).started();
        r.health(1).started();
        for (int k = 0; k < 100; k++) {
            assertThat(r.select(0, 0, -1, random)).isEqualTo(2);
        }
    }

    @Test
    void leastInflight_tiesFollowTheWeights() {
        ModelRoute r = route(RoutingStrategy.LEAST_INFLIGHT, 3, 1, 1);
        r.health(2).started();
        int[] c = counts(r, 20_000, 0);
        assertThat(c[2]).isZero();
        assertThat(c[0] / 20_000.0).isBetween(0.72, 0.78);
    }

    @Test
    void leastInflight_spreadsAsExchangesStart() {
        ModelRoute r = route(RoutingStrategy.LEAST_INFLIGHT, 1, 1);
        int[] c = new int[2];
        for (int k = 0; k < 10; k++) {
            int i = r.select(0, 0, -1, random);
            r.health(i).started();
            c[i]++;
        }
        assertThat(c).containsExactly(5, 5);
    }

    @Test
    void leastInflight_skipsCoolingDeploymentsEvenWhenIdle() {
        ModelRoute r = route(RoutingStrategy.LEAST_INFLIGHT, 1, 1);
        r.health(1).started();
        coolDown(r, 0, 0);
        assertThat(r.select(S, 0, -1, random)).isEqualTo(1);
    }
}
