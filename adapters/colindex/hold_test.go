package colindex_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// holdingFeed is a memLog whose next ReadSince first runs hold: a Hold
// that comes while a refresh reads the feed.
type holdingFeed struct {
	*memLog
	hold func()
}

func (f *holdingFeed) ReadSince(ctx context.Context, after int64, fn func(*ports.FeedRow) error) (int64, error) {
	if h := f.hold; h != nil {
		f.hold = nil
		h()
	}
	return f.memLog.ReadSince(ctx, after, fn)
}

// committedOf is what a store tells of rows just appended to m: their
// feed rows with ids, and the position at which the feed has given them.
func committedOf(m *memLog, rows []analytics.Interaction) ports.Committed {
	m.mu.Lock()
	first := len(m.rows) - len(rows)
	m.mu.Unlock()
	c := ports.Committed{Complete: true}
	for k, i := range rows {
		i = i.Normalize()
		if !i.Counted() {
			continue
		}
		id := int64(first + k + 1)
		c.Rows = append(c.Rows, ports.FeedRow{ID: id, Micros: i.Time.UnixMicro(), Cat: []byte(i.Cat),
			Topic: []byte(i.Topic), Model: []byte(i.Model), Persona: []byte(i.Persona),
			QuestionID: []byte(i.QuestionID), Question: []byte(i.Question),
			AnswerID: []byte(i.AnswerID), Answer: []byte(i.Answer)})
		c.GivenAt = id
	}
	return c
}

// TestHeldRowsDeletedBeforeHold: rows a write committed are erased, and a
// refresh rebuilds their CAT for the erasure, before the write's Hold
// takes them (it comes while that refresh reads the feed): the index
// then holds rows the feed will never give. Once the feed's position
// passes them, the refresh rebuilds the CAT without them.
func TestHeldRowsDeletedBeforeHold(t *testing.T) {
	ctx := t.Context()
	m := newMemLog()
	f := &holdingFeed{memLog: m}
	r := rand.New(rand.NewPCG(3, 4))
	kept := tiedLog(r, 40)
	if _, err := m.Append(ctx, analytics.Each(kept)); err != nil {
		t.Fatal(err)
	}
	idx, err := colindex.Build(ctx, f)
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
	c := committedOf(m, erased)
	if _, err := m.DeleteInteractions(ctx, analytics.Deletion{UserID: "erased"}, 100); err != nil {
		t.Fatal(err)
	}
	f.hold = func() { idx.Hold(c) }
	if err := idx.Refresh(ctx); err != nil { // rebuilds for the erasure, then reads: the Hold comes
		t.Fatal(err)
	}
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
