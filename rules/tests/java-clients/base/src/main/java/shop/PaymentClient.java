package shop;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.RetryConfig;
import okhttp3.OkHttpClient;

public class PaymentClient {
    @Retryable(maxAttempts = 3, backoff = @Backoff(delay = 200, multiplier = 2, random = true))
    public Receipt charge(Order o) {
        return gateway.charge(o);
    }

    RetryConfig config = RetryConfig.custom()
        .maxAttempts(3)
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(100, 2.0))
        .build();

    RetryPolicy<Object> policy = RetryPolicy.builder()
        .withMaxRetries(2)
        .withJitter(0.25)
        .build();

    OkHttpClient http = new OkHttpClient.Builder()
        .retryOnConnectionFailure(false)
        .readTimeout(Duration.ofSeconds(3))
        .build();

    OkHttpClient other = new OkHttpClient.Builder()
        .retryOnConnectionFailure(false)
        .connectTimeout(5, TimeUnit.SECONDS)
        .build();
}
