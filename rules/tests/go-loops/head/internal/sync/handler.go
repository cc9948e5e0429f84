package sync

func handler(w http.ResponseWriter, r *http.Request) {
	// ok: go/method-guard-removed
	w.WriteHeader(204)
}
