package overlay

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catsrv/catsrv/core/catconfig"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// maxSyncAttempts bounds how often Sync merges again after another
// instance saved the same CAT first.
const maxSyncAttempts = 20

// Directory is a ports.CatDirectory serving the file configuration with
// the runtime changes applied. Reads take a snapshot of the changes
// without locking; Sync and Refresh build a new snapshot and swap it in,
// so every request sees one consistent configuration per CAT.
//
// The changes live in a ports.CatOverrideStore that other instances may
// share. Each CAT's change carries the version the store saved it at, and
// a Directory only ever replaces a CAT's change with a newer version, so
// every instance goes through one CAT's changes in the same order. Sync
// merges against the stored latest version and saves only if it is still
// the latest (retrying on a conflict), so two instances changing
// different keys of one CAT both keep their keys. Refresh (run by Follow)
// reads what other instances saved.
type Directory struct {
	files ports.CatDirectory
	store ports.CatOverrideStore
	// mu serializes changes of the snapshot: Sync and Refresh.
	mu      sync.Mutex
	current atomic.Pointer[snapshot]
}

// snapshot is the applied state: each CAT's change and its version, and
// the highest version read from the store (what the next Refresh reads
// above). A Sync's own save does not move high: saves of other instances
// numbered below it may still be unread.
type snapshot struct {
	changes map[string]versioned
	high    int64
}

type versioned struct {
	Override
	version int64
}

// Load reads the stored changes and checks each against the file
// configuration of its CAT. Changes of CATs no longer configured are kept
// but unused. A stored change that no longer makes a valid configuration
// is an error naming the CAT and the key, so the server does not start
// with a configuration nobody chose.
func Load(ctx context.Context, files ports.CatDirectory, store ports.CatOverrideStore) (*Directory, error) {
	docs, err := store.CatOverridesSince(ctx, 0)
	if err != nil {
		return nil, err
	}
	next := &snapshot{changes: make(map[string]versioned, len(docs))}
	for _, doc := range docs {
		o, err := parseChecked(ctx, files, doc)
		if err != nil {
			return nil, err
		}
		next.changes[doc.Cat] = versioned{o, doc.Version}
		next.high = max(next.high, doc.Version)
	}
	d := &Directory{files: files, store: store}
	d.current.Store(next)
	return d, nil
}

// parseChecked reads a stored change and checks it against its CAT's file
// configuration (when the CAT is still configured).
func parseChecked(ctx context.Context, files ports.CatDirectory, doc ports.CatOverride) (Override, error) {
	o, err := Parse(doc.Doc)
	if err != nil {
		return Override{}, errs.Wrap(errs.KindInvalid, err, "CAT "+doc.Cat+": "+errs.PublicMessage(err, "invalid runtime configuration"))
	}
	base, err := files.Cat(ctx, doc.Cat)
	if errs.KindOf(err) == errs.KindNotFound {
		return o, nil
	}
	if err != nil {
		return Override{}, err
	}
	if err := check(o, base); err != nil {
		return Override{}, errs.Wrap(errs.KindInvalid, err, "CAT "+doc.Cat+": stored runtime configuration: "+errs.PublicMessage(err, "invalid"))
	}
	return o, nil
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
	return d.current.Load().changes[name].Apply(base), nil
}

// Cats returns every CAT's effective configuration, ordered by name.
func (d *Directory) Cats(ctx context.Context) ([]catconfig.Cat, error) {
	all, err := d.files.Cats(ctx)
	if err != nil {
		return nil, err
	}
	changes := d.current.Load().changes
	for i, c := range all {
		all[i] = changes[c.Name].Apply(c)
	}
	return all, nil
}

// Sync merges a change into the CAT's latest stored change, checks the
// result (errs.KindInvalid naming the first bad key), saves it if no other
// save of the CAT came first (else it reads the newer change and merges
// again) and makes it the configuration of every request that starts
// afterwards. It returns the new effective configuration. Nothing changes
// when any step fails; a CAT changed by others on every one of
// maxSyncAttempts tries is a temporary errs.KindUnavailable error.
func (d *Directory) Sync(ctx context.Context, name string, change Override) (catconfig.Cat, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	base, err := d.files.Cat(ctx, name)
	if err != nil {
		return catconfig.Cat{}, err
	}
	for attempt := 1; ; attempt++ {
		// What other instances saved first; a change stored by another
		// instance that this one cannot apply is no reason to refuse this
		// one, so only the read's own failure stops the sync.
		if err := d.refresh(ctx); err != nil && errs.KindOf(err) != errs.KindInvalid {
			return catconfig.Cat{}, err
		}
		cur := d.current.Load()
		old := cur.changes[name]
		merged := old.Merge(change)
		if err := check(merged, base); err != nil {
			return catconfig.Cat{}, err
		}
		doc, err := merged.Encode()
		if err != nil {
			return catconfig.Cat{}, err
		}
		version, err := d.store.SaveCatOverride(ctx, name, old.version, doc)
		if errs.KindOf(err) == errs.KindConflict {
			if attempt < maxSyncAttempts {
				continue
			}
			return catconfig.Cat{}, errs.Wrap(errs.KindUnavailable, errs.Temporary(err),
				"the runtime configuration of CAT "+name+" kept changing meanwhile, try again")
		}
		if err != nil {
			return catconfig.Cat{}, err
		}
		next := &snapshot{changes: maps.Clone(cur.changes), high: cur.high}
		next.changes[name] = versioned{merged, version}
		d.current.Store(next)
		return merged.Apply(base), nil
	}
}

// Refresh applies what was saved since the last read, in version order,
// each CAT's change only when newer than the one in force. A stored
// change this instance cannot apply (its files differ, say, during a
// rolling deploy) is skipped, keeping the CAT's earlier change, and
// reported in the returned errs.KindInvalid error; the others apply.
func (d *Directory) Refresh(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refresh(ctx)
}

func (d *Directory) refresh(ctx context.Context) error {
	cur := d.current.Load()
	docs, err := d.store.CatOverridesSince(ctx, cur.high)
	if err != nil || len(docs) == 0 {
		return err
	}
	next := &snapshot{changes: maps.Clone(cur.changes), high: cur.high}
	var bad []error
	for _, doc := range docs {
		next.high = max(next.high, doc.Version)
		if doc.Version <= next.changes[doc.Cat].version {
			continue
		}
		o, err := parseChecked(ctx, d.files, doc)
		if errs.KindOf(err) == errs.KindInvalid {
			bad = append(bad, err)
			continue
		}
		if err != nil {
			return err
		}
		next.changes[doc.Cat] = versioned{o, doc.Version}
	}
	d.current.Store(next)
	return errors.Join(bad...)
}

// Follow keeps the directory up to date with the store until ctx ends:
// it refreshes every interval, and at once whenever wake delivers (a
// notification that another instance saved; nil when there is none).
// Each failed refresh goes to report; the next one tries again.
func (d *Directory) Follow(ctx context.Context, interval time.Duration, wake <-chan struct{}, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		if err := d.Refresh(ctx); err != nil && ctx.Err() == nil {
			report(err)
		}
	}
}
