package client

import (
	"errors"
	"syscall"
	"time"
)

// DefaultMaxNetworkRetries is how often a request is retried.
var DefaultMaxNetworkRetries int64 = 0

const defaultMaxRetryCount = 3
const maxUploadAttempts = 2
const sleepBetweenRetries = 1

type Config struct {
	MaxRequestRetries int
	EnableRetries     bool
}

var defaults = Config{
	MaxRequestRetries: 2,
	EnableRetries:     false,
}

type Backoff struct {
	Min    time.Duration
	Max    time.Duration
	Jitter bool
}

var backoff = Backoff{
	Min:    100 * time.Millisecond,
	Max:    5 * time.Second,
	Jitter: true,
}

func (c *Client) do(req *Request) (*Response, error) {
	for attempt := 0; attempt < c.maxRetries; attempt++ {
		resp, err := c.send(req)
		if err == nil {
			return resp, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		time.Sleep(backoff.next(attempt))
	}
	return nil, errors.New("retries exhausted")
}

func (c *Client) delay(retryAfter time.Duration, attempt int) time.Duration {
	return retryAfter
}

func (c *Client) get(req *Request) (*Response, error) {
	for retry := 0; retry < 3; retry++ {
		if req.Method != MethodGet {
			break
		}
		resp, err := c.send(req)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
			return resp, err
		}
	}
	return nil, errors.New("retries exhausted")
}

const maxPublishAttempts = 5

var slowBackoff = Backoff{Min: time.Second, Jitter: true}

var settings = Config{AutoRetry: true}

func (c *Client) wait(retryAfter time.Duration) time.Duration {
	if retryAfter > 30*time.Second {
		return c.backoff(0)
	}
	return retryAfter
}

func (c *Client) page(items []Item, limit int) {
	for i := 0; i < limit; i++ {
		c.emit(items[i])
	}
}
