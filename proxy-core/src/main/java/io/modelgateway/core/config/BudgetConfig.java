package io.modelgateway.core.config;

/**
 * A key's spend budgets in US dollars ({@code keys[i].budget_usd}): per UTC day and per UTC month, each 0 for none.
 * Spend is the cost of the key's exchanges at its deployments' prices; an exchange is admitted while the period's
 * spend is under the budget (with its estimate reserved) and settled with its real cost when it ends.
 */
public record BudgetConfig(double daily, double monthly) {
    /** No budget. */
    public static final BudgetConfig NONE = new BudgetConfig(0, 0);
    /** The largest budget the config takes, in USD. */
    public static final double MAX_USD = 1_000_000_000;

    public BudgetConfig {
        if (!(daily >= 0 && daily <= MAX_USD) || !(monthly >= 0 && monthly <= MAX_USD)) {
            throw new IllegalArgumentException("a budget is between 0 (none) and " + MAX_USD);
        }
    }

    public boolean isEmpty() {
        return daily == 0 && monthly == 0;
    }
}
