package shop;

public class Other {
    // maxAttempts = 9 is the default
    // ok: java/max-attempts-raised, java/jitter-removed
    static final String NOTE = "use maxAttempts = 9 and random = false";

    // ok: java/max-attempts-raised, java/jitter-removed
    @Retryable(maxAttempts = 3, backoff = @Backoff(delay = 100, random = true, maxDelay = 1000))
    public void a() {}

    // ok: java/max-attempts-raised, java/max-retries-raised
    Page page = Page.builder().maxResults(50).build();

    OkHttpClient http = new OkHttpClient.Builder()
        // ok: java/okhttp-retry-on-connection-failure, java/okhttp-retry-guard-removed
        .retryOnConnectionFailure(false)
        // ok: java/timeout-lowered
        .readTimeout(Duration.ofSeconds(5))
        .build();
}
// The retried method was deleted: not a retry that lost its jitter.
// ok: java/jitter-removed
class Unrelated {}
