package api

import "net/http"

// The retry loop was dropped, and no retrying client took its place.
// ok: go/method-guard-removed
func fetch(c *http.Client, method, url string) (*http.Response, error) {
	req, _ := http.NewRequest(method, url, nil)
	return c.Do(req)
}
