package client

import (
	"errors"
	"syscall"
	"time"
)

// DefaultMaxNetworkRetries is how often a request is retried.
// ruleid: go/retry-count-name-raised
var DefaultMaxNetworkRetries int64 = 2

// ok: go/retry-count-name-raised
const defaultMaxRetryCount = 2
// ruleid: go/attempt-count-name-raised
const maxUploadAttempts = 4
// ok: go/retry-count-name-raised
const sleepBetweenRetries = 5

type Config struct {
	MaxRequestRetries int
	EnableRetries     bool
}

var defaults = Config{
	// ruleid: go/retry-count-name-raised
	MaxRequestRetries: 3,
	// ruleid: go/retry-enabled-by-default
	EnableRetries:     true,
}

type Backoff struct {
	Min    time.Duration
	Max    time.Duration
	Jitter bool
}

var backoff = Backoff{
	// ruleid: go/jitter-field-removed
	Min: 100 * time.Millisecond,
	Max: 5 * time.Second,
}

func (c *Client) do(req *Request) (*Response, error) {
	// ruleid: go/retry-loop-bound-widened
	for attempt := 0; attempt <= c.maxRetries; attempt++ {
		resp, err := c.send(req)
		if err == nil {
			return resp, nil
		}
		// ruleid: go/retry-on-connection-errors-added
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
			return nil, err
		}
		time.Sleep(backoff.next(attempt))
	}
	return nil, errors.New("retries exhausted")
}

func (c *Client) delay(retryAfter time.Duration, attempt int) time.Duration {
	// ruleid: go/retry-after-capped
	if retryAfter > c.maxRetryAfter {
		return c.backoff(attempt)
	}
	return retryAfter
}

func (c *Client) get(req *Request) (*Response, error) {
	for retry := 0; retry < 3; retry++ {
		if req.Method != MethodGet {
			break
		}
		resp, err := c.send(req)
		// ok: go/retry-on-connection-errors-added
		if err == nil || !(errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)) {
			return resp, err
		}
	}
	return nil, errors.New("retries exhausted")
}

// ok: go/attempt-count-name-raised
const maxPublishAttempts = 3

var slowBackoff = Backoff{
	Min: time.Second,
	// ok: go/jitter-field-removed
	Jitter: true,
}

// ok: go/retry-enabled-by-default
var settings = Config{AutoRetry: false}

func (c *Client) wait(retryAfter time.Duration) time.Duration {
	// ok: go/retry-after-capped
	if retryAfter > 60*time.Second {
		return c.backoff(0)
	}
	return retryAfter
}

func (c *Client) page(items []Item, limit int) {
	// ok: go/retry-loop-bound-widened
	for i := 0; i <= limit; i++ {
		c.emit(items[i])
	}
}
