package colindex

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catsrv/catsrv/core/errs"
	"github.com/catsrv/catsrv/ports"
)

// Index is the columnar index of one database's api interactions. Safe
// for concurrent use: queries share a read lock, refreshes take turns.
type Index struct {
	src ports.InteractionFeed
	// dels is src's deletion feed, nil when its rows are never deleted;
	// delGen is the last deletion generation the index reflects (read
	// before the rows it holds).
	dels   ports.DeletionFeed
	delGen int64

	// readMu makes refreshes take turns; changeMu is held by the one
	// goroutine changing the index (a refresh's apply, a Hold, a
	// rebuild): see Refresh.
	readMu   sync.Mutex
	changeMu sync.Mutex

	mu   sync.RWMutex
	cats map[string]*catIndex
	high int64 // the feed position after the rows applied
	rows int
	// given are the rows the snapshot the index was built from held
	// that the feed will give again (ports.FeedSnapshot), and the rows
	// this process's writes handed over (Hold), by id: dropped when they
	// come. Only changeMu's holder uses it.
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
// it (ports.Committed.GivenAt; 0 for a snapshot's row): one the position
// passes without giving it was deleted in between (see dropDeleted).
type givenRow struct {
	cat string
	at  int64
}

// Build reads every api interaction from the source (the database's
// ports.InteractionFeed) into a new index: when the source also
// implements ports.FeedSnapshot, from one snapshot of the log and then
// the feed above it (see start), else from the whole feed.
func Build(ctx context.Context, src ports.InteractionFeed) (*Index, error) {
	x := &Index{src: src, cats: map[string]*catIndex{}}
	x.dels, _ = src.(ports.DeletionFeed)
	if snap, ok := src.(ports.FeedSnapshot); ok {
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
func (x *Index) start(ctx context.Context, snap ports.FeedSnapshot) error {
	if x.dels != nil {
		gen, _, err := x.dels.ReadDeletions(ctx, 0)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
		}
		x.delGen = gen
	}
	b := batch{cats: map[string]*catDraft{}, put: newPutter()}
	high, given, err := snap.ReadSnapshot(ctx, func(r *ports.FeedRow) error {
		b.add(x.cats, r)
		return nil
	})
	b.put.wait()
	b.put = nil
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index build failed")
	}
	b.high = high
	b.prepare()
	x.apply(&b)
	if len(given) > 0 {
		x.given = make(map[int64]givenRow, len(given))
		for id, cat := range given {
			x.given[id] = givenRow{cat: cat}
		}
		x.held = len(given)
	}
	return nil
}

// catFeed is the feed of one CAT's rows up to an id: what rebuildCat
// reads.
type catFeed struct {
	src  ports.DeletionFeed
	cat  string
	upTo int64
}

func (f catFeed) ReadSince(ctx context.Context, after int64, fn func(*ports.FeedRow) error) (int64, error) {
	last := after
	err := f.src.ReadCat(ctx, f.cat, f.upTo, func(r *ports.FeedRow) error {
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
// deletion or after it. The caller holds changeMu.
func (x *Index) rebuildCat(ctx context.Context, cat string) error {
	y := &Index{src: catFeed{src: x.dels, cat: cat, upTo: x.high}, cats: map[string]*catIndex{}}
	if err := y.readApply(ctx); err != nil {
		return err
	}
	c := y.cats[cat]
	if c != nil {
		c.trim()
	}
	for id, g := range x.given {
		if g.cat == cat { // not in the rebuilt CAT (above its mark): the feed gives them again
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
// or, when the read fails, none (see draft.go). Refreshes take turns
// (readMu); the database is read without changeMu, so that a Hold (a
// write of this process) does not wait for the read: the rows of a short
// read are kept aside and taken in under changeMu, those of a long one
// (past readAside rows) from then on under it. Only changeMu's holder
// changes the index, so it reads the index without the lock until it
// applies.
//
// When the source reports deletions the index has not applied (a
// ports.DeletionFeed generation above its own), the refresh first
// rebuilds each CAT that lost rows from a new read of its rows up to the
// high-water mark, made after the generation was read, and swaps it in
// under one hold of the write lock (rebuildCat): queries see a CAT before
// the deletion or after it, never a part.
func (x *Index) Refresh(ctx context.Context) error {
	x.readMu.Lock()
	defer x.readMu.Unlock()
	if x.dels != nil {
		gen, cats, err := x.dels.ReadDeletions(ctx, x.delGen)
		if err != nil {
			return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
		}
		if gen > x.delGen {
			// Before the first read nothing is held, so nothing to forget.
			if x.high > 0 {
				if err := x.rebuildCats(ctx, cats); err != nil {
					return err // delGen unchanged: the next refresh rebuilds them again
				}
			}
			x.delGen = gen
		}
	}
	return x.readApply(ctx)
}

// rebuildCats rebuilds the CATs (rebuildCat) under changeMu.
func (x *Index) rebuildCats(ctx context.Context, cats []string) error {
	x.changeMu.Lock()
	defer x.changeMu.Unlock()
	for _, cat := range cats {
		if err := x.rebuildCat(ctx, cat); err != nil {
			return err
		}
	}
	return nil
}

// readApply applies the rows stored since the last refresh (Refresh,
// without the deletion check); the caller holds readMu or owns x.
func (x *Index) readApply(ctx context.Context) error {
	began := time.Now()
	b, err := x.read(ctx)
	if err != nil {
		return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
	}
	defer x.changeMu.Unlock()
	if b.rows == 0 {
		// Nothing new, but the position may have moved past transactions
		// that wrote no api rows.
		x.mu.Lock()
		x.high = max(x.high, b.high)
		for _, id := range b.given {
			delete(x.given, id)
		}
		x.held = len(x.given)
		x.mu.Unlock()
	} else {
		b.prepare()
		x.apply(&b)
		x.sortUnsorted()
	}
	if err := x.dropDeleted(ctx); err != nil {
		return err
	}
	x.rank()
	x.currentAt.Store(began.UnixNano())
	return nil
}

// dropDeleted forgets the held rows the feed's position has passed
// without giving them: a deletion removed them after their commit and
// before Hold took them, and a refresh applied that deletion in between
// (on PostgreSQL, where a deletion need not wait for Hold). Their CATs
// are rebuilt from the database up to the position, which leaves them
// out. The caller holds changeMu.
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
		if err := x.rebuildCat(ctx, cat); err != nil { // it counts held anew
			return errs.Wrap(errs.KindUnavailable, err, "column index refresh failed")
		}
	}
	return nil
}

// readAside is how many rows a refresh reads before it takes changeMu:
// a longer read (a catch-up after an import by another process) keeps
// Hold waiting from then on rather than its rows in memory twice.
const readAside = 8192

// read reads the interactions stored since the last refresh into a batch,
// without the rows the index already holds (given). When it returns nil
// the caller holds changeMu (and must release it); on an error it does
// not.
func (x *Index) read(ctx context.Context) (batch, error) {
	b := batch{cats: map[string]*catDraft{}}
	var (
		aside  []ports.FeedRow
		locked bool
	)
	take := func(r *ports.FeedRow) {
		if _, ok := x.given[r.ID]; ok {
			b.given = append(b.given, r.ID)
			return
		}
		b.add(x.cats, r)
	}
	next, err := x.src.ReadSince(ctx, x.high, func(r *ports.FeedRow) error {
		if !locked {
			if len(aside) < readAside {
				aside = append(aside, keepRow(r))
				return nil
			}
			x.changeMu.Lock()
			locked = true
			for i := range aside {
				take(&aside[i])
			}
			aside = nil
		}
		take(r)
		return nil
	})
	if err != nil {
		if locked {
			x.changeMu.Unlock()
		}
		return batch{}, err
	}
	if !locked {
		x.changeMu.Lock()
		for i := range aside {
			take(&aside[i])
		}
	}
	b.high = next
	return b, nil
}

// keepRow copies a row the feed gives (its bytes are the feed's only
// during the call) into one allocation of its own.
func keepRow(r *ports.FeedRow) ports.FeedRow {
	buf := make([]byte, 0, len(r.Cat)+len(r.Topic)+len(r.Model)+len(r.Persona)+
		len(r.QuestionID)+len(r.Question)+len(r.AnswerID)+len(r.Answer))
	field := func(b []byte) []byte {
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	k := *r
	k.Cat, k.Topic, k.Model, k.Persona = field(r.Cat), field(r.Topic), field(r.Model), field(r.Persona)
	k.QuestionID, k.Question = field(r.QuestionID), field(r.Question)
	k.AnswerID, k.Answer = field(r.AnswerID), field(r.Answer)
	return k
}

// apply makes the batch's rows visible, under one hold of the write lock.
func (x *Index) apply(b *batch) {
	x.mu.Lock()
	defer x.mu.Unlock()
	b.apply(x.cats)
	if b.high > x.high { // only refreshes move it (Hold reads it under changeMu alone)
		x.high = b.high
	}
	x.rows += b.rows
	for _, id := range b.given {
		delete(x.given, id)
	}
	x.held = len(x.given)
}

// rank orders the entries refreshes and holds added to the dictionaries
// of CATs readers were using: the order is computed without the write
// lock and swapped in under it. Until then their lists order the new
// entries per query (see sortedGroups). The caller holds changeMu.
func (x *Index) rank() {
	type ranks struct {
		d              *dictionary
		byRank, byCode []uint32
	}
	var todo []ranks
	for _, c := range x.cats {
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
