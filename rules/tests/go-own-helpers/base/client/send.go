package client

import (
	"net/http"
	"time"
)

type Client struct {
	http *http.Client
	max  int
}

func (c *Client) sendResilient(req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < c.max; attempt++ {
		resp, err = c.http.Do(req)
		if err == nil {
			return resp, nil
		}
		time.Sleep(time.Duration(attempt) * time.Second)
	}
	return resp, err
}

func (c *Client) sendOnce(req *http.Request) (*http.Response, error) {
	return c.http.Do(req)
}
