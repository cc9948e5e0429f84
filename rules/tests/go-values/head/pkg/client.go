package pkg

import "github.com/cenkalti/backoff/v4"

func newPolicy() backoff.BackOff {
	// ruleid: go/with-max-retries-raised
	maxRetries := uint64(10)
	return backoff.WithMaxRetries(backoff.NewExponentialBackOff(), maxRetries)
}

func pageSize() int {
	// ok: go/max-retries-const-raised
	maxItems := uint64(30)
	return int(maxItems)
}

const (
	// ruleid: go/max-retries-const-raised
	defaultMaxRetries uint64 = 8
)

func push(send func() error) error {
	// ruleid: go/max-retries-const-raised
	maxRetries := uint64(12)
	var err error
	for i := uint64(0); i < maxRetries; i++ {
		if err = send(); err == nil {
			return nil
		}
	}
	return err
}
