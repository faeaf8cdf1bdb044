package memstore

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// CatOverrides keeps runtime configuration documents in memory.
type CatOverrides struct {
	mu      sync.Mutex
	docs    map[string]ports.CatOverride
	version int64
}

// NewCatOverrides returns an empty override store.
func NewCatOverrides() *CatOverrides { return &CatOverrides{docs: map[string]ports.CatOverride{}} }

// CatOverridesSince returns copies of the documents saved above since,
// ordered by version.
func (o *CatOverrides) CatOverridesSince(_ context.Context, since int64) ([]ports.CatOverride, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ports.CatOverride
	for _, d := range o.docs {
		if d.Version > since {
			out = append(out, ports.CatOverride{Cat: d.Cat, Doc: slices.Clone(d.Doc), Version: d.Version})
		}
	}
	slices.SortFunc(out, func(a, b ports.CatOverride) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// SaveCatOverride replaces the CAT's document when its version is still
// expected.
func (o *CatOverrides) SaveCatOverride(_ context.Context, cat string, expected int64, doc []byte) (int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.docs[cat].Version != expected {
		return 0, errs.New(errs.KindConflict, "the runtime configuration of CAT %q changed meanwhile", cat)
	}
	o.version++
	o.docs[cat] = ports.CatOverride{Cat: cat, Doc: slices.Clone(doc), Version: o.version}
	return o.version, nil
}
