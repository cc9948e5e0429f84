package client

import "net/http"

func (c *Client) Orders(url string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return c.sendResilient(req)
}

func (c *Client) Fetch(url string) (*http.Response, error) {
	return c.sendResilient(newRequest(http.MethodGet, url))
}

func (c *Client) Audit(url string) (*http.Response, error) {
	return c.sendOnce(newRequest(http.MethodGet, url))
}
