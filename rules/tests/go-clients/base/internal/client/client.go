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
	c.RetryMax = 2
	c.Backoff = retryablehttp.RateLimitLinearJitterBackoff
	c.HTTPClient = &http.Client{Timeout: 3 * time.Second}
	return c
}

func Plain() *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.Backoff = retryablehttp.DefaultBackoff
	return c
}

func Do(op func() error) error {
	return retry.Do(op, retry.Attempts(3))
}

func Poll(op func() error) error {
	return retry.Do(op, retry.Attempts(3))
}

func Expo() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	return b
}

func Bounded(op backoff.Operation) error {
	b := backoff.NewExponentialBackOff()
	return backoff.Retry(op, backoff.WithMaxRetries(b, 3))
}

func Seth(ctx context.Context, f sretry.RetryFunc) error {
	b := sretry.NewExponential(100 * time.Millisecond)
	return sretry.Do(ctx, retry.WithMaxRetries(3, retry.WithJitterPercent(20, b)), f)
}
