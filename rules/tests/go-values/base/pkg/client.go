package pkg

import "github.com/cenkalti/backoff/v4"

func newPolicy() backoff.BackOff {
	maxRetries := uint64(3)
	return backoff.WithMaxRetries(backoff.NewExponentialBackOff(), maxRetries)
}

func pageSize() int {
	maxItems := uint64(3)
	return int(maxItems)
}

const (
	defaultMaxRetries uint64 = 2
)

func push(send func() error) error {
	maxRetries := 3
	var err error
	for i := uint64(0); i < maxRetries; i++ {
		if err = send(); err == nil {
			return nil
		}
	}
	return err
}
