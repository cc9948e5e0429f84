package api

import (
	"bytes"
	"net/http"
)

type Client struct {
	HTTP *http.Client
}

func newHTTPClient() *http.Client {
	return &http.Client{}
}

func (c *Client) send(method, url string, body []byte) (*http.Response, error) {
	retries := 3
	for {
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		rsp, err := c.HTTP.Do(req)
		if err != nil {
			return nil, err
		}
		// Retry a few times on server errors, reads only
		if rsp.StatusCode >= 500 && retries > 0 && method == "GET" {
			retries--
			continue
		}
		return rsp, nil
	}
}
