package client

// c.RetryMax = 2 was the old value.
func Page(api API) ([]Item, error) {
	return api.List(ListOptions{Limit: 20, Timeout: 5 * time.Second})
}

func Deploy() Spec {
	return Spec{Replicas: 2, MaxAttempts: 3}
}

func New() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.RetryMax = 4
	c.Backoff = retryablehttp.LinearJitterBackoff
	b := backoff.NewExponentialBackOff()
	b.RandomizationFactor = 0.5
	return c
}

func Seth(ctx context.Context, f sretry.RetryFunc) error {
	return sretry.Do(ctx, retry.WithMaxRetries(3, b), f)
}

func Dead(op func() error) error {
	return retry.Do(op, retry.Attempts(3), retry.DelayType(retry.RandomDelay))
}
