package api

import (
	"bytes"
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

type Client struct {
	HTTP *http.Client
}

func newHTTPClient() *http.Client {
	// ruleid: go/method-guard-removed
	rc := retryablehttp.NewClient()
	rc.RetryMax = 3
	return rc.StandardClient()
}

func (c *Client) send(method, url string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	return c.HTTP.Do(req)
}
