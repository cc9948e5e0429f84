package sync

// ruleid: go/max-retries-const-raised
const maxRetries = 8
// ok: go/max-retries-const-raised
const pageSize = 500

// ruleid: go/max-retries-const-raised
var cfg = ClientConfig{MaxRetries: 6, Timeout: 5}

// ruleid: go/method-guard-removed
func push(c *retryablehttp.Client, req *retryablehttp.Request) (*http.Response, error) {
	c.RetryMax = maxRetries
	return c.Do(req)
}

var route = &networking.HTTPRoute{
	Retries: &networking.HTTPRetry{
		// ruleid: go/max-attempts-const-raised
		Attempts: 5,
		// ruleid: go/retry-on-5xx
		RetryOn: "5xx,connect-failure,refused-stream",
	},
}

// ok: go/retry-on-5xx, go/max-attempts-const-raised
var pool = Pool{Attempts: 9, Mode: "5xx"}
