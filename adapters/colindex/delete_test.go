package colindex_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

// TestRebuildThenAppend deletes rows while appends the index has not read
// yet wait, then refreshes (a CAT rebuilt, then the new rows read), and
// appends again: the index must equal the reference after each step.
func TestRebuildThenAppend(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		m := newMemLog()
		idx := build(t, m)
		var ref []analytics.Interaction
		add := func(n int) {
			in := tiedLog(r, n)
			for k := range in {
				in[k].UserID = []string{"x", "y", "z"}[r.IntN(3)]
				in[k].Cat = []string{"c", "d"}[r.IntN(2)]
			}
			if _, err := m.Append(t.Context(), analytics.Each(in)); err != nil {
				t.Fatal(err)
			}
			for _, i := range in {
				ref = append(ref, i.Normalize())
			}
		}
		check := func(step string) {
			t.Helper()
			if err := idx.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, cat := range []string{"c", "d"} {
				q := analytics.Query{Cat: cat}
				got, err := idx.Answer(t.Context(), q, analytics.AllParts)
				if err != nil {
					t.Fatal(err)
				}
				want := analytics.CountAnswer(ref, q, analytics.AllParts)
				if got.Total != want.Total {
					t.Fatalf("seed %d, %s, CAT %s: total %d, reference %d", seed, step, cat, got.Total, want.Total)
				}
				for _, d := range analytics.Dimensions {
					g, w := slices.Clone(got.Groups[d]), slices.Clone(want.Groups[d])
					analytics.SortGroups(g)
					analytics.SortGroups(w)
					if !slices.Equal(g, w) {
						t.Fatalf("seed %d, %s, CAT %s, %v:\n got       %v\n reference %v", seed, step, cat, d, g, w)
					}
				}
			}
		}
		add(50 + r.IntN(100))
		check("first read")
		add(20 + r.IntN(100))
		d := analytics.Deletion{UserID: "x"}
		if _, err := m.DeleteInteractions(t.Context(), d, 0); err != nil {
			t.Fatal(err)
		}
		ref = slices.DeleteFunc(ref, d.Selects)
		check("after the deletion")
		add(1 + r.IntN(100))
		check("after the next append")
	}
}

// TestEraserContractLagging runs the deletion contract with appends the
// index reads only at the next refresh, as for another process's writes.
func TestEraserContractLagging(t *testing.T) {
	porttest.TestInteractionEraser(t, func(t *testing.T) porttest.Erasable {
		m := newMemLog()
		idx := build(t, m)
		return porttest.Erasable{
			Log: m, Eraser: m, Sync: idx.Refresh,
			Reads: map[string]ports.Aggregator{"memory": m, "index": idx},
		}
	})
}

// TestDeletionFeedContract holds the test feed to the contract the SQL
// store meets, so the index's tests over it mean something.
func TestDeletionFeedContract(t *testing.T) {
	porttest.TestDeletionFeed(t, func(*testing.T) porttest.DeletionFeedStore { return newMemLog() })
}
