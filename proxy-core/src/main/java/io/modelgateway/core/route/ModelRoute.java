package io.modelgateway.core.route;

import io.modelgateway.core.config.CooldownConfig;
import io.modelgateway.core.config.DeploymentConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.config.RetryConfig;
import io.modelgateway.core.config.RoutingStrategy;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * One configured model as the router sees it: its deployments next to their shared {@link DeploymentHealth},
 * its fallback models resolved, and the choice of a deployment for an attempt. Immutable once its
 * {@link RoutingTable} is built; made once per config, never per request.
 */
public final class ModelRoute {
    /** Set in {@link #select}'s result when the chosen deployment is half-open and this attempt is its probe. */
    static final int PROBE = 1 << 30;
    /** The deployment index in {@link #select}'s result. */
    static final int INDEX = PROBE - 1;

    private final ModelConfig model;
    private final DeploymentConfig[] deployments;
    private final DeploymentHealth[] health;
    private final CooldownConfig[] cooldown;
    private final int[] weights;
    private ModelRoute[] fallbacks = new ModelRoute[0];

    ModelRoute(ModelConfig model, DeploymentHealth[] health) {
        this.model = model;
        List<DeploymentConfig> list = model.deployments();
        this.deployments = list.toArray(DeploymentConfig[]::new);
        this.health = health;
        this.cooldown = new CooldownConfig[deployments.length];
        this.weights = new int[deployments.length];
        for (int i = 0; i < deployments.length; i++) {
            cooldown[i] = deployments[i].provider().cooldown();
            weights[i] = deployments[i].weight();
        }
    }

    /** Resolved by the table once every model has its route. */
    void fallbacks(ModelRoute[] fallbacks) {
        this.fallbacks = fallbacks;
    }

    public ModelConfig model() {
        return model;
    }

    ModelRoute[] fallbacks() {
        return fallbacks;
    }

    RetryConfig retries() {
        return model.routing().retries();
    }

    int size() {
        return deployments.length;
    }

    DeploymentConfig deployment(int i) {
        return deployments[i];
    }

    DeploymentHealth health(int i) {
        return health[i];
    }

    CooldownConfig cooldown(int i) {
        return cooldown[i];
    }

    /**
     * One deployment, never retried, no fallback: the request needs none of the routing machinery (no health
     * to track, nothing to allocate), and goes as it always did.
     */
    public boolean singleAttempt() {
        return deployments.length == 1 && model.routing().retries().max() == 0 && fallbacks.length == 0;
    }

    /**
     * Chooses the deployment of the next attempt, in this order of preference: deployments not cooling down and not
     * yet tried by this request; then, not cooling down, any but the one that just failed; then any not cooling
     * down; and when every deployment is cooling down, the one whose last failure is the oldest — a request is
     * never refused without trying, since the gateway's own "unavailable" helps the caller less than an attempt.
     * Within a preference level the model's strategy decides. A half-open deployment is taken only with its probe
     * slot; when another request holds the slot it is skipped.
     *
     * @param tried bit {@code i} set when deployment {@code i} was already tried by this request
     * @param last  the deployment that just failed, or -1
     * @return the index, with {@link #PROBE} set when the attempt is the deployment's probe
     */
    int select(long now, long tried, int last, RandomGenerator random) {
        long available = 0;
        long halfOpen = 0;
        for (int i = 0; i < deployments.length; i++) {
            int a = health[i].availability(now, cooldown[i]);
            if (a != DeploymentHealth.COOLING) {
                available |= 1L << i;
                if (a == DeploymentHealth.PROBE) {
                    halfOpen |= 1L << i;
                }
            }
        }
        while (true) {
            long candidates = available & ~tried;
            if (candidates == 0 && last >= 0) {
                candidates = available & ~(1L << last);
            }
            if (candidates == 0) {
                candidates = available;
            }
            if (candidates == 0) {
                return leastRecentlyFailed();
            }
            int i = choose(candidates, random);
            if ((halfOpen & (1L << i)) == 0) {
                return i;
            }
            if (health[i].tryProbe(now, cooldown[i])) {
                return i | PROBE;
            }
            available &= ~(1L << i); // another request is probing it
        }
    }

    private int choose(long candidates, RandomGenerator random) {
        if (Long.bitCount(candidates) == 1) {
            return Long.numberOfTrailingZeros(candidates);
        }
        if (model.routing().strategy() == RoutingStrategy.LEAST_INFLIGHT) {
            int min = Integer.MAX_VALUE;
            long least = 0;
            for (long m = candidates; m != 0; m &= m - 1) {
                int i = Long.numberOfTrailingZeros(m);
                int n = health[i].inFlight();
                if (n < min) {
                    min = n;
                    least = 1L << i;
                } else if (n == min) {
                    least |= 1L << i;
                }
            }
            candidates = least;
        }
        return weighted(candidates, random);
    }

    /** Random among {@code candidates}, in proportion to their weights. */
    private int weighted(long candidates, RandomGenerator random) {
        if (Long.bitCount(candidates) == 1) {
            return Long.numberOfTrailingZeros(candidates);
        }
        long total = 0;
        for (long m = candidates; m != 0; m &= m - 1) {
            total += weights[Long.numberOfTrailingZeros(m)];
        }
        long r = random.nextLong(total);
        for (long m = candidates; m != 0; m &= m - 1) {
            int i = Long.numberOfTrailingZeros(m);
            r -= weights[i];
            if (r < 0) {
                return i;
            }
        }
        return 63 - Long.numberOfLeadingZeros(candidates);
    }

    private int leastRecentlyFailed() {
        int best = 0;
        for (int i = 1; i < deployments.length; i++) {
            if (health[i].lastFailure() - health[best].lastFailure() < 0) {
                best = i;
            }
        }
        return best;
    }

    @Override
    public String toString() {
        return "ModelRoute[" + model.name() + "]";
    }
}
