package api

import "net/http"

func fetch(c *http.Client, method, url string) (*http.Response, error) {
	retries := 2
	for {
		req, _ := http.NewRequest(method, url, nil)
		rsp, err := c.Do(req)
		if err == nil && rsp.StatusCode >= 500 && retries > 0 && method == "GET" {
			retries--
			continue
		}
		return rsp, err
	}
}
