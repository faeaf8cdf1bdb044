package colindex

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/errs"
)

// Index is the columnar index of one database's api interactions. Safe
// for concurrent use: queries share the read lock of mu; whatever changes
// the index (a refresh, a Hold, a rebuild) takes turns on turn, reads the
// database without mu and makes its change visible under one hold of it.
type Index struct {
	src Feed
	// dels is src's deletion feed, nil when its rows are never deleted;
	// delGen is the last deletion generation the index reflects (read
	// before the rows it holds).
	dels   Deletions
	delGen int64
	// rates is src's rating feed, nil when its rows' ratings never
	// change; rateGen is the last rating generation the index reflects
	// (read before the rows it holds). See ratings.go.
	rates   Ratings
	rateGen int64

	turn sync.Mutex

	mu   sync.RWMutex
	cats map[string]*catIndex
	high int64 // the feed position after the rows applied
	rows int
	// given are the rows the index counts before the feed gives them, by
	// id: those of the snapshot it started from that the feed gives again
	// (Snapshot), and those this process's writes handed over (Hold).
	// They are dropped when the feed gives them, and forgotten when their
	// CAT is rebuilt. Only turn's holder uses it.
	given map[int64]givenRow
	// held is len(given), for readers (FeedPosition): set under mu.
	held int

	// currentAt is when the last successful refresh began, in Unix
	// nanoseconds (0 before the first): every row committed before then
	// had been applied when it ended.
	currentAt atomic.Int64
}

// givenRow is a row the index holds before the feed gives it: its CAT
// and, for a row Hold took, the feed position at which the feed has given
// it (0 for a snapshot's row): one the position passes without giving it
// was deleted in between (see dropDeleted).
type givenRow struct {
	cat string
	at  int64
	// rated is the rating Hold counted in the CAT's rated index (0 for
	// none): with a rating feed, a held row's rating is counted once,
	// until the CAT's rated indexes are next rebuilt (see ratings.go).
	rated uint8
}

// Build reads every api interaction from the source (the database's
// Feed) into a new index: when the source also
// implements Snapshot, from one snapshot of the log and then
// the feed above it (see start), else from the whole feed.
func Build(ctx context.Context, src Feed) (*Index, error) {
	x := &Index{src: src, cats: map[string]*catIndex{}}
	x.dels, _ = src.(Deletions)
	x.rates, _ = src.(Ratings)
	if snap, ok := src.(Snapshot); ok {
		if err := x.start(ctx, snap); err != nil {
			return nil, err
		}
	}
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

// start fills the new index from a snapshot of the log: the deletion
// generation is read first, so a deletion that commits after it, even one
// the snapshot already reflects, is applied again by the next refresh
// (rebuilding the CAT, which changes nothing); the snapshot gives the
// rows of one state and the feed position of that state, from which
// Refresh goes on, dropping the rows the snapshot held that the feed
// gives again.
func (x *Index) start(ctx context.Context, snap Snapshot) error {
	if x.dels != nil {
		gen, _, err := x.dels.ReadDeletions(ctx, 0)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
		}
		x.delGen = gen
	}
	if x.rates != nil {
		gen, _, err := x.rates.ReadRatingChanges(ctx, 0)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
		}
		x.rateGen = gen
	}
	// With a rating feed, a snapshot's rows carry no rating: each CAT's
	// rated rows are read by the snapshot's position instead.
	b := batch{cats: map[string]*catDraft{}, ratings: x.rates == nil}
	high, given, err := snap.ReadSnapshot(ctx, func(r *analytics.FeedRow) error {
		b.add(x.cats, r)
		return nil
	})
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
	}
	b.high = high
	if x.rates != nil {
		if err := x.readRatedOf(ctx, &b, slices.Collect(maps.Keys(b.cats))); err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
		}
	}
	x.apply(&b)
	x.given = make(map[int64]givenRow, len(given))
	for id, cat := range given {
		x.given[id] = givenRow{cat: cat}
	}
	x.held = len(given)
	return nil
}

// catFeed is the feed of one CAT's rows up to an id: what rebuildCat
// reads.
type catFeed struct {
	src  Deletions
	cat  string
	upTo int64
}

func (f catFeed) ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error) {
	last := after
	err := f.src.ReadCat(ctx, f.cat, f.upTo, func(r *analytics.FeedRow) error {
		if r.ID <= after {
			return nil
		}
		last = r.ID
		return fn(r)
	})
	return last, err
}

// rebuildCat replaces the CAT's rows by a new read of those the source
// still holds up to the high-water mark (later ones come with the next
// read as usual), built beside the old ones and swapped in under one hold
// of the write lock: a query, which reads one CAT, sees the CAT before the
// deletion or after it. The CAT's given rows are forgotten: those above
// the mark come from the feed again. The caller holds turn.
func (x *Index) rebuildCat(ctx context.Context, cat string) error {
	y := &Index{src: catFeed{src: x.dels, cat: cat, upTo: x.high}, cats: map[string]*catIndex{}}
	if err := y.readApply(ctx, ratingChanges{}); err != nil {
		return err
	}
	c := y.cats[cat]
	if c != nil && x.rates != nil {
		rated, err := x.readRated(ctx, cat, x.high)
		if err != nil {
			return err
		}
		c.rated = rated
	}
	if c != nil {
		c.trim()
	}
	for id, g := range x.given {
		if g.cat == cat {
			delete(x.given, id)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.held = len(x.given)
	if old := x.cats[cat]; old != nil {
		x.rows -= old.at.len()
	}
	if c == nil {
		delete(x.cats, cat)
		return nil
	}
	x.cats[cat] = c
	x.rows += c.at.len()
	return nil
}

// Refresh applies the interactions stored since the last refresh, all
// that one read of the source returns (one snapshot of the database)
// becoming visible to queries at once, under one hold of the write lock,
// or, when the read fails, none (see draft.go).
//
// When the source reports deletions the index has not applied (a
// generation above its own), the refresh first rebuilds each CAT that
// lost rows from a read of its rows up to the high-water mark, made after
// the generation was read (rebuildCat).
func (x *Index) Refresh(ctx context.Context) error {
	x.turn.Lock()
	defer x.turn.Unlock()
	var changes ratingChanges
	if x.rates != nil {
		gen, cats, err := x.rates.ReadRatingChanges(ctx, x.rateGen)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
		}
		if gen > x.rateGen {
			changes = ratingChanges{gen: gen, cats: cats}
		}
	}
	if x.dels != nil {
		gen, cats, err := x.dels.ReadDeletions(ctx, x.delGen)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
		}
		if gen > x.delGen {
			for _, cat := range cats {
				if err := x.rebuildCat(ctx, cat); err != nil {
					return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed") // delGen unchanged: the next refresh rebuilds them again
				}
			}
			x.delGen = gen
		}
	}
	return x.readApply(ctx, changes)
}

// readApply applies the rows stored since the last refresh and, for the
// CATs whose ratings changed, their rated rows (Refresh, without the
// deletion check); the caller holds turn or owns x.
func (x *Index) readApply(ctx context.Context, changes ratingChanges) error {
	began := time.Now()
	b := batch{cats: map[string]*catDraft{}, ratings: true}
	high, err := x.src.ReadSince(ctx, x.high, func(r *analytics.FeedRow) error {
		if g, ok := x.given[r.ID]; ok {
			b.given = append(b.given, r.ID)
			if x.rates != nil && g.rated == 0 {
				// A held row's rating is counted when the feed gives it
				// (see ratings.go).
				b.addRated(x.cats, r)
			}
			return nil
		}
		b.add(x.cats, r)
		return nil
	})
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
	}
	b.high = high
	if err := x.readRatedOf(ctx, &b, changes.cats); err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
	}
	x.apply(&b)
	x.rateGen = max(x.rateGen, changes.gen)
	x.unrate(changes.cats)
	x.sortUnsorted()
	if err := x.dropDeleted(ctx); err != nil {
		return err
	}
	x.rank()
	x.currentAt.Store(began.UnixNano())
	return nil
}

// dropDeleted forgets the held rows the feed's position has passed
// without giving them: a deletion removed them after their commit, and a
// refresh applied it, before Hold took them. Their CATs are rebuilt from
// the database up to the position, which leaves them out. The caller
// holds turn.
func (x *Index) dropDeleted(ctx context.Context) error {
	if x.dels == nil { // a feed without deletions gives every row
		return nil
	}
	var cats []string
	for id, g := range x.given {
		if g.at > 0 && g.at <= x.high {
			delete(x.given, id)
			if !slices.Contains(cats, g.cat) {
				cats = append(cats, g.cat)
			}
		}
	}
	for _, cat := range cats {
		if err := x.rebuildCat(ctx, cat); err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
		}
	}
	return nil
}

// apply makes the batch's rows visible, under one hold of the write lock.
// The caller holds turn.
func (x *Index) apply(b *batch) {
	b.prepare()
	x.mu.Lock()
	defer x.mu.Unlock()
	b.apply(x.cats)
	x.high = max(x.high, b.high)
	x.rows += b.rows
	for _, id := range b.given {
		delete(x.given, id)
	}
	x.held = len(x.given)
}

// rank orders the entries refreshes and holds added to the dictionaries
// of CATs readers were using: the order is computed without the write
// lock and swapped in under it. Until then their lists order the new
// entries per query (see sortedGroups). The caller holds turn.
func (x *Index) rank() {
	type ranks struct {
		d              *dictionary
		byRank, byCode []uint32
	}
	var todo []ranks
	for _, c := range x.allCats() {
		for d := range c.dicts {
			if dict := &c.dicts[d]; dict.ranked < dict.len() {
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
	for _, c := range x.allCats() {
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
// position it reads from next). The index may count rows above the mark
// already (held, see FeedPosition).
func (x *Index) Stats() (rows int, highWater int64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rows, x.high
}

// FeedPosition reports the feed position the index reads from next and
// how many of the rows above it the index counts already (the rows this
// process's writes handed over, Hold, and those of the snapshot it
// started from): the rows it is behind by are the rows stored above the
// position less those.
func (x *Index) FeedPosition() (high int64, held int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.high, x.held
}

// CurrentAt reports when the last successful refresh began (the zero time
// before the first): every row committed before then was counted when
// that refresh ended, and the rows with an id above the high-water mark
// (Stats) are what the index is behind by. Read-only, for monitoring.
func (x *Index) CurrentAt() time.Time {
	if ns := x.currentAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}
