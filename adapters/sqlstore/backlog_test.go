package sqlstore_test

import (
	"testing"

	"github.com/catsrv/catsrv/core/analytics"
)

// TestCountSince: CountSince counts exactly the api rows ReadSince would
// still return after a mark, on every back end.
func TestCountSince(t *testing.T) {
	t.Parallel() // own stores only
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel() // a store of its own
			s := openStore(t, b.DSN(t))
			count := func(after int64) int64 {
				t.Helper()
				n, err := s.CountSince(t.Context(), after)
				if err != nil {
					t.Fatalf("CountSince(%d): %v", after, err)
				}
				return n
			}
			if n := count(0); n != 0 {
				t.Fatalf("CountSince on an empty store = %d, want 0", n)
			}
			in := sampleLog(40, 0) // three api rows in four
			mustAppend(t, s, in)
			var api int64
			for _, i := range in {
				if i.EventKind == analytics.EventKindAPI {
					api++
				}
			}
			if n := count(0); n != api {
				t.Fatalf("CountSince(0) = %d, want the %d api rows", n, api)
			}
			var ids []int64
			high, err := s.ReadSince(t.Context(), 0, func(r *analytics.FeedRow) error {
				ids = append(ids, r.ID)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if s.Dialect() == "sqlite" { // positions are ids there only
				if n := count(ids[9]); n != int64(len(ids)-10) {
					t.Errorf("CountSince after the 10th row = %d, want %d", n, len(ids)-10)
				}
			}
			if n := count(high); n != 0 {
				t.Errorf("CountSince(high-water mark) = %d, want 0", n)
			}
			mustAppend(t, s, sampleLog(8, 1))
			if n := count(high); n != 6 {
				t.Errorf("CountSince after 8 more rows (6 api) = %d, want 6", n)
			}
		})
	}
}
