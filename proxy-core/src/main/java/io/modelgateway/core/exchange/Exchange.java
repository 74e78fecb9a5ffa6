package io.modelgateway.core.exchange;

/**
 * One request being answered by a provider (a proxied upstream or the in-process simulator). Created and
 * driven on the client channel's event loop by the exchange handler.
 */
public interface Exchange {
    void start();

    /** The client channel's writability changed: pause or resume reading from the source (design rule 4). */
    void clientWritabilityChanged(boolean writable);

    /** The client went away: stop at once, free the upstream side without returning it to a pool. */
    void cancel();

    /**
     * The client connection reported a failure ({@code cause}: a write of the answer that failed, a reset); the
     * handler closes the connection right after, which cancels whatever is still running. An exchange that can say
     * more precisely why it ends (a buffer that could not be allocated) ends itself here first.
     */
    default void clientFailed(Throwable cause) {
    }
}
