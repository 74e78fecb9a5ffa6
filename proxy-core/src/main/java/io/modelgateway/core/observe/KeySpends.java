package io.modelgateway.core.observe;

import java.util.concurrent.CompletionStage;

/**
 * Where the admin listener reads a key's spend ({@code GET /admin/api/keys/NAME/spend}); the server hands it the
 * limits' spend counts. Thread-safe: read on the admin loop.
 */
public interface KeySpends {

    /**
     * The spend of the key named {@code keyName} now; completes with null when the config has no key of that name.
     * With shared limits the spend is read from Redis, so the answer may come later, on another thread.
     */
    CompletionStage<KeySpend> spend(String keyName);

    /**
     * One key's spend in US dollars.
     *
     * @param todayUsd         spent on the current UTC day (reservations of exchanges still running included)
     * @param monthUsd         spent in the current UTC month
     * @param dailyBudgetUsd   the key's daily budget, 0 for none
     * @param monthlyBudgetUsd its monthly budget, 0 for none
     * @param dayResetMillis   when the day's spend starts again from 0 (the next UTC midnight)
     * @param monthResetMillis when the month's does
     * @param source           where the counts come from: {@link #LOCAL} (this replica's), {@link #SHARED} (every
     *                         replica's, from Redis) or {@link #UNAVAILABLE} (shared, but Redis did not answer)
     */
    record KeySpend(double todayUsd, double monthUsd, double dailyBudgetUsd, double monthlyBudgetUsd,
            long dayResetMillis, long monthResetMillis, String source) {
    }

    String LOCAL = "local";
    String SHARED = "redis";
    String UNAVAILABLE = "unavailable";
}
