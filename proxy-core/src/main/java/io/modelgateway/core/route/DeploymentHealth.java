package io.modelgateway.core.route;

import io.modelgateway.core.config.CooldownConfig;
import io.modelgateway.core.observe.DeploymentStates.Rotation;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live state of one deployment (a provider and an upstream model): the exchanges in flight to it, and its
 * cool-down circuit. Shared by every event loop, and by every configured model routed to the same deployment, so
 * it is lock-free: atomics only, each updated on its own (no invariant spans two fields that a reader could see
 * half-updated in a harmful way; the worst a race does is let one extra request through or skip one).
 *
 * <p>The circuit: {@linkplain #failed failures} in a row are counted; at {@link CooldownConfig#failures()} the
 * deployment is <em>open</em> (skipped) for {@link CooldownConfig#seconds()}; after that it is <em>half-open</em>:
 * one probe at a time may go through ({@link #tryProbe}). A success — the upstream began an answer, or refused
 * the request as the request's own fault — closes it; a failure opens it again for another period. A probe that
 * never reports (its client hung on for longer than a whole period) is presumed lost and another may go.
 *
 * <p>Times are {@link System#nanoTime()} values passed in by the caller, so tests drive a fake clock.
 */
public final class DeploymentHealth {
    /** {@link #availability}: take it. */
    static final int AVAILABLE = 0;
    /** {@link #availability}: half-open and no probe running; take it only as the probe. */
    static final int PROBE = 1;
    /** {@link #availability}: cooling down, or half-open with its probe running; skip it. */
    static final int COOLING = 2;

    private static final long CLOSED = Long.MIN_VALUE;
    private static final long NO_PROBE = Long.MIN_VALUE;

    private final AtomicInteger inFlight = new AtomicInteger();
    /** Failures since the last success. */
    private final AtomicInteger failures = new AtomicInteger();
    /** When the cool-down ends (half-open from then on); {@link #CLOSED} while the circuit is closed. */
    private final AtomicLong openUntil = new AtomicLong(CLOSED);
    /** When the running probe started; {@link #NO_PROBE} when none runs. */
    private final AtomicLong probeSince = new AtomicLong(NO_PROBE);
    /** When the last failure was seen: among deployments all cooling down, the least recent is tried. */
    private volatile long lastFailure;
    /** Failures since the gateway started (the dashboard's recent failures are differences of it). */
    private final AtomicLong failuresTotal = new AtomicLong();

    /** {@link #AVAILABLE}, {@link #PROBE} or {@link #COOLING} at {@code now}. */
    int availability(long now, CooldownConfig cooldown) {
        long until = openUntil.get();
        if (until == CLOSED || !cooldown.enabled()) {
            return AVAILABLE;
        }
        if (now - until < 0) {
            return COOLING;
        }
        long probe = probeSince.get();
        return probe == NO_PROBE || now - probe >= cooldown.nanos() ? PROBE : COOLING;
    }

    /** Claims the half-open deployment's single probe; false when another request got it first. */
    boolean tryProbe(long now, CooldownConfig cooldown) {
        long probe = probeSince.get();
        if (probe != NO_PROBE && now - probe < cooldown.nanos()) {
            return false;
        }
        return probeSince.compareAndSet(probe, now);
    }

    /**
     * The upstream answered (or refused the request for the request's own sake): healthy. Closes the circuit.
     * Reads before it writes, so the common case — a healthy deployment staying healthy — writes no shared line.
     */
    void succeeded() {
        if (failures.get() != 0) {
            failures.set(0);
        }
        if (openUntil.get() != CLOSED) {
            openUntil.set(CLOSED);
        }
        if (probeSince.get() != NO_PROBE) {
            probeSince.set(NO_PROBE);
        }
    }

    /** The upstream failed; {@code probe}: the attempt was this deployment's probe. */
    void failed(boolean probe, long now, CooldownConfig cooldown) {
        lastFailure = now;
        failuresTotal.incrementAndGet();
        int n = failures.incrementAndGet();
        if (cooldown.enabled() && n >= cooldown.failures()) {
            openUntil.set(now + cooldown.nanos()); // opens, or opens again (a failed probe), or extends
        }
        if (probe) {
            probeSince.set(NO_PROBE); // after openUntil moved on: no second probe slips in between
        }
    }

    /** The probe ended without a verdict (its client left): another request may probe. */
    void releaseProbe() {
        probeSince.set(NO_PROBE);
    }

    void started() {
        inFlight.incrementAndGet();
    }

    void ended() {
        inFlight.decrementAndGet();
    }

    /** Exchanges in flight to this deployment through this gateway. */
    public int inFlight() {
        return inFlight.get();
    }

    /** Failures since the last success. */
    public int consecutiveFailures() {
        return failures.get();
    }

    long lastFailure() {
        return lastFailure;
    }

    /** Failures since the gateway started. */
    public long failuresTotal() {
        return failuresTotal.get();
    }

    /** How long before {@code now} it last failed, in nanoseconds; -1 when it never did. */
    public long lastFailureAgoNanos(long now) {
        return failuresTotal.get() == 0 ? -1 : Math.max(0, now - lastFailure);
    }

    /** Where it stands at {@code now}, for the dashboard (no side effect: no probe is claimed). */
    public Rotation rotation(long now, CooldownConfig cooldown) {
        long until = openUntil.get();
        if (until == CLOSED || !cooldown.enabled()) {
            return Rotation.IN_ROTATION;
        }
        return now - until < 0 ? Rotation.COOLING_DOWN : Rotation.PROBING;
    }

    @Override
    public String toString() {
        return "DeploymentHealth[inFlight=" + inFlight.get() + ", failures=" + failures.get()
                + ", open=" + (openUntil.get() != CLOSED) + "]";
    }
}
