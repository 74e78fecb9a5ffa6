package io.modelgateway.core.exchange;

/**
 * What an exchange tells the routing layer about its attempt, so that a failure can be tried again before the
 * caller saw anything (GD-24 makes this possible: nothing is written to the client until the answer begins).
 * An exchange stays one attempt at one upstream; whoever passes a hook decides what a failure means.
 *
 * <p>Called on the client's event loop, at most once each per attempt, never after the exchange wrote the first
 * byte of its answer to the client.
 */
public interface AttemptHook {

    /** For exchanges nobody retries: every failure is answered as it is. */
    AttemptHook NONE = new AttemptHook() {
        @Override
        public boolean onFailureBeforeHead(UpstreamFailure failure) {
            return false;
        }

        @Override
        public void onAnswerStarted() {
        }
    };

    /**
     * The upstream failed and nothing was written to the client yet.
     *
     * @return true when the caller of the hook takes over: the exchange then answers nothing, releases everything
     *         it holds (returning or closing its upstream connection), and never calls its {@code onDone}; false to
     *         let the exchange answer the failure itself, as it would without a hook
     */
    boolean onFailureBeforeHead(UpstreamFailure failure);

    /** The upstream's successful answer has begun (2xx head): from here on the exchange is committed. */
    void onAnswerStarted();
}
