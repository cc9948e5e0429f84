package shop;

import org.springframework.retry.annotation.Backoff;
import org.springframework.retry.annotation.Retryable;

public class StockClient {
    // ruleid: java/max-attempts-raised
    @Retryable(maxAttemptsExpression = "${stock.retry.max:10}", backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String levels() { return ""; }

    // ruleid: java/max-attempts-raised
    @Retryable(maxAttemptsExpression = "${catalog.retry.max:10}", backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String items() { return ""; }

    // ok: java/max-attempts-raised
    @Retryable(maxAttemptsExpression = "${stock.retry.holds:2}", backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String holds() { return ""; }
}
