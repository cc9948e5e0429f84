package deploy

func Release(api API, spec Spec) error {
	return api.CreateRelease(spec)
}
