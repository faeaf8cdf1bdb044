package colindex_test

import (
	"math/rand/v2"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
)

// committedOf is what a store tells of rows just appended to m: their
// feed rows with ids, and the position at which the feed has given them.
func committedOf(m *memLog, rows []analytics.Interaction) (held []analytics.FeedRow, givenAt int64) {
	m.mu.Lock()
	first := len(m.rows) - len(rows)
	m.mu.Unlock()
	for k, i := range rows {
		i = i.Normalize()
		if !i.Counted() {
			continue
		}
		id := int64(first + k + 1)
		held = append(held, feedRow(id, i))
		givenAt = id
	}
	return held, givenAt
}

// TestHeldRowsDeletedBeforeHold: rows a write committed are erased, and a
// refresh applies the erasure and reads past them, before the write's
// Hold takes them: Hold must not count rows the feed will never give.
func TestHeldRowsDeletedBeforeHold(t *testing.T) {
	ctx := t.Context()
	m := newMemLog()
	r := rand.New(rand.NewPCG(3, 4))
	kept := tiedLog(r, 40)
	if _, err := m.Append(ctx, analytics.Each(kept)); err != nil {
		t.Fatal(err)
	}
	idx, err := colindex.Build(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	erased := tiedLog(r, 12)
	for k := range erased {
		erased[k].UserID = "erased"
	}
	if _, err := m.Append(ctx, analytics.Each(erased)); err != nil {
		t.Fatal(err)
	}
	held, givenAt := committedOf(m, erased)
	if _, err := m.DeleteInteractions(ctx, analytics.Deletion{UserID: "erased"}, 100); err != nil {
		t.Fatal(err)
	}
	if err := idx.Refresh(ctx); err != nil { // rebuilds for the erasure, then reads past the rows
		t.Fatal(err)
	}
	idx.Hold(held, givenAt, true)
	sel := analytics.Selection{Cat: "c"}
	later := tiedLog(r, 5)
	if _, err := m.Append(ctx, analytics.Each(later)); err != nil {
		t.Fatal(err)
	}
	if err := idx.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	remain := append(append([]analytics.Interaction{}, kept...), later...)
	if got, want := totalOf(t, idx, sel), analytics.CountTotal(remain, sel); got != want {
		t.Fatalf("Total = %d, want %d (the erased rows held before the feed passed them)", got, want)
	}
}
