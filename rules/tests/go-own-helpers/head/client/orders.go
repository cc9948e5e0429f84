package client

import "net/http"

func (c *Client) Orders(url string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return c.sendResilient(req)
}

func (c *Client) Fetch(url string) (*http.Response, error) {
	// ruleid: go/retry-helper-write
	return c.sendResilient(newRequest(http.MethodPost, url))
}

func (c *Client) Audit(url string) (*http.Response, error) {
	// ok: go/retry-helper-write
	return c.sendOnce(newRequest(http.MethodPost, url))
}

func (c *Client) Submit(ctx string, url string) error {
	// ruleid: go/retry-helper-write
	return doWithRetry(ctx, http.MethodPost, url)
}
