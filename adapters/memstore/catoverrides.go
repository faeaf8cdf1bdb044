package memstore

import (
	"context"
	"maps"
	"slices"
	"sync"
)

// CatOverrides keeps runtime configuration documents in memory.
type CatOverrides struct {
	mu   sync.Mutex
	docs map[string][]byte
}

// NewCatOverrides returns an empty override store.
func NewCatOverrides() *CatOverrides { return &CatOverrides{docs: map[string][]byte{}} }

// CatOverrides returns a copy of every stored document.
func (o *CatOverrides) CatOverrides(context.Context) (map[string][]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string][]byte, len(o.docs))
	for cat, doc := range maps.All(o.docs) {
		out[cat] = slices.Clone(doc)
	}
	return out, nil
}

// SaveCatOverride replaces the CAT's document.
func (o *CatOverrides) SaveCatOverride(_ context.Context, cat string, doc []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.docs[cat] = slices.Clone(doc)
	return nil
}
