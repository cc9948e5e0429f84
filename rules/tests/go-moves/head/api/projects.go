package api

import (
	"io"
	"net/http"
)

func (c *Client) CreateProject(body io.Reader, avatar io.Reader) (*http.Response, error) {
	if avatar == nil {
		// ok: go/retry-helper-write
		return c.NewRequest(http.MethodPost, "projects", body)
	} else {
		// ok: go/retry-helper-write
		return c.UploadRequest(
			http.MethodPost,
			"projects",
			avatar,
		)
	}
}

func (c *Client) ImportFromArchive(archive io.Reader) (*http.Response, error) {
	// ok: go/retry-helper-write
	return c.UploadRequest(http.MethodPost, "projects/import", archive)
}

func (c *Client) ListProjects() (*http.Response, error) {
	return c.NewRequest(http.MethodGet, "projects", nil)
}

func (c *Client) ArchiveProject(id string) (*http.Response, error) {
	// ruleid: go/retry-helper-write
	return c.NewRequest(http.MethodPost, "projects/"+id+"/archive", nil)
}

func (c *Client) StarProject(id string) (*http.Response, error) {
	// ok: go/retry-helper-write
	return c.NewRequest(http.MethodPost, "projects/"+id+"/star", nil)
}
