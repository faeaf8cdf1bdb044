package overlay

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Directory is a ports.CatDirectory serving the file configuration with
// the runtime changes applied. Reads take a snapshot of the changes
// without locking; Sync builds a new snapshot and swaps it in, so every
// request sees one consistent configuration per CAT.
type Directory struct {
	files ports.CatDirectory
	store ports.CatOverrideStore
	// sync serializes changes: each merges into the one before it.
	sync    sync.Mutex
	current atomic.Pointer[map[string]Override]
}

// Load reads the stored changes and checks each against the file
// configuration of its CAT. Changes of CATs no longer configured are kept
// but unused. A stored change that no longer makes a valid configuration
// is an error naming the CAT and the key, so the server does not start
// with a configuration nobody chose.
func Load(ctx context.Context, files ports.CatDirectory, store ports.CatOverrideStore) (*Directory, error) {
	docs, err := store.CatOverrides(ctx)
	if err != nil {
		return nil, err
	}
	changes := make(map[string]Override, len(docs))
	for name, doc := range docs {
		o, err := Parse(doc)
		if err != nil {
			return nil, errs.Wrap(errs.KindInvalid, err, "CAT "+name+": "+errs.PublicMessage(err, "invalid runtime configuration"))
		}
		changes[name] = o
		base, err := files.Cat(ctx, name)
		if errs.KindOf(err) == errs.KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := check(o, base); err != nil {
			return nil, errs.Wrap(errs.KindInvalid, err, "CAT "+name+": stored runtime configuration: "+errs.PublicMessage(err, "invalid"))
		}
	}
	d := &Directory{files: files, store: store}
	d.current.Store(&changes)
	return d, nil
}

// check validates a change and its result.
func check(o Override, base catconfig.Cat) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Apply(base).Validate()
}

// Cat returns the CAT's effective configuration.
func (d *Directory) Cat(ctx context.Context, name string) (catconfig.Cat, error) {
	base, err := d.files.Cat(ctx, name)
	if err != nil {
		return catconfig.Cat{}, err
	}
	return (*d.current.Load())[name].Apply(base), nil
}

// Cats returns every CAT's effective configuration, ordered by name.
func (d *Directory) Cats(ctx context.Context) ([]catconfig.Cat, error) {
	all, err := d.files.Cats(ctx)
	if err != nil {
		return nil, err
	}
	changes := *d.current.Load()
	for i, c := range all {
		all[i] = changes[c.Name].Apply(c)
	}
	return all, nil
}

// Sync merges a change into the CAT's earlier changes, checks the result
// (errs.KindInvalid naming the first bad key), persists it and makes it
// the configuration of every request that starts afterwards. It returns
// the new effective configuration. Nothing changes when any step fails.
func (d *Directory) Sync(ctx context.Context, name string, change Override) (catconfig.Cat, error) {
	d.sync.Lock()
	defer d.sync.Unlock()
	base, err := d.files.Cat(ctx, name)
	if err != nil {
		return catconfig.Cat{}, err
	}
	old := *d.current.Load()
	merged := old[name].Merge(change)
	if err := check(merged, base); err != nil {
		return catconfig.Cat{}, err
	}
	doc, err := merged.Encode()
	if err != nil {
		return catconfig.Cat{}, err
	}
	if err := d.store.SaveCatOverride(ctx, name, doc); err != nil {
		return catconfig.Cat{}, err
	}
	next := maps.Clone(old)
	next[name] = merged
	d.current.Store(&next)
	return merged.Apply(base), nil
}
