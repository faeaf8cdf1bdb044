package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
)

// Cats is a fixed CAT directory held in memory.
type Cats struct {
	byName map[string]catconfig.Cat
}

// NewCats returns a directory of the given CAT configurations.
func NewCats(cats ...catconfig.Cat) *Cats {
	d := &Cats{byName: make(map[string]catconfig.Cat, len(cats))}
	for _, c := range cats {
		d.byName[c.Name] = c
	}
	return d
}

// Cat returns the named CAT, or an errs.KindNotFound error.
func (d *Cats) Cat(_ context.Context, name string) (catconfig.Cat, error) {
	c, ok := d.byName[name]
	if !ok {
		return catconfig.Cat{}, errs.New(errs.KindNotFound, "CAT %q not found in configuration", name)
	}
	return c, nil
}

// Cats returns every CAT, ordered by name.
func (d *Cats) Cats(context.Context) ([]catconfig.Cat, error) {
	out := make([]catconfig.Cat, 0, len(d.byName))
	for _, c := range d.byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b catconfig.Cat) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
