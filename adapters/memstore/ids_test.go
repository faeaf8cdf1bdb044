package memstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
)

// TestInteractionIDFreedWhenRemoved: once interactions are gone (the
// deletions of retention and erasure remove them from the slice), their
// ids may be stored again.
func TestInteractionIDFreedWhenRemoved(t *testing.T) {
	s := memstore.New()
	i := analytics.Interaction{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Cat: "c", EventKind: "api",
		Question: "q", Answer: "a", Topic: "t", Model: "m", Persona: "p", InteractionID: "x"}
	other := i
	other.InteractionID = "y"
	for _, want := range []int{2, 0} {
		if n, err := s.Append(t.Context(), analytics.Each([]analytics.Interaction{i, other})); err != nil || n != want {
			t.Fatalf("Append = %d, %v; want %d", n, err, want)
		}
	}
	memstore.RemoveFirst(s) // as a deletion would: x is gone, y stays
	if n, err := s.Append(t.Context(), analytics.Each([]analytics.Interaction{i, other})); err != nil || n != 1 {
		t.Fatalf("after removing x: Append = %d, %v; want 1 (x again, not y)", n, err)
	}
}
