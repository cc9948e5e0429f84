package api

import (
	"io"
	"net/http"
)

func (c *Client) CreateProject(body io.Reader) (*http.Response, error) {
	return c.NewRequest(http.MethodPost, "projects", body)
}

func (c *Client) ImportFile(body io.Reader) (*http.Response, error) {
	return c.NewRequest(http.MethodPost, "projects/import", body)
}

func (c *Client) ListProjects() (*http.Response, error) {
	return c.NewRequest(http.MethodGet, "projects", nil)
}
