package io.modelgateway.core.limit;

import io.modelgateway.core.config.KeyConfig;
import io.modelgateway.core.config.ModelConfig;
import io.modelgateway.core.exchange.Admission;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

/**
 * The shared limits as the limit check sees them: an admission whose answer may come later. {@link SharedLimiter}
 * is the implementation; the limit check's own tests drive one by hand to play every order of events.
 */
public interface SharedAdmissions {
    /**
     * Checks and reserves as {@link RateLimiter#admit(KeyConfig, ModelConfig, long)} does; first, when
     * {@code costEstimateUsd} is not negative, the key's spend budgets as {@link SpendBudgets#admit} does.
     *
     * @param costEstimateUsd the exchange's estimated cost, reserved on the key's budgeted periods; negative when the
     *                        exchange counts no spend (no budget on the key, no price on the model)
     * @return completes on {@code loop} and never fails; already done when the answer is known at once
     */
    Future<Admission> admit(KeyConfig key, ModelConfig model, long estimatedTokens, double costEstimateUsd,
            EventLoop loop);
}
