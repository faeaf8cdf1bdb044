package colindex

import (
	"context"
	"sync"
	"time"

	"github.com/catsrv/catsrv/adapters/internal/listmemo"
	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

var _ ports.RollupStore = (*Index)(nil)

// chunkRows is how many rows a refresh applies per hold of the write lock,
// so that a large catch-up never stalls readers for long.
const chunkRows = 4096

// Index is the columnar index of one database's api interactions. Safe
// for concurrent use: queries share a read lock, refreshes take turns.
type Index struct {
	src Source

	refreshMu sync.Mutex // one refresh at a time; guards stage
	stage     staging
	unranked  bool // some dictionary has entries to rank (see updateRanks)

	mu   sync.RWMutex
	cats map[string]*catIndex
	high int64 // the highest id applied
	rows int
	// memo keeps the lists of one-pass counts (see memo.go); its
	// generation counts the changes to the rows.
	memo *listmemo.Memo[*onePass]
}

// Build reads every api interaction from the source into a new index.
func Build(ctx context.Context, src Source) (*Index, error) {
	x := &Index{src: src, cats: map[string]*catIndex{}, memo: newPassMemo()}
	if err := x.Refresh(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	for _, c := range x.cats {
		c.trim()
	}
	x.changed()
	x.mu.Unlock()
	return x, nil
}

// Refresh applies the interactions stored since the last refresh.
func (x *Index) Refresh(ctx context.Context) error {
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	x.mu.RLock()
	after := x.high
	x.mu.RUnlock()
	x.stage.reset()
	_, err := x.src.ReadSince(ctx, after, func(r *Row) error {
		x.stage.add(r)
		if x.stage.len() >= chunkRows {
			x.apply(false)
		}
		return nil
	})
	x.apply(true)
	x.sortUnsorted()
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
	}
	return nil
}

// apply moves the staged rows into the index under the write lock; last
// is set for a refresh's last chunk, after which every entry is ranked.
func (x *Index) apply(last bool) {
	if x.stage.len() == 0 && (!last || !x.unranked) {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stage.len() > 0 {
		x.changed()
	}
	for k := range x.stage.len() {
		r := x.stage.row(k)
		c, ok := x.cats[string(r.Cat)]
		if !ok {
			c = newCatIndex()
			x.cats[string(r.Cat)] = c
		}
		c.add(r)
		x.high = max(x.high, r.ID)
		x.rows++
	}
	x.stage.reset()
	x.unranked = false
	for _, c := range x.cats {
		for d := range c.dicts {
			c.dicts[d].updateRanks(last)
			x.unranked = x.unranked || c.dicts[d].ranked < c.dicts[d].len()
		}
	}
}

// changed bumps the generation, under the write lock, after the rows
// changed: no list counted before is served after.
func (x *Index) changed() {
	x.memo.Invalidate()
}

// sortUnsorted restores time order in the CATs that received older rows
// than they held. Until then their queries check each row's time.
func (x *Index) sortUnsorted() {
	x.mu.RLock()
	var todo []*catIndex
	for _, c := range x.cats {
		if !c.sorted {
			todo = append(todo, c)
		}
	}
	x.mu.RUnlock()
	x.mu.Lock()
	for _, c := range x.cats {
		c.shifted = 0
	}
	x.mu.Unlock()
	for _, c := range todo {
		x.mu.Lock()
		c.sortByTime()
		x.changed()
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

// Stats reports the index's size and its high-water mark.
func (x *Index) Stats() (rows int, highWater int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rows, x.high
}
