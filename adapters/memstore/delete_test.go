package memstore_test

import (
	"testing"
	"time"

	"github.com/catsrv/catsrv/adapters/memstore"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/core/analytics/chatlog"
	"github.com/catsrv/catsrv/ports"
	"github.com/catsrv/catsrv/ports/porttest"
)

func TestInteractionEraserContract(t *testing.T) {
	porttest.TestInteractionEraser(t, func(*testing.T) porttest.Erasable {
		s := memstore.New()
		return porttest.Erasable{Log: s, Eraser: s, Reads: map[string]ports.Aggregator{"memory": s}, OnBatch: s.SetAfterDeleteBatch, DefaultBatch: memstore.DefaultDeleteBatch, Browser: s}
	})
}

// TestDeleteKeepsSequence checks that the chat log's sequence numbers
// (its cursors) survive a deletion.
func TestDeleteKeepsSequence(t *testing.T) {
	s := memstore.New()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var in []analytics.Interaction
	for k := range 4 {
		in = append(in, analytics.Interaction{Time: at.Add(time.Duration(k) * time.Hour), Cat: "c", EventKind: "api",
			Question: "q", Answer: "a", Topic: "t", Model: "m", Persona: "p", UserID: []string{"x", "y"}[k%2]})
	}
	if _, err := s.Append(t.Context(), analytics.Each(in)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteInteractions(t.Context(), analytics.Deletion{UserID: "x"}, 1); err != nil || n != 2 {
		t.Fatalf("DeleteInteractions = %d, %v; want 2", n, err)
	}
	l, err := s.List(t.Context(), analytics.Selection{Cat: "c"}, chatlog.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range l.Entries {
		seqs = append(seqs, e.Seq)
	}
	if len(seqs) != 2 || seqs[0] != 4 || seqs[1] != 2 {
		t.Errorf("sequence numbers %v, want [4 2]", seqs)
	}
}
