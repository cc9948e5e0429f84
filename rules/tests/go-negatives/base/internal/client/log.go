package client

func logIt() {
	log.Printf("retry.Attempts(3) and RetryMax = 2")
}
