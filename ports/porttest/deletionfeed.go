package porttest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// DeletionFeedStore is a log whose rows can be deleted and followed: what
// a column index follows.
type DeletionFeedStore interface {
	ports.InteractionLog
	ports.InteractionEraser
	// The feed the column index follows (colindex.Feed, colindex.Deletions).
	ReadSince(ctx context.Context, after int64, fn func(*analytics.FeedRow) error) (int64, error)
	ReadDeletions(ctx context.Context, after int64) (generation int64, cats []string, err error)
	ReadCat(ctx context.Context, cat string, upTo int64, fn func(*analytics.FeedRow) error) error
}

// TestDeletionFeed runs the contract of the deletion feed
// (colindex.Deletions): each deletion that removes api rows raises the
// generation and names the CATs that lost them (a deletion of other event
// kinds only, or of nothing, need not);
// ReadCat gives one CAT's remaining api rows among those ReadSince had
// given by a position, in id order, and none committed after it; rows
// appended after a deletion come after the position read before it.
func TestDeletionFeed(t *testing.T, open func(t *testing.T) DeletionFeedStore) {
	s := open(t)
	ctx := t.Context()
	log := mixedLog()
	for k := range log {
		log[k] = withCat(log[k], []string{catAlpha, catBeta}[k%2])
	}
	if _, err := s.Append(ctx, analytics.Each(log)); err != nil {
		t.Fatal(err)
	}
	gen0, cats, err := s.ReadDeletions(ctx, 0)
	if err != nil || len(cats) != 0 {
		t.Fatalf("ReadDeletions before any deletion = %d, %v, %v; want no CAT", gen0, cats, err)
	}
	given := map[int64]bool{} // the ids ReadSince gave
	follow := func(after int64) int64 {
		t.Helper()
		next, err := s.ReadSince(ctx, after, func(r *analytics.FeedRow) error { given[r.ID] = true; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	high := follow(0)
	readCat := func(cat string, upTo int64) []int64 {
		t.Helper()
		var ids []int64
		if err := s.ReadCat(ctx, cat, upTo, func(r *analytics.FeedRow) error {
			if string(r.Cat) != cat || !given[r.ID] {
				t.Errorf("ReadCat(%s, %d) gave row %d of %s", cat, upTo, r.ID, r.Cat)
			}
			ids = append(ids, r.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	alphaBefore := readCat(catAlpha, high)
	if len(alphaBefore) == 0 || !slices.IsSorted(alphaBefore) {
		t.Fatalf("ReadCat(alpha) = %v, want its api rows in id order", alphaBefore)
	}

	// Deleting alpha's rows of day 0 (the newest ids among them too).
	if _, err := s.DeleteInteractions(ctx, analytics.Deletion{Cat: catAlpha, Before: day(1)}, 0); err != nil {
		t.Fatal(err)
	}
	gen1, cats, err := s.ReadDeletions(ctx, gen0)
	if err != nil || gen1 <= gen0 || !slices.Equal(cats, []string{catAlpha}) {
		t.Fatalf("ReadDeletions(%d) = %d, %v, %v; want a higher generation naming alpha", gen0, gen1, cats, err)
	}
	if again, cats, err := s.ReadDeletions(ctx, gen1); err != nil || again != gen1 || len(cats) != 0 {
		t.Errorf("ReadDeletions(%d) = %d, %v, %v; want nothing new", gen1, again, cats, err)
	}
	alphaAfter := readCat(catAlpha, high)
	if len(alphaAfter) >= len(alphaBefore) {
		t.Errorf("ReadCat(alpha) after the deletion = %v, before %v", alphaAfter, alphaBefore)
	}
	// A row committed after the position is not ReadCat's up to it, and
	// is once the follower has read past it.
	if _, err := s.Append(ctx, analytics.Each([]analytics.Interaction{withCat(event(day(3), "t", "m", "p", "q", "a"), catAlpha)})); err != nil {
		t.Fatal(err)
	}
	if got := readCat(catAlpha, high); !slices.Equal(got, alphaAfter) {
		t.Errorf("ReadCat(alpha, %d) after an append = %v, want %v (not the new row)", high, got, alphaAfter)
	}
	high = follow(high)
	if got := readCat(catAlpha, high); len(got) != len(alphaAfter)+1 {
		t.Errorf("ReadCat(alpha, %d) once the follower read the new row = %v, want %v and it", high, got, alphaAfter)
	}

	// Deleting everything, then appending: the new ids are above high.
	if _, err := s.DeleteInteractions(ctx, analytics.Deletion{Before: day(30)}, 0); err != nil {
		t.Fatal(err)
	}
	gen2, cats, err := s.ReadDeletions(ctx, gen1)
	if err != nil || gen2 <= gen1 || !slices.Equal(cats, []string{catAlpha, catBeta}) {
		t.Fatalf("ReadDeletions(%d) = %d, %v, %v; want a higher generation naming alpha and beta", gen1, gen2, cats, err)
	}
	if _, err := s.Append(ctx, analytics.Each([]analytics.Interaction{event(day(5).Add(time.Hour), "t", "m", "p", "q", "a")})); err != nil {
		t.Fatal(err)
	}
	var fresh []int64
	if _, err := s.ReadSince(ctx, high, func(r *analytics.FeedRow) error { fresh = append(fresh, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(fresh) != 1 {
		t.Errorf("ReadSince(%d) after deleting everything and appending one row = %v, want that row", high, fresh)
	}
}
