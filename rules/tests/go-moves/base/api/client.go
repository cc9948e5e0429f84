package api

import (
	"io"
	"net/http"
	"time"
)

type Client struct {
	http *http.Client
	max  int
}

// NewRequest builds a request the client sends with retries.
func (c *Client) NewRequest(method, path string, body io.Reader) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < c.max; attempt++ {
		req, _ := http.NewRequest(method, path, body)
		resp, err = c.http.Do(req)
		if err == nil {
			return resp, nil
		}
		time.Sleep(time.Duration(attempt) * time.Second)
	}
	return resp, err
}

// UploadRequest sends a file through the same retrying client.
func (c *Client) UploadRequest(method, path string, file io.Reader) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < c.max; attempt++ {
		req, _ := http.NewRequest(method, path, file)
		resp, err = c.http.Do(req)
		if err == nil {
			return resp, nil
		}
		time.Sleep(time.Duration(attempt) * time.Second)
	}
	return resp, err
}
