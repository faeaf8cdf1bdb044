package colindex_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/catsrv/catsrv/adapters/colindex"
	"github.com/catsrv/catsrv/core/analytics"
	"github.com/catsrv/catsrv/ports"
)

// gatedFeed is a memLog whose reads, once gated, each announce
// themselves on entered (after taking their rows) and wait for release.
type gatedFeed struct {
	*memLog
	gated   atomic.Bool
	reads   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (g *gatedFeed) ReadSince(ctx context.Context, after int64, fn func(*ports.FeedRow) error) (int64, error) {
	if !g.gated.Load() {
		return g.memLog.ReadSince(ctx, after, fn)
	}
	g.reads.Add(1)
	var rows []ports.FeedRow
	next, err := g.memLog.ReadSince(ctx, after, func(r *ports.FeedRow) error {
		rows = append(rows, *r)
		return nil
	})
	g.entered <- struct{}{}
	<-g.release
	for k := range rows {
		if err := fn(&rows[k]); err != nil {
			return after, err
		}
	}
	return next, err
}

// TestCatchUpSharesRefreshes: callers that come while a refresh runs are
// not answered by it (it may have read before their rows committed) but
// by the next one, which they share.
func TestCatchUpSharesRefreshes(t *testing.T) {
	ctx := t.Context()
	g := &gatedFeed{memLog: newMemLog(), entered: make(chan struct{}), release: make(chan struct{})}
	idx, err := colindex.Build(ctx, g)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	first, second := tiedLog(r, 50), tiedLog(r, 70)
	if _, err := g.Append(ctx, analytics.Each(first)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	g.gated.Store(true)
	sel := analytics.Selection{Cat: "c"}

	a := make(chan error, 1)
	go func() { a <- idx.CatchUp(ctx) }()
	<-g.entered // the first refresh has read: only the first rows

	// Later writers commit, then catch up while that refresh runs.
	if _, err := g.Append(ctx, analytics.Each(second)); err != nil {
		t.Fatalf("Append: %v", err)
	}
	const later = 5
	done := make(chan error, later)
	for range later {
		go func() { done <- idx.CatchUp(ctx) }()
	}
	for idx.CatchUpWaiting() < later {
		select {
		case err := <-done:
			t.Fatalf("a later caller returned (%v) before any refresh that began after it", err)
		default:
		}
		runtime.Gosched()
	}

	g.release <- struct{}{}
	if err := <-a; err != nil {
		t.Fatalf("first CatchUp: %v", err)
	}
	if n, want := totalOf(t, idx, sel), analytics.CountTotal(first, sel); n != want {
		t.Errorf("Total after the first refresh = %d, want %d (the first rows only)", n, want)
	}
	<-g.entered // the shared second refresh has read
	select {
	case err := <-done:
		t.Fatalf("a later caller returned (%v) before the refresh it waits for ended", err)
	default:
	}
	g.release <- struct{}{}
	for range later {
		if err := <-done; err != nil {
			t.Fatalf("later CatchUp: %v", err)
		}
	}
	if n, want := totalOf(t, idx, sel), analytics.CountTotal(append(first, second...), sel); n != want {
		t.Errorf("Total after the later callers returned = %d, want %d", n, want)
	}
	if n := g.reads.Load(); n != 2 {
		t.Errorf("refreshes for %d callers = %d, want 2 (the later ones shared one)", later+1, n)
	}
}
