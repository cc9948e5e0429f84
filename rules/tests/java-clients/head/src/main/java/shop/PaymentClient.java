package shop;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import okhttp3.OkHttpClient;

public class PaymentClient {
    // ruleid: java/max-attempts-raised, java/jitter-removed
    @Retryable(maxAttempts = 10, backoff = @Backoff(delay = 200, multiplier = 2))
    public Receipt charge(Order o) {
        return gateway.charge(o);
    }

    RetryConfig config = RetryConfig.custom()
        // ruleid: java/max-attempts-raised
        .maxAttempts(6)
        // ruleid: java/jitter-removed
        .intervalFunction(IntervalFunction.ofExponentialBackoff(100, 2.0))
        .build();

    RetryPolicy<Object> policy = RetryPolicy.builder()
        // ruleid: java/max-retries-raised, java/jitter-removed
        .withMaxRetries(-1)
        .build();

    OkHttpClient http = new OkHttpClient.Builder()
        // ruleid: java/okhttp-retry-on-connection-failure, java/retry-enabled-by-default
        .retryOnConnectionFailure(true)
        // ruleid: java/timeout-lowered
        .readTimeout(Duration.ofMillis(500))
        .build();

    OkHttpClient other = new OkHttpClient.Builder()
        // ruleid: java/okhttp-retry-guard-removed, java/timeout-lowered
        .connectTimeout(1, TimeUnit.SECONDS)
        .build();
}
