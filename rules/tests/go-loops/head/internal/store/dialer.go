package store

const (
	// maxDialAttempts bounds how many resolved addresses one dial tries.
	// ruleid: go/max-attempts-const-raised
	maxDialAttempts = 10

	// maxLoginAttempts locks an account; it sends nothing.
	// ok: go/max-attempts-const-raised
	maxLoginAttempts = 10
)
