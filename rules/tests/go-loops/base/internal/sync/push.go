package sync

const maxRetries = 3
const pageSize = 50

var cfg = ClientConfig{MaxRetries: 2, Timeout: 5}

func push(c *http.Client, req *http.Request) (*http.Response, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt <= maxRetries; attempt++ {
		resp, err = c.Do(req)
		if err == nil {
			return resp, nil
		}
		if req.Method != http.MethodGet {
			return nil, err
		}
	}
	return resp, err
}

var route = &networking.HTTPRoute{
	Retries: &networking.HTTPRetry{
		Attempts: 2,
		RetryOn:  "connect-failure,refused-stream",
	},
}
