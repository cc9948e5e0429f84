package deploy

import "github.com/avast/retry-go/v4"

// A new retry with exponential delays never had jitter to lose: the
// operation model reports it as a new retry (of a write, without jitter).
func Release(api API, spec Spec) error {
	return retry.Do(
		func() error { return api.CreateRelease(spec) },
		retry.Attempts(3),
		// ok: go/retry-go-delay-no-jitter
		retry.DelayType(retry.BackOffDelay),
	)
}
