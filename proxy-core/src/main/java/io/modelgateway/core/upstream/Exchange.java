package io.modelgateway.core.upstream;

/**
 * One request being answered by a provider (a proxied upstream or the in-process simulator). Created and
 * driven on the client channel's event loop by the exchange handler.
 */
public interface Exchange {
    void start();

    /** The client channel's writability changed: pause or resume reading from the source (DESIGN rule 4). */
    void clientWritabilityChanged(boolean writable);

    /** The client went away: stop at once, free the upstream side without returning it to a pool. */
    void cancel();
}
