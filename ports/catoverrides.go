package ports

//go:generate go tool moq -rm -pkg mocks -out mocks/catoverrides_moq.go . CatOverrideStore

import "context"

// CatOverride is one CAT's stored runtime configuration document and the
// version it was saved at.
type CatOverride struct {
	Cat     string
	Doc     []byte
	Version int64
}

// CatOverrideStore persists the runtime configuration changes an admin
// makes through POST /api/v1/cat/config/sync, so they survive a restart
// and reach every instance sharing the store. A document is opaque to the
// store: the core encodes and validates it.
//
// Versions are one sequence over all the CATs of a store, handed out in
// the order saves commit: a read of the documents changed since a version
// never misses a save that committed before it and has a higher version.
type CatOverrideStore interface {
	// CatOverridesSince returns the current document of every CAT saved
	// at a version above since (0: every stored document), ordered by
	// version.
	CatOverridesSince(ctx context.Context, since int64) ([]CatOverride, error)
	// SaveCatOverride replaces the CAT's document if its stored version is
	// still expected (0: the CAT has none), and returns the new version.
	// When another save came first it changes nothing and returns an
	// errs.KindConflict error: the caller merges again against the newer
	// document and retries.
	SaveCatOverride(ctx context.Context, cat string, expected int64, doc []byte) (int64, error)
}
