package client

import (
	"net/http"
	"time"

	"github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v4"
	"github.com/hashicorp/go-retryablehttp"
	sretry "github.com/sethvargo/go-retry"
)

func New() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	// ruleid: go/retryablehttp-retry-max-raised
	c.RetryMax = 10
	// ruleid: go/jitter-removed
	c.Backoff = retryablehttp.DefaultBackoff
	// ruleid: go/timeout-lowered
	c.HTTPClient = &http.Client{Timeout: 500 * time.Millisecond}
	return c
}

func Plain() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	// ruleid: go/retryablehttp-linear-backoff
	c.Backoff = retryablehttp.LinearJitterBackoff
	return c
}

func Do(op func() error) error {
	// ruleid: go/retry-go-attempts-raised
	return retry.Do(op, retry.Attempts(0))
}

func Poll(op func() error) error {
	// ruleid: go/retry-go-delay-no-jitter
	return retry.Do(op, retry.Attempts(3), retry.DelayType(retry.FixedDelay))
}

func Expo() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	// ruleid: go/randomization-factor-zero
	b.RandomizationFactor = 0
	return b
}

func Bounded(op backoff.Operation) error {
	b := backoff.NewExponentialBackOff()
	// ruleid: go/with-max-retries-raised
	return backoff.Retry(op, backoff.WithMaxRetries(b, 12))
}

func Seth(ctx context.Context, f sretry.RetryFunc) error {
	b := sretry.NewExponential(100 * time.Millisecond)
	// ruleid: go/with-max-retries-removed, go/jitter-removed
	return sretry.Do(ctx, b, f)
}
