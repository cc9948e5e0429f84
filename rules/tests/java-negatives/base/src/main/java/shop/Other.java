package shop;

public class Other {
    // maxAttempts = 3 is the default
    static final String NOTE = "use maxAttempts = 3 and random = true";

    @Retryable(maxAttempts = 5, backoff = @Backoff(delay = 100, random = true))
    public void a() {}

    Page page = Page.builder().maxResults(20).build();

    OkHttpClient http = new OkHttpClient.Builder()
        .retryOnConnectionFailure(false)
        .readTimeout(Duration.ofSeconds(3))
        .build();

    @Retryable(maxRetries = 2, jitter = 50)
    public void gone() {}
}
