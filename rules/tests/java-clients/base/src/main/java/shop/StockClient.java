package shop;

import org.springframework.retry.annotation.Backoff;
import org.springframework.retry.annotation.Retryable;

public class StockClient {
    @Retryable(maxAttemptsExpression = "${stock.retry.max:3}", backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String levels() { return ""; }

    @Retryable(maxAttempts = 3, backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String items() { return ""; }

    @Retryable(maxAttemptsExpression = "${stock.retry.holds:4}", backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public String holds() { return ""; }
}
