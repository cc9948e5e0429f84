package store

const (
	// maxDialAttempts bounds how many resolved addresses one dial tries.
	maxDialAttempts = 3

	// maxLoginAttempts locks an account; it sends nothing.
	maxLoginAttempts = 5
)
