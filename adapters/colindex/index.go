package colindex

import (
	"context"
	"sync"
	"time"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Index is the columnar index of one database's api interactions. Safe
// for concurrent use: queries share a read lock, refreshes take turns.
type Index struct {
	src ports.InteractionFeed

	refreshMu sync.Mutex // one refresh at a time: the only writer

	mu   sync.RWMutex
	cats map[string]*catIndex
	high int64 // the feed position after the rows applied
	rows int
}

// Build reads every api interaction from the source (the database's
// ports.InteractionFeed) into a new index.
func Build(ctx context.Context, src ports.InteractionFeed) (*Index, error) {
	x := &Index{src: src, cats: map[string]*catIndex{}}
	if err := x.Refresh(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	for _, c := range x.cats {
		c.trim()
	}
	x.mu.Unlock()
	return x, nil
}

// Refresh applies the interactions stored since the last refresh, all
// that one read of the source returns (one snapshot of the database)
// becoming visible to queries at once, under one hold of the write lock,
// or, when the read fails, none (see draft.go). Only the refresh's own
// goroutine changes the index, so it reads the index without the lock
// until it applies.
func (x *Index) Refresh(ctx context.Context) error {
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	b, err := x.read(ctx)
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
	}
	if b.rows == 0 {
		// Nothing new, but the position may have moved past transactions
		// that wrote no api rows.
		x.mu.Lock()
		x.high = max(x.high, b.high)
		x.mu.Unlock()
		return nil
	}
	b.prepare()
	x.apply(&b)
	x.rank(&b)
	x.sortUnsorted()
	return nil
}

// read reads the interactions stored since the last refresh into a batch.
func (x *Index) read(ctx context.Context) (batch, error) {
	b := batch{cats: map[string]*catDraft{}}
	next, err := x.src.ReadSince(ctx, x.high, func(r *ports.FeedRow) error {
		b.add(x.cats, r)
		return nil
	})
	b.high = next
	return b, err
}

// apply makes the batch's rows visible, under one hold of the write lock.
func (x *Index) apply(b *batch) {
	x.mu.Lock()
	defer x.mu.Unlock()
	b.apply(x.cats)
	x.high = max(x.high, b.high)
	x.rows += b.rows
}

// rank orders the entries the batch added to the dictionaries of CATs
// readers were using: the order is computed without the write lock and
// swapped in under it. Until then their lists order the new entries per
// query (see sortedGroups).
func (x *Index) rank(b *batch) {
	type ranks struct {
		d              *dictionary
		byRank, byCode []uint32
	}
	var todo []ranks
	for _, cd := range b.cats {
		if cd.fresh {
			continue
		}
		for d := range cd.c.dicts {
			if dict := &cd.c.dicts[d]; dict.ranked < dict.len() {
				byRank, byCode := dict.merged(nil)
				todo = append(todo, ranks{d: dict, byRank: byRank, byCode: byCode})
			}
		}
	}
	if len(todo) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range todo {
		r.d.byRank, r.d.rank, r.d.ranked = r.byRank, r.byCode, len(r.byRank)
	}
}

// sortUnsorted restores time order in the CATs that received older rows
// than they held. Until then their queries check each row's time. Each
// CAT is sorted into new storage without the write lock, then swapped in
// under it.
func (x *Index) sortUnsorted() {
	for _, c := range x.cats {
		c.shifted = 0 // only refreshes read it
		if c.sorted {
			continue
		}
		next := c.catRows
		next.sortByTime(&c.totals)
		x.mu.Lock()
		c.catRows = next
		x.mu.Unlock()
	}
}

// Follow refreshes the index every interval until ctx is done, so that
// the writes of other processes sharing the database are counted at most
// about one interval (plus one refresh) after they commit. It reports
// each failed refresh to onError, if given, and keeps going.
func (x *Index) Follow(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := x.Refresh(ctx); err != nil && ctx.Err() == nil && onError != nil {
				onError(err)
			}
		}
	}
}

// Stats reports the index's size and its high-water mark (the feed
// position it reads from next).
func (x *Index) Stats() (rows int, highWater int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rows, x.high
}
