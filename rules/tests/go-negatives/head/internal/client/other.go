package client

// c.RetryMax = 9 would be too many.
func Page(api API) ([]Item, error) {
	// ok: go/timeout-lowered
	return api.List(ListOptions{Limit: 50, Timeout: 1 * time.Second})
}

func Deploy() Spec {
	// ok: go/retryablehttp-retry-max-raised, go/retry-go-attempts-raised
	return Spec{Replicas: 6, MaxAttempts: 3}
}

func New() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	// ok: go/retryablehttp-retry-max-raised
	c.RetryMax = 2
	// ok: go/jitter-removed, go/retryablehttp-linear-backoff
	c.Backoff = retryablehttp.RateLimitLinearJitterBackoff
	b := backoff.NewExponentialBackOff()
	// ok: go/randomization-factor-zero, go/jitter-removed
	b.RandomizationFactor = 0.25
	return c
}

func Seth(ctx context.Context, f sretry.RetryFunc) error {
	// ok: go/with-max-retries-removed, go/with-max-retries-raised
	return sretry.Do(ctx, retry.WithMaxRetries(2, b), f)
}

// Dead was deleted together with its retry: not a finding.
// ok: go/retry-go-delay-no-jitter, go/jitter-removed
var version = 2
