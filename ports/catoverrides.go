package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/catoverrides_moq.go . CatOverrideStore

import "context"

// CatOverrideStore persists the runtime configuration changes an admin
// makes through POST /api/v1/cat/config/sync, so they survive a restart.
// A document is opaque to the store: the core encodes and validates it.
type CatOverrideStore interface {
	// CatOverrides returns the stored document of every CAT that has one,
	// keyed by CAT name.
	CatOverrides(ctx context.Context) (map[string][]byte, error)
	// SaveCatOverride replaces the CAT's document.
	SaveCatOverride(ctx context.Context, cat string, doc []byte) error
}
