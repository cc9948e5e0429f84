package client

func logIt() {
	// ok: go/retry-go-attempts-raised, go/retryablehttp-retry-max-raised
	log.Printf("retry.Attempts(9) and RetryMax = 9")
}
