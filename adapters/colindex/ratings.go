package colindex

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/catsrv/catsrv/core/analytics"
)

// A row's rating changes after the feed gives it, so the index keeps
// ratings apart from the rows: each CAT has two rated indexes
// (catIndex.rated), catIndexes of its rows rated up and down, counted
// with the same plans as the CAT. With a rating feed (Ratings), a CAT's
// rated indexes hold the rated rows among those the feed has given by the
// index's position: a refresh reads the rating generation before the
// rows, and rebuilds the rated indexes of each CAT whose ratings changed
// from ReadRated at the position it reaches, swapped in with its rows.
// Rows the index counts before the feed gives them (a snapshot's, which
// carry no rating, and those Hold took) are rated when the feed gives
// them, once: ReadRated by an earlier position leaves them out. A row
// Hold took is rated at once, so a writer reads its rows' feedback; the
// feed's read then leaves its rating alone unless the CAT's rated
// indexes were rebuilt in between (givenRow.rated). A
// deletion's rebuild of a CAT rebuilds its rated indexes too. Without a
// rating feed, a row's rating is the one it comes with.

// ratingChanges is the rating generation a refresh read and the CATs
// whose ratings changed since the index's (none when it is not above).
type ratingChanges struct {
	gen  int64
	cats []string
}

// readRated reads the CAT's rated rows the feed had given by upTo into
// two new rated indexes (nil where none has the rating).
func (x *Index) readRated(ctx context.Context, cat string, upTo int64) ([2]*catIndex, error) {
	var drafts [2]*catDraft
	err := x.rates.ReadRated(ctx, cat, upTo, func(r *analytics.FeedRow) error {
		if r.Rating != analytics.RatingCodeUp && r.Rating != analytics.RatingCodeDown {
			return nil
		}
		k := r.Rating - 1
		if drafts[k] == nil {
			drafts[k] = newRatedDraft(nil)
		}
		addRatedRow(drafts[k], r)
		return nil
	})
	var out [2]*catIndex
	if err != nil {
		return out, err
	}
	for k, cd := range drafts {
		if cd != nil {
			cd.c.finishFresh()
			cd.c.trim()
			out[k] = cd.c
		}
	}
	return out, nil
}

// readRatedOf reads the rated rows of the CATs by the batch's position
// into the batch's newRated, each CAT's in a goroutine of its own (the
// reads are the database's work and the drafts' building ours).
func (x *Index) readRatedOf(ctx context.Context, b *batch, cats []string) error {
	rated := make([][2]*catIndex, len(cats))
	errs := make([]error, len(cats))
	var wg sync.WaitGroup
	for k, cat := range cats {
		wg.Go(func() { rated[k], errs[k] = x.readRated(ctx, cat, b.high) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for k, cat := range cats {
		if b.newRated == nil {
			b.newRated = map[string][2]*catIndex{}
		}
		b.newRated[cat] = rated[k]
	}
	return nil
}

// unrate notes that the rated indexes of the CATs were rebuilt: they
// leave out the ratings of their held rows. The caller holds turn.
func (x *Index) unrate(cats []string) {
	if len(cats) == 0 {
		return
	}
	for id, g := range x.given {
		if g.rated != 0 && slices.Contains(cats, g.cat) {
			g.rated = 0
			x.given[id] = g
		}
	}
}

// allCats returns the index's CATs and their rated indexes.
func (x *Index) allCats() []*catIndex {
	out := make([]*catIndex, 0, len(x.cats))
	for _, c := range x.cats {
		out = append(out, c)
		for _, r := range c.rated {
			if r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}
