package io.modelgateway.core.exchange;

import io.netty.util.AsciiString;
import java.math.BigDecimal;
import java.math.RoundingMode;

/** US-dollar amounts as the gateway writes them (access log, cost header, admin API). */
public final class Usd {
    /** The cost of a whole answer, for keys with {@code cost_header: true}. */
    public static final AsciiString COST_HEADER = AsciiString.cached("x-gateway-cost-usd");

    private Usd() {
    }

    /** At most nine decimals (nano-dollars), plain notation, trailing zeros dropped: {@code 0.000123}, {@code 2.5}. */
    public static String format(double v) {
        BigDecimal d = BigDecimal.valueOf(v).setScale(9, RoundingMode.HALF_UP).stripTrailingZeros();
        return d.signum() == 0 ? "0" : d.toPlainString();
    }
}
